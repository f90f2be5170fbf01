import { useEffect, useState } from 'preact/hooks';

import { useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { duration, relativeTime } from '../../format/time.ts';
import { RunLog } from './run-log.tsx';
import type { App, Run } from './types.ts';

/** The app's runs, newest first; the one in progress is followed live, any other is read back when chosen. */
export function RunsTab(props: { app: App; onRunEnded?: () => void }) {
    const runs = useApi<{ runs: Run[] }>(`/api/apps/${encodeURIComponent(props.app.name)}/runs`);
    const [shown, setShown] = useState<number | undefined>(undefined);
    const running = runs.data?.runs.find((run) => run.state === 'running');

    useEffect(() => {
        if (running && shown === undefined) {
            setShown(running.id);
        }
    }, [running?.id]);

    if (!runs.data) {
        return runs.loading ? <Spinner label="Reading the runs…" /> : <ErrorText error={runs.error} />;
    }

    return (
        <div class="runs">
            {runs.data.runs.length === 0 ? (
                <p>No run yet.</p>
            ) : (
                <div class="table-scroll">
                    <table class="table">
                        <caption class="table-caption">Runs, newest first</caption>
                        <thead>
                            <tr>
                                <th scope="col">Run</th>
                                <th scope="col">Kind</th>
                                <th scope="col">State</th>
                                <th scope="col">Started</th>
                                <th scope="col">Took</th>
                                <th scope="col">Log</th>
                            </tr>
                        </thead>
                        <tbody>
                            {runs.data.runs.map((run) => (
                                <tr key={run.id} data-run={run.id}>
                                    <th scope="row">#{run.id}</th>
                                    <td>{run.kind}</td>
                                    <td>
                                        <Badge state={run.state} />
                                        {run.error ? <span class="run-error"> {run.error}</span> : null}
                                    </td>
                                    <td>{relativeTime(run.startedAt)}</td>
                                    <td>{duration(run.startedAt, run.endedAt)}</td>
                                    <td>
                                        <Button
                                            variant="link"
                                            aria-label={`${shown === run.id ? 'Hide' : 'Show'} the log of run ${run.id}`}
                                            onClick={() => setShown(shown === run.id ? undefined : run.id)}
                                        >
                                            {shown === run.id ? 'Hide' : 'Show'}
                                        </Button>
                                    </td>
                                </tr>
                            ))}
                        </tbody>
                    </table>
                </div>
            )}
            {shown !== undefined ? (
                <RunLog
                    runId={shown}
                    title={runs.data.runs.find((run) => run.id === shown)?.kind ?? 'Run'}
                    onEnd={(ended) => {
                        if (ended.id === running?.id) {
                            runs.reload();
                            props.onRunEnded?.();
                        }
                    }}
                />
            ) : null}
        </div>
    );
}
