import { useState } from 'preact/hooks';

import { canEdit, useApi, useSession } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { Link, navigate, useLocation } from '../../router.tsx';

/** GET /api/apps, as far as the list reads it. */
export interface AppSummary {
    name: string;
    title: string;
    state: string;
    domain: string;
    url: string;
    image: string | null;
    tag: string;
}

function matches(app: AppSummary, query: string, state: string): boolean {
    const text = query.trim().toLowerCase();
    const textMatches =
        text === '' || [app.name, app.title, app.domain, app.image ?? ''].some((value) => value.toLowerCase().includes(text));
    return textMatches && (state === '' || app.state === state);
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

function AppsTable(props: { apps: AppSummary[] }) {
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
                                <Badge state={app.state} />
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

export function AppsPage() {
    usePageTitle('Apps');
    const { user } = useSession();
    const location = useLocation();
    const state = location.search.get('state') ?? '';
    const [query, setQuery] = useState('');
    const { data, error, loading } = useApi<{ apps: AppSummary[] }>('/api/apps');
    const apps = data?.apps ?? [];
    const states = [...new Set(apps.map((app) => app.state))].sort();
    const shown = apps.filter((app) => matches(app, query, state));

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
            {data && apps.length === 0 ? (
                <p class="empty">{canEdit(user?.role) ? 'No apps yet. Start with “New app”.' : 'No apps yet.'}</p>
            ) : null}
            {apps.length > 0 ? (
                <>
                    <Filters states={states} state={state} query={query} onQuery={setQuery} />
                    <p class="muted" role="status">
                        {shown.length === apps.length ? `${apps.length} apps` : `${shown.length} of ${apps.length} apps`}
                    </p>
                    {shown.length > 0 ? <AppsTable apps={shown} /> : <p class="empty">No app matches.</p>}
                </>
            ) : null}
        </div>
    );
}
