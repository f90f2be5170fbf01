import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';

import { useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { dateTime } from '../../format/time.ts';
import { errorFor, formError } from '../account/form-error.ts';
import { SelectField } from './select-field.tsx';
import type { AuditEntry, AuditPage } from './types.ts';
import { auditActionChoices, auditActionWords } from '../../words.ts';

const PAGE_SIZE = 20;

interface AuditFilters {
    actor: string;
    action: string;
    target: string;
    outcome: '' | 'success' | 'failure';
    /** `datetime-local` values, in the browser's time zone. */
    since: string;
    until: string;
}

const NO_FILTERS: AuditFilters = { actor: '', action: '', target: '', outcome: '', since: '', until: '' };
const FILTER_FIELDS = ['actor', 'action', 'target', 'outcome', 'since', 'until'] as const;

/** The audit query: local times become the instants the API compares with. */
export function auditPath(filters: AuditFilters, page: number): string {
    const query = new URLSearchParams();
    for (const field of ['actor', 'action', 'target', 'outcome'] as const) {
        const value = filters[field].trim();
        if (value) {
            query.set(field, value);
        }
    }

    for (const field of ['since', 'until'] as const) {
        const instant = filters[field] ? new Date(filters[field]) : undefined;
        if (instant && !Number.isNaN(instant.getTime())) {
            query.set(field, instant.toISOString());
        }
    }

    query.set('page', String(page));
    query.set('limit', String(PAGE_SIZE));
    return `/api/admin/audit?${query.toString()}`;
}

/** Every sign-in, failure, user and setting change: filtered, newest first, a page at a time. */
export function AuditSection() {
    const [draft, setDraft] = useState<AuditFilters>(NO_FILTERS);
    const [applied, setApplied] = useState<AuditFilters>(NO_FILTERS);
    const [page, setPage] = useState(1);
    const { data, error, loading } = useApi<AuditPage>(auditPath(applied, page));
    const placed = error ? formError(error, FILTER_FIELDS) : undefined;

    const apply = (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setApplied(draft);
        setPage(1);
    };
    const clear = () => {
        setDraft(NO_FILTERS);
        setApplied(NO_FILTERS);
        setPage(1);
    };
    const set = (field: keyof AuditFilters) => (value: string) => setDraft({ ...draft, [field]: value });
    const pages = data ? Math.max(1, Math.ceil(data.total / PAGE_SIZE)) : 1;

    return (
        <Card title="Audit log">
            <form class="audit-filters" aria-label="Audit log filters" onSubmit={apply}>
                <Field label="Actor (e-mail)" name="actor" value={draft.actor} onInput={set('actor')} error={errorFor(placed, 'actor')} />
                <SelectField
                    label="Action"
                    name="action"
                    value={draft.action}
                    onChange={set('action')}
                    options={[{ value: '', label: 'Any' }, ...auditActionChoices()]}
                    error={errorFor(placed, 'action')}
                />
                <Field label="Target" name="target" value={draft.target} onInput={set('target')} error={errorFor(placed, 'target')} />
                <SelectField
                    label="Outcome"
                    name="outcome"
                    value={draft.outcome}
                    onChange={set('outcome')}
                    options={[
                        { value: '', label: 'Any' },
                        { value: 'success', label: 'Success' },
                        { value: 'failure', label: 'Failure' },
                    ]}
                    error={errorFor(placed, 'outcome')}
                />
                <DateTimeField label="Since" name="since" value={draft.since} onInput={set('since')} error={errorFor(placed, 'since')} />
                <DateTimeField label="Until" name="until" value={draft.until} onInput={set('until')} error={errorFor(placed, 'until')} />
                <div class="form-actions">
                    <Button type="submit" variant="primary">
                        Filter
                    </Button>
                    <Button onClick={clear}>Clear filters</Button>
                </div>
                <ErrorText error={errorFor(placed)} />
            </form>
            {loading && !data ? <Spinner /> : null}
            {data ? <AuditTable entries={data.entries} total={data.total} /> : null}
            {data && data.total > 0 ? (
                <nav class="pager" aria-label="Audit log pages">
                    <Button disabled={page <= 1 || loading} onClick={() => setPage(page - 1)}>
                        Newer
                    </Button>
                    <span aria-live="polite">
                        Page {page} of {pages}
                    </span>
                    <Button disabled={page >= pages || loading} onClick={() => setPage(page + 1)}>
                        Older
                    </Button>
                </nav>
            ) : null}
        </Card>
    );
}

function DateTimeField(props: { label: string; name: string; value: string; onInput: (value: string) => void; error?: string }) {
    const id = `audit-${props.name}`;
    return (
        <div class={props.error ? 'field field-invalid' : 'field'}>
            <label for={id}>{props.label}</label>
            <input
                id={id}
                name={props.name}
                type="datetime-local"
                value={props.value}
                aria-invalid={props.error ? 'true' : undefined}
                onInput={(event) => props.onInput(event.currentTarget.value)}
            />
            <ErrorText error={props.error} />
        </div>
    );
}

function formatDetails(details: Record<string, unknown>): string {
    return Object.entries(details)
        .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
        .join(', ');
}

function AuditTable(props: { entries: AuditEntry[]; total: number }) {
    if (props.entries.length === 0) {
        return <p class="empty">No entry matches.</p>;
    }

    return (
        <div class="table-scroll">
            <table class="table admin-table audit-table">
                <caption class="visually-hidden">Audit entries, newest first ({props.total} in all)</caption>
                <thead>
                    <tr>
                        <th scope="col">When</th>
                        <th scope="col">Actor</th>
                        <th scope="col">Action</th>
                        <th scope="col">Target</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">From</th>
                        <th scope="col">Details</th>
                    </tr>
                </thead>
                <tbody>
                    {props.entries.map((entry) => (
                        <tr key={entry.id}>
                            <td>
                                <time dateTime={entry.at}>{dateTime(entry.at)}</time>
                            </td>
                            <td>{entry.actor?.email ?? '—'}</td>
                            <td>{auditActionWords(entry.action)}</td>
                            <td>{entry.target || '—'}</td>
                            <td>
                                <Badge tone={entry.outcome === 'success' ? 'good' : 'bad'}>{entry.outcome}</Badge>
                            </td>
                            <td>{entry.clientAddress || '—'}</td>
                            <td class="audit-details">{formatDetails(entry.details)}</td>
                        </tr>
                    ))}
                </tbody>
            </table>
        </div>
    );
}
