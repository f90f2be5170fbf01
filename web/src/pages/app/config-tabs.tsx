import { useState } from 'preact/hooks';

import { api, ApiError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { ComposeEditor, type ComposeValue, composeUpdate } from '../../editors/compose-editor.tsx';
import { hasRisks } from '../../editors/findings.tsx';
import { NginxEditor, type SiteValue, siteUpdate } from '../../editors/nginx-editor.tsx';
import { RunLog } from './run-log.tsx';
import type { App, FileCheck, RunStarted } from './types.ts';

function asApiError(error: unknown): ApiError {
    return error instanceof ApiError ? error : new ApiError(0, String(error));
}

/** Starts the update's run and follows it; the API's refusal (422, 409) is shown beside the button. */
function useUpdateRun(onEnded: () => void) {
    const [runId, setRunId] = useState<number | undefined>(undefined);
    const [running, setRunning] = useState(false);
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const start = async (send: () => Promise<RunStarted>) => {
        setBusy(true);
        setError(undefined);
        try {
            setRunId((await send()).runId);
            setRunning(true);
        } catch (failure) {
            setError(asApiError(failure));
        } finally {
            setBusy(false);
        }
    };
    const ended = () => {
        setRunning(false);
        onEnded();
    };
    return { runId, busy: busy || running, error, start, ended };
}

/** The compose file: edited as a form or text, then saved and deployed (`PUT /api/apps/{name}/compose`). */
export function ComposeTab(props: { app: App; editable: boolean; onChanged: () => void }) {
    const [value, setValue] = useState<ComposeValue | undefined>(undefined);
    const [check, setCheck] = useState<FileCheck | undefined>(undefined);
    const [acceptRisks, setAcceptRisks] = useState(false);
    const update = useUpdateRun(props.onChanged);
    const risky = check ? hasRisks(check.lint) : false;
    const save = () =>
        void update.start(async () => {
            if (!value) {
                throw new ApiError(0, 'the compose file is still loading');
            }

            return await api.put<RunStarted>(`/api/apps/${encodeURIComponent(props.app.name)}/compose`, {
                ...composeUpdate(value),
                ...(acceptRisks ? { acceptRisks: true } : {}),
            });
        });

    return (
        <div class="config-tab">
            <ComposeEditor
                app={props.app.name}
                initialText={props.app.draft.compose}
                initialMode={props.app.draft.composeEditor ?? 'model'}
                readOnly={!props.editable}
                onChange={setValue}
                onCheck={setCheck}
                acceptedRisks={acceptRisks}
                onAcceptedRisksChange={setAcceptRisks}
            />
            {props.editable ? (
                <div class="tab-actions">
                    <Button
                        variant="primary"
                        busy={update.busy}
                        onClick={save}
                        aria-describedby={risky && !acceptRisks ? 'compose-risk-note' : undefined}
                    >
                        Save and deploy the compose file
                    </Button>
                    {risky && !acceptRisks ? (
                        <p id="compose-risk-note" class="field-hint">
                            The file has risks: the deploy refuses it until they are accepted above.
                        </p>
                    ) : null}
                    <ErrorText error={update.error} />
                </div>
            ) : null}
            {update.runId !== undefined ? <RunLog runId={update.runId} title="Compose update" onEnd={update.ended} /> : null}
        </div>
    );
}

/** The nginx site: edited as a form or text, then saved, tested, reloaded and checked (`PUT /api/apps/{name}/nginx`). */
export function NginxTab(props: { app: App; editable: boolean; onChanged: () => void }) {
    const [value, setValue] = useState<SiteValue | undefined>(undefined);
    const update = useUpdateRun(props.onChanged);
    const save = () =>
        void update.start(async () => {
            if (!value) {
                throw new ApiError(0, 'the site is still loading');
            }

            return await api.put<RunStarted>(`/api/apps/${encodeURIComponent(props.app.name)}/nginx`, siteUpdate(value));
        });

    return (
        <div class="config-tab">
            <NginxEditor
                initialText={props.app.draft.nginx}
                initialMode={props.app.draft.nginxEditor ?? 'model'}
                readOnly={!props.editable}
                onChange={setValue}
            />
            {props.editable ? (
                <div class="tab-actions">
                    <Button variant="primary" busy={update.busy} onClick={save}>
                        Save and apply the nginx site
                    </Button>
                    <ErrorText error={update.error} />
                </div>
            ) : null}
            {update.runId !== undefined ? <RunLog runId={update.runId} title="nginx update" onEnd={update.ended} /> : null}
        </div>
    );
}
