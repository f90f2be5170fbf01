import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { api, ApiError, asApiError } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { ComposeEditor, type ComposeValue, composeText } from '../../editors/compose-editor.tsx';
import { Findings } from '../../editors/findings.tsx';
import { NginxEditor, type SiteValue, siteText } from '../../editors/nginx-editor.tsx';
import { useEdits } from '../../editors/use-edits.ts';
import { Link, useLeaveGuard } from '../../router.tsx';
import { GroupPicker, useAccessChoice } from '../app/access-groups.tsx';
import { AdminUserField } from '../app/admin-user.tsx';
import { RunLog } from '../app/run-log.tsx';
import { choiceFromApp, choicePayload, EvidenceDetail, SignInChooser } from '../app/sign-in-chooser.tsx';
import type { App, Preview, Run, RunStarted } from '../app/types.ts';
import { PreviewView } from './preview-step.tsx';
import { type SecretRow, SecretsEditor, secretRows, secretsPayload, variablesNeeded } from '../app/secrets-editor.tsx';
import { type StepId, stepAfter, stepBefore, stepTitle } from './steps.ts';

type GoTo = (next: StepId, fields?: Record<string, unknown>) => Promise<void>;

/** Back and Next; Next saves the step's fields into the draft with the next step, and shows the API's error here. */
function StepActions(props: {
    step: StepId;
    goTo: GoTo;
    fields?: () => Promise<Record<string, unknown>>;
    nextLabel?: string;
    /** What the step's fields are now: an error said about earlier ones goes once they change. */
    fieldsKey?: string;
}) {
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    useEffect(() => setError(undefined), [props.fieldsKey]);
    const next = stepAfter(props.step);
    const move = async (step: StepId, fields: () => Promise<Record<string, unknown>>) => {
        setBusy(true);
        setError(undefined);
        try {
            await props.goTo(step, await fields());
        } catch (failure) {
            setError(asApiError(failure));
            setBusy(false);
        }
    };
    const save = () => move(next, props.fields ?? (async () => ({})));
    return (
        <div class="wizard-actions">
            <Button onClick={() => void move(stepBefore(props.step), async () => ({}))}>Back</Button>
            <Button variant="primary" busy={busy} onClick={() => void save()}>
                {props.nextLabel ?? `Save and continue: ${stepTitle(next).toLowerCase()}`}
            </Button>
            <ErrorText error={error} />
        </div>
    );
}

/** What the wizard says before a reload, a closed tab or a link leaves a step with changes not saved. */
const UNSAVED_STEP = 'Leave this page? This step has changes that are not saved.';

function useStepGuard(changed: boolean): void {
    useLeaveGuard(changed ? UNSAVED_STEP : undefined);
}

function SignInStep(props: { app: App; goTo: GoTo }) {
    const [choice, setChoice] = useState(() => choiceFromApp(props.app));
    useStepGuard(JSON.stringify(choice) !== JSON.stringify(choiceFromApp(props.app)));
    return (
        <>
            <p>How visitors are known inside the app, best evidence first. Every app sits behind the identity provider either way.</p>
            <SignInChooser app={props.app} choice={choice} onChange={setChoice} />
            {props.app.image ? <EvidenceDetail image={`${props.app.image}:${props.app.tag}`} /> : null}
            <StepActions step="sign-in" goTo={props.goTo} fields={async () => choicePayload(choice, { withAdminUser: false })} />
        </>
    );
}

type OpenAccess = 'public' | 'signed-in';

const OPEN_ACCESS_TEXT: Record<OpenAccess, { consent: string; missing: string }> = {
    public: {
        consent:
            'Deploy it public: no identity provider is connected, so anyone on the internet who reaches its domain gets in without signing in.',
        missing: 'Tick the box to deploy the app public, or have an administrator connect an identity provider first.',
    },
    'signed-in': {
        consent: 'Let every user of the identity provider in: no group is chosen, so anyone with an account there gets in.',
        missing: 'Choose at least one group, or tick the box to let every user of the identity provider in.',
    },
};

/** The access a deploy would give that lets in more than chosen groups: it must be said outright (the API refuses it otherwise). */
function OpenAccessConsent(props: { open: OpenAccess; said: boolean; onChange: (said: boolean) => void }) {
    return (
        <p class="access-consent">
            <input
                id="access-consent"
                type="checkbox"
                checked={props.said}
                onChange={(event) => props.onChange(event.currentTarget.checked)}
            />{' '}
            <label for="access-consent">{OPEN_ACCESS_TEXT[props.open].consent}</label>
        </p>
    );
}

