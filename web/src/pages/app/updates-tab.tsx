import { useState } from 'preact/hooks';

import { api, type ApiError, asApiError, useApi } from '../../api.ts';
import { Badge, type BadgeTone } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Confirm } from '../../components/Confirm.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { RunLog } from './run-log.tsx';
import type { App, AppUpdates, ImageUpdate, Run, RunStarted } from './types.ts';

const CHANGE_TONES: Record<ImageUpdate['change'], BadgeTone> = { patch: 'good', minor: 'info', major: 'warning', digest: 'info' };
const CHANGE_WORDS: Record<ImageUpdate['change'], string> = { patch: 'patch', minor: 'minor', major: 'major', digest: 'new image' };

type Automatic = AppUpdates['automatic'];

const AUTOMATIC_WORDS: Record<Automatic, string> = {
    off: 'Off: only by hand',
    patch: 'Patch versions (and a moving tag’s new image)',
    minor: 'Minor and patch versions',
};

/** How far the daily check updates the app by itself; editors change it (`PUT .../updates/automatic`). */
function AutomaticChoice(props: { base: string; automatic: Automatic; editable: boolean; onSaved: () => void }) {
    const { busy, error, submit } = useSubmit<ApiError>(asApiError);
    const choose = (automatic: Automatic) =>
        submit(async () => {
            await api.put(`${props.base}/updates/automatic`, { automatic });
            props.onSaved();
        });
    if (!props.editable) {
        return <p>Automatic updates: {AUTOMATIC_WORDS[props.automatic]}.</p>;
    }

    return (
        <div class="field field-inline">
            <label for="automatic-updates">Automatic updates (checked daily)</label>
            <select
                id="automatic-updates"
                value={props.automatic}
                disabled={busy}
                onChange={(event) => void choose(event.currentTarget.value as Automatic)}
            >
                {(Object.keys(AUTOMATIC_WORDS) as Automatic[]).map((mode) => (
                    <option key={mode} value={mode}>
                        {AUTOMATIC_WORDS[mode]}
                    </option>
                ))}
            </select>
            <ErrorText error={error} />
        </div>
    );
}

function upToDate(found: AppUpdates): string {
    return found.versioned
        ? `No newer tag in the line of ${found.tag} at the registry.`
        : `The registry’s image for ${found.tag} is the one running.`;
}

/**
 * The updates of the app's image (`GET /api/apps/{name}/updates`): newer tags of its line, or a new image under its
 * moving tag. Editors update to one, asked first; the run (backup, pull, recreate, checks; put back on failure)
 * follows below.
 */
export function UpdatesTab(props: { app: App; editable: boolean; onRunEnded: () => void }) {
    const base = `/api/apps/${encodeURIComponent(props.app.name)}`;
    const [otherMajors, setOtherMajors] = useState(false);
    const found = useApi<AppUpdates>(props.app.state === 'draft' ? null : `${base}/updates${otherMajors ? '?otherMajors=true' : ''}`);
    const [asked, setAsked] = useState<ImageUpdate | undefined>(undefined);
    const [run, setRun] = useState<{ id: number; ended: boolean } | undefined>(undefined);
    const { busy, error, submit } = useSubmit<ApiError>(asApiError);
    const running = run !== undefined && !run.ended;

    if (props.app.state === 'draft') {
        return <p>The app has not been deployed yet: there is nothing to update.</p>;
    }

    const update = (chosen: ImageUpdate) =>
        submit(async () => {
            setAsked(undefined);
            const { runId } = await api.post<RunStarted>(`${base}/update`, { tag: chosen.tag });
            setRun({ id: runId, ended: false });
        });
    const ended = (finished: Run) => {
        setRun((current) => (current && current.id === finished.id ? { ...current, ended: true } : current));
        found.reload();
        props.onRunEnded();
    };

    return (
        <div class="updates">
            <div class="tab-toolbar">
                <label>
                    <input type="checkbox" checked={otherMajors} onChange={(event) => setOtherMajors(event.currentTarget.checked)} />{' '}
                    Include other major versions
                </label>
                <Button busy={found.loading} onClick={found.reload}>
                    Look again
                </Button>
            </div>
            {asked ? (
                <Confirm
                    label={`Confirm: update to ${asked.tag}`}
                    question={
                        `Update ${props.app.name} to ${props.app.image ?? ''}:${asked.tag}? It is backed up first, then the image is pulled ` +
                        'and its containers recreated; if the new image fails to start or its checks fail, the old image and the data come back.'
                    }
                    action={`Update ${props.app.name}`}
                    busy={busy}
                    onConfirm={() => void update(asked)}
                    onCancel={() => setAsked(undefined)}
                />
            ) : null}
            <ErrorText error={error ?? found.error} />
            {found.data ? (
                <AutomaticChoice base={base} automatic={found.data.automatic} editable={props.editable} onSaved={found.reload} />
            ) : null}
            {found.data ? (
                <UpdateList found={found.data} onChoose={props.editable && !running && !busy ? (chosen) => setAsked(chosen) : undefined} />
            ) : found.loading ? (
                <Spinner label="Asking the image’s registry…" />
            ) : null}
            {run ? <RunLog key={run.id} runId={run.id} title="Update" onEnd={ended} /> : null}
        </div>
    );
}

function UpdateList(props: { found: AppUpdates; onChoose: ((chosen: ImageUpdate) => void) | undefined }) {
    const { found } = props;
    return (
        <>
            <p>
                Runs <code>{`${found.image}:${found.tag}`}</code>
                {found.versioned ? '' : ' (a moving tag: an update is a new image under it)'}.
            </p>
            {found.updates.length === 0 ? (
                <p role="status">{upToDate(found)}</p>
            ) : (
                <ul class="update-list" aria-label="Updates, newest first">
                    {found.updates.map((update) => (
                        <li key={update.tag} data-tag={update.tag}>
                            <code>{update.tag}</code> <Badge tone={CHANGE_TONES[update.change]}>{CHANGE_WORDS[update.change]}</Badge>{' '}
                            {props.onChoose ? (
                                <Button variant="link" onClick={() => props.onChoose?.(update)}>
                                    {`Update to ${update.tag}`}
                                </Button>
                            ) : null}
                        </li>
                    ))}
                </ul>
            )}
            {found.complete ? null : <p class="field-hint">The registry’s list of tags was cut short: a newer tag may be missing.</p>}
        </>
    );
}
