import '../../editors/editors.css';
import './app.css';

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';

import { api, ApiError, canEdit, isAdmin, useApi, useSession } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { type TabItem, Tabs } from '../../components/Tabs.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { Link, matchPath, useLocation } from '../../router.tsx';
import { AccessGroups, AccessSummary } from './access-groups.tsx';
import { AccountTab } from './account-tab.tsx';
import { BackupsTab } from './backups-tab.tsx';
import { ComposeTab, NginxTab } from './config-tabs.tsx';
import { DeleteTab } from './delete-tab.tsx';
import { FilesTab } from './files-tab.tsx';
import { LogsTab } from './logs-tab.tsx';
import { ResourcesTab } from './resources-tab.tsx';
import { RunLog } from './run-log.tsx';
import { RunsTab } from './runs-tab.tsx';
import { StatusTab } from './status-tab.tsx';
import { TerminalTab } from './terminal-tab.tsx';
import { UpdatesTab } from './updates-tab.tsx';
import type { App, RunStarted } from './types.ts';

type TabId =
    | 'status'
    | 'logs'
    | 'resources'
    | 'runs'
    | 'backups'
    | 'updates'
    | 'files'
    | 'account'
    | 'access'
    | 'compose'
    | 'nginx'
    | 'terminal'
    | 'delete';

const TABS: Array<{ id: TabId; label: string; adminOnly?: boolean }> = [
    { id: 'status', label: 'Status' },
    { id: 'logs', label: 'Logs' },
    { id: 'resources', label: 'Resources' },
    { id: 'runs', label: 'Runs' },
    { id: 'backups', label: 'Backups' },
    { id: 'updates', label: 'Updates' },
    { id: 'files', label: 'Files' },
    { id: 'account', label: 'Sign-in' },
    { id: 'access', label: 'Access' },
    { id: 'compose', label: 'Compose' },
    { id: 'nginx', label: 'nginx' },
    { id: 'terminal', label: 'Terminal', adminOnly: true },
    { id: 'delete', label: 'Delete', adminOnly: true },
];

type Action = 'restart' | 'stop' | 'start';

const ACTION_LABELS: Record<Action, string> = { restart: 'Restart', stop: 'Stop', start: 'Start' };

/** What stopping or restarting does to visitors, said before it is done. */
const CONFIRM_TEXT: Record<Exclude<Action, 'start'>, (app: string) => string> = {
    restart: (app) => `Restart ${app}? Its containers stop and start again: visitors get an error for a moment.`,
    stop: (app) => `Stop ${app}? Visitors get an error until it is started again.`,
};

export interface ActionRun {
    id: number;
    action: Action;
    ended: boolean;
}

/**
 * Restart, stop and start (`POST /api/apps/{name}/action`); restart and stop ask first. The run started is handed
 * to the page, which shows its log below the header.
 */
function Actions(props: { app: App; run: ActionRun | undefined; onStarted: (run: ActionRun) => void }) {
    const [busy, setBusy] = useState<Action | undefined>(undefined);
    const [asking, setAsking] = useState<Exclude<Action, 'start'> | undefined>(undefined);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const act = async (action: Action) => {
        setAsking(undefined);
        setBusy(action);
        setError(undefined);
        try {
            const { runId } = await api.post<RunStarted>(`/api/apps/${encodeURIComponent(props.app.name)}/action`, { action });
            props.onStarted({ id: runId, action, ended: false });
        } catch (failure) {
            setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
        } finally {
            setBusy(undefined);
        }
    };
    const running = props.run !== undefined && !props.run.ended;
    const actions: Action[] =
        props.app.state === 'stopped' ? ['start'] : props.app.state === 'running' ? ['restart', 'stop'] : ['restart', 'stop', 'start'];

    return (
        <section class="app-actions" aria-label="Actions">
            <div class="app-action-buttons">
                {actions.map((action) => (
                    <Button
                        key={action}
                        busy={busy === action}
                        disabled={running || busy !== undefined || asking !== undefined}
                        onClick={() => (action === 'start' ? void act(action) : setAsking(action))}
                    >
                        {ACTION_LABELS[action]}
                    </Button>
                ))}
            </div>
            {asking ? (
                <Confirm
                    label={`Confirm: ${ACTION_LABELS[asking].toLowerCase()}`}
                    question={CONFIRM_TEXT[asking](props.app.name)}
                    action={`${ACTION_LABELS[asking]} ${props.app.name}`}
                    onConfirm={() => void act(asking)}
                    onCancel={() => setAsking(undefined)}
                />
            ) : null}
            <ErrorText error={error} />
        </section>
    );
}

function tabFrom(pathname: string): TabId {
    const tab = matchPath('/apps/:name/:tab', pathname)?.tab;
    return TABS.find((candidate) => candidate.id === tab)?.id ?? 'status';
}