/** "Save and continue" saves the ticked groups too (PUT access, before the draft's own fields), and the access said. */
function AccessStep(props: { app: App; goTo: GoTo }) {
    const [adminUser, setAdminUser] = useState(props.app.draft.adminUser ?? '');
    const choice = useAccessChoice(props.app, { suggest: true });
    const [said, setSaid] = useState<OpenAccess | undefined>(() => {
        const access = props.app.draft.auth?.access;
        return access === 'public' || access === 'signed-in' ? access : undefined;
    });
    const noGroup = choice.directory.data !== undefined && choice.chosen.length === 0;
    const open: OpenAccess | undefined = choice.directory.error ? 'public' : noGroup ? 'signed-in' : undefined;
    const fields = async () => {
        if (open && said !== open) {
            throw new ApiError(422, OPEN_ACCESS_TEXT[open].missing);
        }

        if (choice.unsaved) {
            await choice.save();
        }

        return { adminUser, auth: { access: open ?? 'groups' } };
    };
    return (
        <>
            <h3>Who may reach the app</h3>
            <div class="access-groups">
                <GroupPicker app={props.app} choice={choice} />
                {open ? (
                    <OpenAccessConsent open={open} said={said === open} onChange={(ticked) => setSaid(ticked ? open : undefined)} />
                ) : null}
            </div>
            <h3>Admin account</h3>
            <AdminUserField value={adminUser} onChange={setAdminUser} />
            <StepActions step="access" goTo={props.goTo} fields={fields} fieldsKey={`${choice.chosen.join(',')} ${said ?? ''}`} />
        </>
    );
}

function ComposeStep(props: { app: App; goTo: GoTo; acceptRisks: boolean; onAcceptRisks: (accepted: boolean) => void }) {
    const [value, setValue] = useState<ComposeValue | undefined>(undefined);
    useStepGuard(useEdits(value).changed);
    return (
        <>
            <ComposeEditor
                app={props.app.name}
                initialText={props.app.draft.compose}
                initialMode={props.app.draft.composeEditor ?? 'model'}
                onChange={setValue}
                acceptedRisks={props.acceptRisks}
                onAcceptedRisksChange={props.onAcceptRisks}
                variablesAskedLater={stepTitle('secrets')}
            />
            <StepActions
                step="compose"
                goTo={props.goTo}
                fields={async () => (value ? { compose: await composeText(value), composeEditor: value.mode } : {})}
            />
        </>
    );
}

function NginxStep(props: { app: App; goTo: GoTo }) {
    const [value, setValue] = useState<SiteValue | undefined>(undefined);
    useStepGuard(useEdits(value).changed);
    return (
        <>
            <SiteNote />
            <NginxEditor initialText={props.app.draft.nginx} initialMode={props.app.draft.nginxEditor ?? 'model'} onChange={setValue} />
            <StepActions
                step="nginx"
                goTo={props.goTo}
                fields={async () => (value ? { nginx: await siteText(value), nginxEditor: value.mode } : {})}
            />
        </>
    );
}

function SiteNote() {
    return <p>The site nginx serves for the app's domain; the deploy adds the identity provider's check in front of every location.</p>;
}

/** The compose file's variables that still have no value: from this step on, an error. */
function VariablesWithoutValue(props: { rows: SecretRow[]; compose: string }) {
    const valued = new Set(props.rows.filter((row) => row.value !== '').map((row) => row.name.trim()));
    const missing = variablesNeeded(props.compose).filter((name) => !valued.has(name));
    if (missing.length === 0) {
        return null;
    }

    return (
        <div role="alert">
            <ul class="findings-list secrets-missing">
                {missing.map((name) => (
                    <li key={name} class="finding finding-error">
                        <Badge tone="bad">error</Badge> <code>{name}</code> has no value: the compose file needs one. Type it or generate
                        it.
                    </li>
                ))}
            </ul>
        </div>
    );
}

function SecretsStep(props: { app: App; goTo: GoTo }) {
    const [rows, setRows] = useState(() => secretRows(props.app.draft.secrets, props.app.draft.compose));
    const [initial] = useState(() => JSON.stringify(secretsPayload(rows)));
    useStepGuard(JSON.stringify(secretsPayload(rows)) !== initial);
    return (
        <>
            <p>Values for the compose file's variables, kept sealed and written to the app's secrets file (mode 0600).</p>
            <SecretsEditor rows={rows} onChange={setRows} />
            <VariablesWithoutValue rows={rows} compose={props.app.draft.compose} />
            <StepActions step="secrets" goTo={props.goTo} fields={async () => ({ secrets: secretsPayload(rows) })} />
        </>
    );
}

function usePreview(name: string): { preview: Preview | undefined; error: ApiError | undefined } {
    const [preview, setPreview] = useState<Preview | undefined>(undefined);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    useEffect(() => {
        api.post<Preview>(`/api/apps/${encodeURIComponent(name)}/preview`).then(setPreview, (failure: unknown) =>
            setError(asApiError(failure)),
        );
    }, [name]);
    return { preview, error };
}

