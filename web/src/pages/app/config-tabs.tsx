import { useState } from 'preact/hooks';

import { api, ApiError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { ComposeEditor, type ComposeValue, composeUpdate } from '../../editors/compose-editor.tsx';
import { hasRisks } from '../../editors/findings.tsx';
import { NginxEditor, type SiteValue, siteUpdate } from '../../editors/nginx-editor.tsx';
import { useEdits } from '../../editors/use-edits.ts';
import { RunLog } from './run-log.tsx';
import type { App, FileCheck, RunStarted } from './types.ts';
import { SecretsEditor, type SecretRow, secretRows, secretsPayload } from './secrets-editor.tsx';
import { useLeaveGuard } from '../../router.tsx';

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

/** The secrets whose value the rows change or add (a saved one left as it was is not sent). */
function changedSecrets(rows: SecretRow[], saved: Record<string, string>): Record<string, string> {
    return Object.fromEntries(Object.entries(secretsPayload(rows)).filter(([name, value]) => saved[name] !== value));
}

/** The compose file: edited as a form or text, then saved and deployed (`PUT /api/apps/{name}/compose`). */
export function ComposeTab(props: { app: App; editable: boolean; onChanged: () => void }) {
    const [value, setValue] = useState<ComposeValue | undefined>(undefined);
    const [secrets, setSecrets] = useState(() => secretRows(props.app.draft.secrets, props.app.draft.compose));
    const edits = useEdits(value);
    const secretsChanged = Object.keys(changedSecrets(secrets, props.app.draft.secrets)).length > 0;
    useLeaveGuard(
        props.editable && (edits.changed || secretsChanged)
            ? 'Leave this page? The compose file or its secrets have changes that are not saved.'
            : undefined,
    );
    const [check, setCheck] = useState<FileCheck | undefined>(undefined);
    const [acceptRisks, setAcceptRisks] = useState(false);
    const update = useUpdateRun(props.onChanged);
    const risky = check ? hasRisks(check.lint) : false;
    const save = () =>
        void update.start(async () => {
            if (!value) {
                throw new ApiError(0, 'the compose file is still loading');
            }

            const changed = changedSecrets(secrets, props.app.draft.secrets);
            edits.saved();
            return await api.put<RunStarted>(`/api/apps/${encodeURIComponent(props.app.name)}/compose`, {
                ...composeUpdate(value),
                ...(Object.keys(changed).length > 0 ? { secrets: changed } : {}),
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
            <section class="compose-secrets" aria-labelledby="compose-secrets-heading">
                <h3 id="compose-secrets-heading">Variables and secrets</h3>
                {props.editable ? (
                    <SecretsEditor rows={secrets} onChange={setSecrets} />
                ) : (
                    <ul>
                        {Object.keys(props.app.draft.secrets).map((name) => (
                            <li key={name}>
                                <code>{name}</code> ••••••••
                            </li>
                        ))}
                    </ul>
                )}
            </section>
            {props.editable ? (
                <div class="tab-actions">
                    <Button
                        variant="primary"
                        busy={update.busy}
                        onClick={save}
                        aria-describedby={risky && !acceptRisks ? 'compose-risk-note' : undefined}
                    >
                        Save and deploy the compose file and secrets
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
    const edits = useEdits(value);
    useLeaveGuard(props.editable && edits.changed ? 'Leave this page? The nginx site has changes that are not saved.' : undefined);
    const update = useUpdateRun(props.onChanged);
    const save = () =>
        void update.start(async () => {
            if (!value) {
                throw new ApiError(0, 'the site is still loading');
            }

            edits.saved();
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
