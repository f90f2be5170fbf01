import { useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { dateTime, duration, relativeTime } from '../../format/time.ts';
import { usePageTitle } from '../../layout/page-title.ts';
import { Link } from '../../router.tsx';
import { UpdateMark, useKnownUpdates } from '../apps/known-updates.tsx';
import { type HealthTile, healthTiles, levelWords } from './health.ts';
import { StateChart } from './StateChart.tsx';
import { TopAppsCard } from './TopApps.tsx';
import type { Dashboard, RecentRun, SystemInfo } from './types.ts';

function Totals(props: { dashboard: Dashboard }) {
    const { apps, users, runsInProgress } = props.dashboard;
    const items = [
        { label: 'Apps', value: apps.total, href: '/apps' },
        { label: 'Runs in progress', value: runsInProgress },
        { label: 'Users', value: users.total - users.disabled },
    ];
    return (
        <dl class="totals">
            {items.map((item) => (
                <div key={item.label} class="total">
                    <dt>{item.label}</dt>
                    <dd>{item.href ? <Link href={item.href}>{item.value}</Link> : item.value}</dd>
                </div>
            ))}
        </dl>
    );
}

function RecentRuns(props: { runs: RecentRun[] }) {
    if (props.runs.length === 0) {
        return <p class="muted">No runs yet: deploying an app starts one.</p>;
    }

    return (
        <ol class="run-list">
            {props.runs.map((run) => (
                <li key={run.id} class="run-item">
                    <Link href={`/apps/${encodeURIComponent(run.app)}`} class="run-app">
                        {run.app}
                    </Link>
                    <span class="run-kind">{run.kind}</span>
                    <Badge state={run.state} />
                    <time class="run-time muted" dateTime={run.startedAt} title={dateTime(run.startedAt)}>
                        {relativeTime(run.startedAt)}
                        {run.endedAt ? ` · ${duration(run.startedAt, run.endedAt)}` : ''}
                    </time>
                </li>
            ))}
        </ol>
    );
}

/** The apps whose image has an update (the daily check's, or their pages'), each marked and linked to its Updates tab. */
function AppsWithUpdates() {
    const known = [...useKnownUpdates().values()];
    if (known.length === 0) {
        return <p class="muted">No update found: the images are looked at once a day, and on each app’s Updates tab.</p>;
    }

    return (
        <ul class="run-list">
            {known.map((entry) => (
                <li key={entry.app} class="run-item">
                    <Link href={`/apps/${encodeURIComponent(entry.app)}`} class="run-app">
                        {entry.app}
                    </Link>
                    <span class="run-kind">{entry.tag}</span>
                    <UpdateMark known={entry} />
                </li>
            ))}
        </ul>
    );
}

function HealthTiles(props: { tiles: HealthTile[] }) {
    return (
        <ul class="health-tiles">
            {props.tiles.map((tile) => (
                <li key={tile.id} class={`health-tile health-${tile.level}`}>
                    <span class="health-name">{tile.name}</span>
                    <span class="health-level">{levelWords(tile.level)}</span>
                    <span class="health-status">{tile.status}</span>
                    {tile.detail ? (
                        <span class="health-detail" title={tile.detail}>
                            {tile.detail}
                        </span>
                    ) : null}
                </li>
            ))}
        </ul>
    );
}

export function DashboardPage() {
    usePageTitle('Dashboard');
    const dashboard = useApi<Dashboard>('/api/dashboard');
    const system = useApi<SystemInfo>('/api/system');

    return (
        <div class="dashboard">
            <h1>Dashboard</h1>
            <ErrorText error={dashboard.error} />
            {dashboard.data ? <Totals dashboard={dashboard.data} /> : null}
            <div class="dashboard-grid">
                <Card title="Apps by state" class="dashboard-states">
                    {dashboard.data ? <StateChart byState={dashboard.data.apps.byState} total={dashboard.data.apps.total} /> : <Spinner />}
                </Card>
                <Card title="Recent runs" class="dashboard-runs">
                    {dashboard.data ? <RecentRuns runs={dashboard.data.recentRuns} /> : <Spinner />}
                </Card>
                <Card title="Updates available" class="dashboard-updates">
                    <AppsWithUpdates />
                </Card>
                <Card title="Top apps now" class="dashboard-top-apps">
                    <TopAppsCard />
                </Card>
                <Card title="Integrations" class="dashboard-health">
                    <ErrorText error={system.error} />
                    {system.data ? (
                        <HealthTiles tiles={healthTiles(system.data)} />
                    ) : system.error ? null : (
                        <Spinner label="Checking the integrations…" />
                    )}
                </Card>
            </div>
        </div>
    );
}