function PreviewStep(props: { app: App; goTo: GoTo; acceptRisks: boolean; onAcceptRisks: (accepted: boolean) => void }) {
    const { preview, error } = usePreview(props.app.name);
    return (
        <>
            <p>What a deploy of this draft would create or change. Nothing is changed yet.</p>
            {preview ? (
                <PreviewView preview={preview} accepted={props.acceptRisks} onAcceptedChange={props.onAcceptRisks} />
            ) : error ? (
                <ErrorText error={error} />
            ) : (
                <Spinner label="Preparing the preview…" />
            )}
            <StepActions step="preview" goTo={props.goTo} />
        </>
    );
}

function DeployStep(props: { app: App; goTo: GoTo; acceptRisks: boolean; onAcceptRisks: (accepted: boolean) => void; reload: () => void }) {
    const { preview } = usePreview(props.app.name);
    const [runId, setRunId] = useState<number | undefined>(undefined);
    const [ended, setEnded] = useState<Run | undefined>(undefined);
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const risks = (preview?.lint ?? []).filter((finding) => finding.level === 'risk' || finding.level === 'error');
    const deploy = async () => {
        setBusy(true);
        setError(undefined);
        setEnded(undefined);
        try {
            const started = await api.post<RunStarted>(`/api/apps/${encodeURIComponent(props.app.name)}/deploy`, {
                acceptRisks: props.acceptRisks,
            });
            setRunId(started.runId);
        } catch (failure) {
            setError(asApiError(failure));
        } finally {
            setBusy(false);
        }
    };
    const running = runId !== undefined && ended === undefined;

    return (
        <>
            <p>
                Deploying writes the files, starts the containers, writes the nginx site, obtains the certificate and checks the app through
                nginx; a failure at any step is rolled back.
            </p>
            {risks.length > 0 ? (
                <Findings subject="The draft" findings={risks} accepted={props.acceptRisks} onAcceptedChange={props.onAcceptRisks} />
            ) : null}
            {ended?.state === 'succeeded' ? null : (
                <div class="wizard-actions">
                    <Button onClick={() => props.goTo('preview').catch((failure: unknown) => setError(asApiError(failure)))}>Back</Button>
                    <Button variant="primary" busy={busy || running} onClick={() => void deploy()}>
                        {ended ? 'Deploy again' : 'Deploy'}
                    </Button>
                    <ErrorText error={error} />
                </div>
            )}
            {runId !== undefined ? (
                <RunLog
                    runId={runId}
                    title="Deploy"
                    onEnd={(run) => {
                        setEnded(run);
                        props.reload();
                    }}
                />
            ) : null}
            {ended?.state === 'succeeded' ? (
                <p role="status" class="deploy-done">
                    {props.app.title || props.app.name} is deployed: visit it at{' '}
                    <a href={props.app.url} target="_blank" rel="noopener noreferrer">
                        {props.app.url}
                    </a>
                    , or <Link href={`/apps/${encodeURIComponent(props.app.name)}`}>open its page</Link>.
                </p>
            ) : null}
        </>
    );
}

export interface DraftStepsProps {
    app: App;
    step: StepId;
    goTo: GoTo;
    reload: () => void;
    acceptRisks: boolean;
    onAcceptRisks: (accepted: boolean) => void;
}

export function DraftSteps(props: DraftStepsProps) {
    const { app, goTo } = props;
    const risks = { acceptRisks: props.acceptRisks, onAcceptRisks: props.onAcceptRisks };
    const steps: Partial<Record<StepId, () => ComponentChildren>> = {
        'sign-in': () => <SignInStep app={app} goTo={goTo} />,
        access: () => <AccessStep app={app} goTo={goTo} />,
        compose: () => <ComposeStep app={app} goTo={goTo} {...risks} />,
        nginx: () => <NginxStep app={app} goTo={goTo} />,
        secrets: () => <SecretsStep app={app} goTo={goTo} />,
        preview: () => <PreviewStep app={app} goTo={goTo} {...risks} />,
        deploy: () => <DeployStep app={app} goTo={goTo} reload={props.reload} {...risks} />,
    };
    return (
        <>
            {app.state !== 'draft' && props.step !== 'deploy' ? (
                <p class="wizard-note">
                    This app has been deployed: what is saved here goes into its draft; its{' '}
                    <Link href={`/apps/${encodeURIComponent(app.name)}`}>page</Link> applies changes.
                </p>
            ) : null}
            {steps[props.step]?.() ?? <p>This step needs no draft.</p>}
        </>
    );
}
