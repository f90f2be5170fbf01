import { useEffect } from 'preact/hooks';

import { useApi } from '../../api.ts';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { bytes, percent } from '../../format/bytes.ts';
import { Link } from '../../router.tsx';

/** GET /api/stats/top, as the dashboard reads it. */
interface AppUsage {
    app: string;
    cpuPercent: number;
    memoryBytes: number;
    containers: number;
}

interface TopApps {
    time: string | null;
    byCpu: AppUsage[];
    byMemory: AppUsage[];
}

/** Read again this often, as the figures are (every STATS_INTERVAL_SECONDS, ten by default). */
const REFRESH_MS = 10_000;

function Ranking(props: { title: string; apps: AppUsage[]; value: (app: AppUsage) => number; words: (app: AppUsage) => string }) {
    const largest = Math.max(...props.apps.map(props.value), Number.EPSILON);
    return (
        <div class="top-apps-ranking">
            <h3>{props.title}</h3>
            <ol class="top-apps-list" aria-label={props.title}>
                {props.apps.map((app) => (
                    <li key={app.app} class="top-app" data-app={app.app}>
                        <Link href={`/apps/${encodeURIComponent(app.app)}/resources`} class="top-app-name">
                            {app.app}
                        </Link>
                        <span class="top-app-figure">{props.words(app)}</span>
                        <span class="top-app-bar" aria-hidden="true">
                            <span style={{ width: `${Math.max(2, (props.value(app) / largest) * 100)}%` }} />
                        </span>
                    </li>
                ))}
            </ol>
        </div>
    );
}

/** The apps using the most CPU and the most memory now, each linked to its Resources tab. */
export function TopAppsCard() {
    const top = useApi<TopApps>('/api/stats/top');
    const { reload } = top;
    useEffect(() => {
        const timer = setInterval(reload, REFRESH_MS);
        return () => clearInterval(timer);
    }, [reload]);

    if (!top.data) {
        return top.error ? <ErrorText error={top.error} /> : <Spinner label="Reading what the apps use…" />;
    }

    if (top.data.byCpu.length === 0) {
        return <p class="muted">No app’s containers are running, or their first figures are still being read.</p>;
    }

    return (
        <div class="top-apps">
            <Ranking title="By CPU" apps={top.data.byCpu} value={(app) => app.cpuPercent} words={(app) => percent(app.cpuPercent)} />
            <Ranking title="By memory" apps={top.data.byMemory} value={(app) => app.memoryBytes} words={(app) => bytes(app.memoryBytes)} />
        </div>
    );
}
