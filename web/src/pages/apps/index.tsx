import { useState } from 'preact/hooks';

import { canEdit, useApi, useSession } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { Link, navigate, useLocation } from '../../router.tsx';
import { type KnownUpdate, UpdateMark, useKnownUpdates } from './known-updates.tsx';

/** GET /api/apps (one page of app summaries), as far as the list reads it. */
export interface AppSummary {
    name: string;
    title: string;
    state: string;
    domain: string;
    url: string;
    image: string | null;
    tag: string;
}

/** The most the API gives in one page. */
const PAGE_SIZE = 50;

function listUrl(query: string, state: string, page: number): string {
    const params = new URLSearchParams({ limit: String(PAGE_SIZE), page: String(page) });
    if (query.trim() !== '') {
        params.set('q', query.trim());
    }

    if (state !== '') {
        params.set('state', state);
    }

    return `/api/apps?${params.toString()}`;
}

function stateFilterUrl(state: string): string {
    return state === '' ? '/apps' : `/apps?state=${encodeURIComponent(state)}`;
}

function Filters(props: { states: string[]; state: string; query: string; onQuery: (query: string) => void }) {
    return (
        <div class="filters" role="search">
            <div class="field field-inline">
                <label for="apps-search">Search</label>
                <input id="apps-search" type="search" value={props.query} onInput={(event) => props.onQuery(event.currentTarget.value)} />
            </div>
            <div class="field field-inline">
                <label for="apps-state">State</label>
                <select
                    id="apps-state"
                    value={props.state}
                    onChange={(event) => navigate(stateFilterUrl(event.currentTarget.value), { replace: true })}
                >
                    <option value="">All</option>
                    {props.states.map((state) => (
                        <option key={state} value={state}>
                            {state}
                        </option>
                    ))}
                </select>
            </div>
        </div>
    );
}

function AppsTable(props: { apps: AppSummary[]; updates: Map<string, KnownUpdate> }) {
    return (
        <div class="table-scroll">
            <table class="table apps-table">
                <thead>
                    <tr>
                        <th scope="col">Name</th>
                        <th scope="col">Title</th>
                        <th scope="col">State</th>
                        <th scope="col">Domain</th>
                    </tr>
                </thead>
                <tbody>
                    {props.apps.map((app) => (
                        <tr key={app.name}>
                            <th scope="row">
                                <Link href={`/apps/${encodeURIComponent(app.name)}`}>{app.name}</Link>
                            </th>
                            <td>{app.title}</td>
                            <td>
                                <Badge state={app.state} /> <UpdateMark known={props.updates.get(app.name)} />
                            </td>
                            <td>
                                {app.state === 'draft' ? (
                                    <span class="muted">{app.domain}</span>
                                ) : (
                                    <a href={app.url} target="_blank" rel="noopener noreferrer">
                                        {app.domain}
                                        <span class="visually-hidden"> (opens in a new tab)</span>
                                    </a>
                                )}
                            </td>
                        </tr>
                    ))}
                </tbody>
            </table>
        </div>
    );
}

function Pager(props: { page: number; pages: number; loading: boolean; onPage: (page: number) => void }) {
    if (props.pages <= 1) {
        return null;
    }

    return (
        <nav class="pager" aria-label="Apps pages">
            <Button disabled={props.page <= 1 || props.loading} onClick={() => props.onPage(props.page - 1)}>
                Previous
            </Button>
            <span aria-live="polite">
                Page {props.page} of {props.pages}
            </span>
            <Button disabled={props.page >= props.pages || props.loading} onClick={() => props.onPage(props.page + 1)}>
                Next
            </Button>
        </nav>
    );
}

export function AppsPage() {
    usePageTitle('Apps');
    const { user } = useSession();
    const location = useLocation();
    const state = location.search.get('state') ?? '';
    const [query, setQuery] = useState('');
    // The page asked for, with the filters it was asked under: new filters start again from the first page.
    const [paging, setPaging] = useState({ filters: '', page: 1 });
    const filterKey = JSON.stringify([query.trim(), state]);
    const page = paging.filters === filterKey ? paging.page : 1;
    const setPage = (next: number) => setPaging({ filters: filterKey, page: next });
    // The filtering and paging are the server's; the dashboard's counts give every app's number and the states.
    const { data, error, loading } = useApi<{ apps: AppSummary[]; total: number }>(listUrl(query, state, page));
    const counts = useApi<{ apps: { total: number; byState: Record<string, number> } }>('/api/dashboard');
    const updates = useKnownUpdates();
    const apps = data?.apps ?? [];
    const everyApp = counts.data?.apps.total ?? data?.total ?? 0;
    const states = Object.keys(counts.data?.apps.byState ?? {}).sort();
    const filtered = query.trim() !== '' || state !== '';

    return (
        <div class="apps-page">
            <div class="page-header">
                <h1>Apps</h1>
                {canEdit(user?.role) ? (
                    <Link href="/apps/new" class="button button-primary">
                        New app
                    </Link>
                ) : null}
            </div>
            <ErrorText error={error} />
            {loading && !data ? <Spinner /> : null}
            {data && !filtered && data.total === 0 ? (
                <p class="empty">{canEdit(user?.role) ? 'No apps yet. Start with “New app”.' : 'No apps yet.'}</p>
            ) : null}
            {data && (filtered || data.total > 0) ? (
                <>
                    <Filters states={states} state={state} query={query} onQuery={setQuery} />
                    <p class="muted" role="status">
                        {filtered ? `${data.total} of ${everyApp} apps` : `${data.total} apps`}
                    </p>
                    {apps.length > 0 ? <AppsTable apps={apps} updates={updates} /> : <p class="empty">No app matches.</p>}
                    <Pager page={page} pages={Math.ceil(data.total / PAGE_SIZE)} loading={loading} onPage={setPage} />
                </>
            ) : null}
        </div>
    );
}
