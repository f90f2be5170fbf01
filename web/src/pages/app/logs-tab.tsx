import { useId, useState } from 'preact/hooks';

import { useApi } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import type { App, ContainerLogs } from './types.ts';

const TAILS = [50, 200, 1000, 5000];

/** Each container's last lines, stderr marked (`GET /api/apps/{name}/logs?tail=`). */
export function LogsTab(props: { app: App }) {
    const id = useId();
    const [tail, setTail] = useState(200);
    const logs = useApi<{ services: ContainerLogs[] }>(`/api/apps/${encodeURIComponent(props.app.name)}/logs?tail=${tail}`);
    if (props.app.state === 'draft') {
        return <p>The app has not been deployed yet: no container has logs.</p>;
    }

    return (
        <div class="logs">
            <div class="tab-toolbar">
                <label for={`${id}-tail`}>Lines per container</label>{' '}
                <select id={`${id}-tail`} value={String(tail)} onChange={(event) => setTail(Number(event.currentTarget.value))}>
                    {TAILS.map((count) => (
                        <option key={count} value={String(count)}>
                            {count}
                        </option>
                    ))}
                </select>{' '}
                <Button busy={logs.loading} onClick={logs.reload}>
                    Refresh
                </Button>
            </div>
            <ErrorText error={logs.error} />
            {!logs.data && logs.loading ? <Spinner label="Reading the logs…" /> : null}
            {logs.data?.services.length === 0 ? <p>No container of this app exists.</p> : null}
            {logs.data?.services.map((service) => (
                <section key={service.container} class="log-service" aria-labelledby={`${id}-${service.service}`}>
                    <h3 id={`${id}-${service.service}`}>
                        {service.service} <code>{service.container}</code>
                    </h3>
                    <ErrorText error={service.error} />
                    <pre class="log-lines" tabIndex={0} aria-label={`Log of ${service.service}`}>
                        {service.lines.length === 0
                            ? '(no lines)'
                            : service.lines.map((line, index) => (
                                  <span key={index} class={line.stream === 'stderr' ? 'log-line log-stderr' : 'log-line'}>
                                      {line.time ? `${line.time.slice(0, 19).replace('T', ' ')} ` : ''}
                                      {line.stream === 'stderr' ? '[stderr] ' : ''}
                                      {line.text}
                                      {'\n'}
                                  </span>
                              ))}
                    </pre>
                </section>
            ))}
        </div>
    );
}
