import { useState } from 'preact/hooks';

import { api, type ApiError, asApiError, useApi } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { bytes } from '../../format/bytes.ts';
import { dateTime, relativeTime } from '../../format/time.ts';
import { RunLog } from './run-log.tsx';
import type { App, Backup, BackupList, BackupSchedule, Run, RunStarted } from './types.ts';

type Asked = { what: 'restore' | 'remove'; backup: Backup };

/** Whose schedule the app follows: BACKUP_SCHEDULE's, its own cron expression, or none. */
type ScheduleKind = 'default' | 'own' | 'off';

function kindOf(schedule: string | null): ScheduleKind {
    return schedule === null ? 'default' : schedule === 'off' ? 'off' : 'own';
}

/**
 * When the app is backed up by schedule (`GET .../backups/schedule`): the cron expression in effect and the next time.
 * Editors choose the server's default (BACKUP_SCHEDULE), a schedule of the app's own, or none (`PUT`).
 */
function ScheduleSection(props: { base: string; editable: boolean }) {
    const shown = useApi<BackupSchedule>(`${props.base}/schedule`);
    if (!shown.data) {
        return shown.loading ? <Spinner label="Reading the backup schedule…" /> : <ErrorText error={shown.error} />;
    }

    const { effective, nextAt } = shown.data;
    return (
        <section class="backup-schedule" aria-label="Backup schedule">
            <p class="backup-schedule-now">
                {effective && nextAt ? (
                    <>
                        Backed up by schedule at <code>{effective}</code>
                        {shown.data.schedule === null ? ' (the default)' : ''}; next{' '}
                        <time dateTime={nextAt} title={dateTime(nextAt)}>
                            {relativeTime(nextAt)}
                        </time>
                        .
                    </>
                ) : (
                    'Not backed up by schedule: only by hand, and before changes where the server takes those.'
                )}
            </p>
            {props.editable ? (
                <ScheduleForm key={shown.data.schedule ?? ''} base={props.base} shown={shown.data} onSaved={shown.reload} />
            ) : null}
        </section>
    );
}

function ScheduleForm(props: { base: string; shown: BackupSchedule; onSaved: () => void }) {
    const [kind, setKind] = useState<ScheduleKind>(kindOf(props.shown.schedule));
    const [cron, setCron] = useState(
        kindOf(props.shown.schedule) === 'own' ? String(props.shown.schedule) : (props.shown.default ?? '30 2 * * *'),
    );
    const { busy, error, submit } = useSubmit<ApiError>(asApiError);
    const choices: Array<{ kind: ScheduleKind; label: string }> = [
        { kind: 'default', label: `Follow the default (${props.shown.default ?? 'off'})` },
        { kind: 'own', label: 'Own schedule' },
        { kind: 'off', label: 'Off' },
    ];
    const save = (event: Event) => {
        event.preventDefault();
        void submit(async () => {
            const schedule = kind === 'default' ? null : kind === 'off' ? 'off' : cron;
            await api.put(`${props.base}/schedule`, { schedule });
            props.onSaved();
        });
    };

    return (
        <form class="backup-schedule-form" onSubmit={save}>
            <fieldset class="choice-group">
                <legend>Backup schedule</legend>
                {choices.map((choice) => (
                    <label key={choice.kind}>
                        <input type="radio" name="backup-schedule" checked={kind === choice.kind} onChange={() => setKind(choice.kind)} />{' '}
                        {choice.label}
                    </label>
                ))}
            </fieldset>
            {kind === 'own' ? (
                <Field
                    label="Cron expression"
                    class="backup-schedule-cron"
                    value={cron}
                    onInput={setCron}
                    required
                    maxLength={100}
                    spellcheck={false}
                    hint="Minute, hour, day of the month, month and day of the week (a sixth field first counts seconds): 30 2 * * * is every day at 02:30."
                />
            ) : null}
            <div class="app-action-buttons">
                <Button type="submit" busy={busy}>
                    Save the schedule
                </Button>
            </div>
            <ErrorText error={error} />
        </form>
    );
}

/** What a backup holds, in words: "folder, site, volume app_data, dump of db". */
function holdings(backup: Backup): string {
    const { holds } = backup;
    return [
        ...(holds.folder ? ['folder'] : []),
        ...(holds.site ? ['site'] : []),
        ...holds.volumes.map((volume) => `volume ${volume}`),
        ...holds.dumps.map((service) => `dump of ${service}`),
    ].join(', ');
}

const QUESTIONS: Record<Asked['what'], (app: string, backup: Backup) => string> = {
    restore: (app, backup) =>
        `Restore ${app} to its backup of ${dateTime(backup.time)}? The app stops, what it holds now is backed up first ` +
        '("before restore"), its folder, site and volumes are put back, and it starts again: visitors get an error meanwhile.',
    remove: (_app, backup) => `Remove the backup of ${dateTime(backup.time)}? It leaves the repository and can no longer be restored.`,
};

