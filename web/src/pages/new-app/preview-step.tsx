import { Badge, type BadgeTone } from '../../components/Badge.tsx';
import { Findings } from '../../editors/findings.tsx';
import type { PlanAction, Preview } from '../app/types.ts';

const ACTION_TONES: Record<PlanAction, BadgeTone> = {
    create: 'info',
    update: 'warning',
    unchanged: 'neutral',
    obtain: 'info',
    keep: 'neutral',
    'not managed': 'neutral',
};

function Action(props: { action: PlanAction }) {
    return <Badge tone={ACTION_TONES[props.action]}>{props.action}</Badge>;
}

function PlanTable(props: { caption: string; rows: Array<{ what: string; detail?: string; action: PlanAction }> }) {
    if (props.rows.length === 0) {
        return null;
    }

    return (
        <table class="table plan-table">
            <caption>{props.caption}</caption>
            <thead>
                <tr>
                    <th scope="col">What</th>
                    <th scope="col">Detail</th>
                    <th scope="col">Action</th>
                </tr>
            </thead>
            <tbody>
                {props.rows.map((row) => (
                    <tr key={`${row.what} ${row.detail ?? ''}`}>
                        <td>
                            <code>{row.what}</code>
                        </td>
                        <td>{row.detail ?? ''}</td>
                        <td>
                            <Action action={row.action} />
                        </td>
                    </tr>
                ))}
            </tbody>
        </table>
    );
}

export interface PreviewViewProps {
    preview: Preview;
    accepted: boolean;
    onAcceptedChange: (accepted: boolean) => void;
}

/** What a deploy would create or change, the files it would write (secrets masked), lint and availability. */
export function PreviewView(props: PreviewViewProps) {
    const { plan, files, lint, availability } = props.preview;
    return (
        <div class="preview">
            <PlanTable
                caption="Containers"
                rows={plan.containers.map((container) => ({
                    what: container.container,
                    detail: `service ${container.service}, image ${container.image ?? '(none)'}`,
                    action: container.action,
                }))}
            />
            <PlanTable
                caption="Files, site, networks, volumes, certificate and DNS"
                rows={[
                    ...plan.files.map((file) => ({ what: file.path, detail: `${file.kind} file`, action: file.action })),
                    // The site is one of the files too, when the plan lists it there.
                    ...(plan.files.some((file) => file.path === plan.site.path)
                        ? []
                        : [{ what: plan.site.path, detail: 'nginx site', action: plan.site.action }]),
                    ...plan.networks.map((network) => ({ what: network.name, detail: 'network', action: network.action })),
                    ...plan.volumes.map((volume) => ({ what: volume.name, detail: 'volume', action: volume.action })),
                    { what: plan.certificate.domain, detail: 'certificate', action: plan.certificate.action },
                    { what: plan.dns.record, detail: 'DNS record', action: plan.dns.action },
                ]}
            />
            {plan.access.length > 0 ? (
                <PlanTable
                    caption="At the identity provider"
                    rows={plan.access.map((object) => ({ what: object.name, detail: object.detail, action: object.action }))}
                />
            ) : (
                <p class="field-hint">No identity provider is connected: nothing is made there, and the app is public.</p>
            )}
            <h3>Lint</h3>
            <Findings subject="The draft" findings={lint} accepted={props.accepted} onAcceptedChange={props.onAcceptedChange} />
            <h3>Availability</h3>
            <ul class="availability-checks">
                {Object.entries(availability.checks).map(([key, check]) => (
                    <li key={key}>
                        <strong>{key}</strong>: {check.reason}
                    </li>
                ))}
            </ul>
            <h3>Files the deploy writes</h3>
            {files.map((file) => (
                <details key={file.path} class="file-view">
                    <summary>
                        <code>{file.path}</code> {file.masked ? <Badge tone="neutral">values masked</Badge> : null}
                    </summary>
                    <pre tabIndex={0}>{file.content}</pre>
                </details>
            ))}
        </div>
    );
}
