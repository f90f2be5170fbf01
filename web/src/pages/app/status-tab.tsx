import { useApi } from '../../api.ts';
import { Badge, type BadgeTone } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { dateTime, relativeTime } from '../../format/time.ts';
import type { App, AppStatus, ContainerStatus, Probe } from './types.ts';

const HEALTH_TONES: Record<string, BadgeTone> = { healthy: 'good', starting: 'info', unhealthy: 'bad' };

function ContainerRows(props: { containers: ContainerStatus[] }) {
    return (
        <div class="table-scroll">
            <table class="table">
                <caption class="table-caption">Containers</caption>
                <thead>
                    <tr>
                        <th scope="col">Service</th>
                        <th scope="col">State</th>
                        <th scope="col">Health</th>
                        <th scope="col">Restarts</th>
                        <th scope="col">Image</th>
                        <th scope="col">Started</th>
                        <th scope="col">Ports</th>
                    </tr>
                </thead>
                <tbody>
                    {props.containers.map((container) => (
                        <tr key={container.id} data-service={container.service}>
                            <th scope="row">{container.service}</th>
                            <td>
                                <Badge tone={container.state === 'running' ? 'good' : container.state === 'exited' ? 'bad' : 'neutral'}>
                                    {container.state}
                                </Badge>
                                {container.exitCode !== null && container.state !== 'running' ? ` (exit ${container.exitCode})` : ''}
                            </td>
                            <td>
                                {container.health ? (
                                    <Badge tone={HEALTH_TONES[container.health] ?? 'neutral'}>{container.health}</Badge>
                                ) : (
                                    'no health check'
                                )}
                            </td>
                            <td>{container.restarts}</td>
                            <td>
                                <code>{container.image}</code>
                            </td>
                            <td>{container.startedAt ? relativeTime(container.startedAt) : 'not started'}</td>
                            <td>{container.ports.map((port) => `${port.hostIp}:${port.hostPort}→${port.containerPort}`).join(', ')}</td>
                        </tr>
                    ))}
                </tbody>
            </table>
        </div>
    );
}

function ProbeLine(props: { scheme: string; probe: Probe | null }) {
    if (!props.probe) {
        return (
            <li>
                <strong>{props.scheme}</strong>: not served (no certificate yet)
            </li>
        );
    }

    const { probe } = props;
    const { ok } = probe;
    return (
        <li data-probe={props.scheme}>
            <strong>{props.scheme}</strong>: <Badge tone={ok ? 'good' : 'bad'}>{probe.statusCode ?? 'no answer'}</Badge> in {probe.ms} ms
            from <code>{probe.url}</code>
            {probe.location ? ` → ${probe.location}` : ''}
            {probe.error ? <span class="error-text"> {probe.error}</span> : null}
        </li>
    );
}

/** Containers, health, the HTTP probe through nginx and the certificate's expiry (`GET /api/apps/{name}/status`). */
export function StatusTab(props: { app: App }) {
    const status = useApi<AppStatus>(`/api/apps/${encodeURIComponent(props.app.name)}/status`);
    if (props.app.state === 'draft') {
        return <p>The app has not been deployed yet: nothing runs.</p>;
    }

    return (
        <div class="status">
            <div class="tab-toolbar">
                <Button busy={status.loading} onClick={status.reload}>
                    Refresh
                </Button>
            </div>
            {status.error ? <ErrorText error={status.error} /> : null}
            {!status.data ? (
                status.loading ? (
                    <Spinner label="Asking the Docker engine and nginx…" />
                ) : null
            ) : (
                <>
                    {status.data.containers.length === 0 ? (
                        <p>No container of this app exists.</p>
                    ) : (
                        <ContainerRows containers={status.data.containers} />
                    )}
                    <h3>Through nginx</h3>
                    <ul class="probes">
                        <ProbeLine scheme="HTTP" probe={status.data.probe.http} />
                        <ProbeLine scheme="HTTPS" probe={status.data.probe.https} />
                    </ul>
                    <h3>Certificate</h3>
                    {status.data.certificate ? (
                        <p class={status.data.certificate.daysLeft < 14 ? 'certificate certificate-soon' : 'certificate'}>
                            Issued by {status.data.certificate.issuer} for {status.data.certificate.names.join(', ')}; expires{' '}
                            {dateTime(status.data.certificate.notAfter)} (
                            <strong>
                                {status.data.certificate.daysLeft} day{status.data.certificate.daysLeft === 1 ? '' : 's'} left
                            </strong>
                            ).
                        </p>
                    ) : (
                        <p>{status.data.certificateError ?? 'No certificate yet.'}</p>
                    )}
                </>
            )}
        </div>
    );
}