function AccessTab(props: { app: App; editable: boolean; onChanged: () => void }) {
    return (
        <>
            <AccessSummary app={props.app} />
            {props.editable ? <AccessGroups app={props.app} onSaved={props.onChanged} /> : null}
        </>
    );
}

export function AppPage(props: { name: string }) {
    const location = useLocation();
    const { user } = useSession();
    const app = useApi<{ app: App }>(`/api/apps/${encodeURIComponent(props.name)}`);
    // Bumped when a run starts here, so that the runs list reads it.
    const [runsVersion, setRunsVersion] = useState(0);
    // Once its delete succeeded, the page says so and offers nothing more to do with the app.
    const [deleted, setDeleted] = useState(false);
    // The restart, stop or start last started here, its log shown below the header.
    const [actionRun, setActionRun] = useState<ActionRun | undefined>(undefined);
    usePageTitle(app.data?.app.title ?? props.name);
    const editable = canEdit(user?.role);
    const tabs: TabItem[] = TABS.filter((tab) => !tab.adminOnly || isAdmin(user?.role)).map((tab) => ({
        id: tab.id,
        label: tab.label,
        href: `/apps/${encodeURIComponent(props.name)}${tab.id === 'status' ? '' : `/${tab.id}`}`,
    }));
    const current = tabFrom(location.pathname);

    if (!app.data) {
        return app.loading ? (
            <Spinner label={`Reading ${props.name}…`} />
        ) : (
            <>
                <h1>{props.name}</h1>
                <ErrorText error={app.error} />
                <p>
                    <Link href="/apps">Back to the apps</Link>
                </p>
            </>
        );
    }

    const shown = app.data.app;
    const changed = () => app.reload();
    const panels: Record<TabId, () => ComponentChildren> = {
        status: () => <StatusTab key={`status-${runsVersion}`} app={shown} />,
        logs: () => <LogsTab app={shown} />,
        resources: () => <ResourcesTab app={shown} />,
        runs: () => <RunsTab key={`runs-${runsVersion}`} app={shown} onRunEnded={changed} />,
        backups: () => <BackupsTab app={shown} editable={editable} onRunEnded={changed} />,
        updates: () => <UpdatesTab app={shown} editable={editable} onRunEnded={changed} />,
        files: () => <FilesTab app={shown} />,
        account: () => <AccountTab app={shown} editable={editable} onChanged={changed} />,
        access: () => <AccessTab app={shown} editable={editable} onChanged={changed} />,
        compose: () => <ComposeTab app={shown} editable={editable} onChanged={changed} />,
        nginx: () => <NginxTab app={shown} editable={editable} onChanged={changed} />,
        terminal: () => (isAdmin(user?.role) ? <TerminalTab key={shown.name} app={shown} /> : <p>Only administrators open a terminal.</p>),
        delete: () =>
            isAdmin(user?.role) ? (
                <DeleteTab app={shown} onEnded={(run) => (run.state === 'succeeded' ? setDeleted(true) : changed())} />
            ) : (
                <p>Only administrators delete apps.</p>
            ),
    };
    const currentLabel = TABS.find((tab) => tab.id === current)?.label ?? current;

    return (
        <div class="app-page" data-app={shown.name} data-state={deleted ? 'deleted' : shown.state}>
            <header class="page-header app-header">
                <div>
                    <h1>
                        {shown.title || shown.name} <Badge state={deleted ? 'deleted' : shown.state} />
                    </h1>
                    <p class="app-facts">
                        <code>{shown.name}</code> · {shown.image ? <code>{`${shown.image}:${shown.tag}`}</code> : 'from a template'} ·{' '}
                        <a href={shown.url} target="_blank" rel="noopener noreferrer">
                            {shown.domain}
                        </a>
                    </p>
                </div>
                {editable && shown.state !== 'draft' && !deleted ? (
                    <Actions
                        key={shown.name}
                        app={shown}
                        run={actionRun}
                        onStarted={(run) => {
                            setActionRun(run);
                            setRunsVersion((version) => version + 1);
                        }}
                    />
                ) : null}
            </header>
            {actionRun ? (
                <RunLog
                    key={actionRun.id}
                    runId={actionRun.id}
                    title={ACTION_LABELS[actionRun.action]}
                    onEnd={() => {
                        setActionRun({ ...actionRun, ended: true });
                        changed();
                        setRunsVersion((version) => version + 1);
                    }}
                />
            ) : null}
            {shown.state === 'draft' ? (
                <p class="wizard-note">
                    This app is a draft: nothing runs yet.{' '}
                    {editable ? <Link href={`/apps/new?app=${encodeURIComponent(shown.name)}`}>Continue its setup</Link> : null}
                </p>
            ) : null}
            <Tabs label={`${shown.title || shown.name}: sections`} tabs={tabs} current={current} />
            <section class="app-panel" aria-labelledby="app-panel-heading">
                <h2 id="app-panel-heading">{currentLabel}</h2>
                {panels[current]()}
            </section>
        </div>
    );
}