/**
 * The app's backups (`GET /api/apps/{name}/backups`), newest first, below when it is backed up by schedule. Editors
 * choose the schedule, back the app up now, restore a backup or remove one, each of the last two asked first; a backup
 * or restore run's log follows below the list.
 */
export function BackupsTab(props: { app: App; editable: boolean; onRunEnded: () => void }) {
    const base = `/api/apps/${encodeURIComponent(props.app.name)}/backups`;
    const list = useApi<BackupList>(base);
    const [asked, setAsked] = useState<Asked | undefined>(undefined);
    const [run, setRun] = useState<{ id: number; title: string; ended: boolean } | undefined>(undefined);
    const { busy, error, submit } = useSubmit<ApiError>(asApiError);
    const deployed = props.app.state !== 'draft';
    const running = run !== undefined && !run.ended;

    const start = (title: string, path: string) =>
        submit(async () => {
            setAsked(undefined);
            const { runId } = await api.post<RunStarted>(path);
            setRun({ id: runId, title, ended: false });
        });
    const remove = (backup: Backup) =>
        submit(async () => {
            setAsked(undefined);
            await api.delete(`${base}/${backup.id}`);
            list.reload();
        });
    const ended = (finished: Run) => {
        setRun((current) => (current && current.id === finished.id ? { ...current, ended: true } : current));
        list.reload();
        props.onRunEnded();
    };

    return (
        <div class="backups">
            <p class="field-hint">
                Each backup holds the app’s folder (compose file, secrets), its nginx site, its named volumes and, where its recipe says
                how, a dump of its database, in the server’s restic repository.
            </p>
            <ScheduleSection base={base} editable={props.editable} />
            {props.editable && deployed ? (
                <div class="app-action-buttons">
                    <Button busy={busy && !asked} disabled={running || busy} onClick={() => void start('Backup', base)}>
                        Back up now
                    </Button>
                </div>
            ) : null}
            {asked ? (
                <Confirm
                    label={`Confirm: ${asked.what} the backup of ${dateTime(asked.backup.time)}`}
                    question={QUESTIONS[asked.what](props.app.name, asked.backup)}
                    action={asked.what === 'restore' ? `Restore ${props.app.name}` : 'Remove the backup'}
                    busy={busy}
                    onConfirm={() =>
                        void (asked.what === 'restore' ? start('Restore', `${base}/${asked.backup.id}/restore`) : remove(asked.backup))
                    }
                    onCancel={() => setAsked(undefined)}
                />
            ) : null}
            <ErrorText error={error} />
            <BackupTable
                list={list}
                deployed={deployed}
                actions={props.editable && deployed && !running && !busy ? (what, backup) => setAsked({ what, backup }) : undefined}
            />
            {run ? <RunLog key={run.id} runId={run.id} title={run.title} onEnd={ended} /> : null}
        </div>
    );
}

function BackupTable(props: {
    list: ReturnType<typeof useApi<BackupList>>;
    deployed: boolean;
    actions: ((what: Asked['what'], backup: Backup) => void) | undefined;
}) {
    const { list } = props;
    if (!list.data) {
        return list.loading ? <Spinner label="Reading the backups…" /> : <ErrorText error={list.error} />;
    }

    if (list.data.backups.length === 0) {
        return <p>{props.deployed ? 'No backup yet.' : 'Nothing is deployed yet, so there is nothing to back up.'}</p>;
    }

    return (
        <div class="table-scroll">
            <table class="table">
                <caption class="table-caption">Backups, newest first</caption>
                <thead>
                    <tr>
                        <th scope="col">Made</th>
                        <th scope="col">Why</th>
                        <th scope="col">Holds</th>
                        <th scope="col">Size</th>
                        {props.actions ? <th scope="col">Actions</th> : null}
                    </tr>
                </thead>
                <tbody>
                    {list.data.backups.map((backup) => (
                        <tr key={backup.id} data-backup={backup.id}>
                            <th scope="row">
                                <time dateTime={backup.time} title={dateTime(backup.time)}>
                                    {relativeTime(backup.time)}
                                </time>
                            </th>
                            <td>{backup.reason}</td>
                            <td>{holdings(backup)}</td>
                            <td>{bytes(backup.size)}</td>
                            {props.actions ? (
                                <td class="backup-actions">
                                    <Button
                                        variant="link"
                                        aria-label={`Restore the backup of ${dateTime(backup.time)}`}
                                        onClick={() => props.actions?.('restore', backup)}
                                    >
                                        Restore
                                    </Button>{' '}
                                    <Button
                                        variant="link"
                                        aria-label={`Remove the backup of ${dateTime(backup.time)}`}
                                        onClick={() => props.actions?.('remove', backup)}
                                    >
                                        Remove
                                    </Button>
                                </td>
                            ) : null}
                        </tr>
                    ))}
                </tbody>
            </table>
        </div>
    );
}
