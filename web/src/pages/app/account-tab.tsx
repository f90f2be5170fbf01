import { useState } from 'preact/hooks';

import { api, ApiError } from '../../api.ts';
import { Badge, type BadgeLevel } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { CopyButton } from '../../components/CopyButton.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { dateTime } from '../../format/time.ts';
import { RunLog } from './run-log.tsx';
import { SaveRecipe } from './save-recipe.tsx';
import { choiceFromApp, choicePayload, EvidenceDetail, type MethodChoice, SignInChooser } from './sign-in-chooser.tsx';
import type { App, RunStarted } from './types.ts';
import { methodWords } from '../../words.ts';

const VALUE_NAMES: Record<string, string> = {
    issuer: 'Issuer',
    discoveryUrl: 'Discovery URL',
    logoutUrl: 'Logout URL',
    clientId: 'Client ID',
    clientSecret: 'Client secret',
    redirectUri: 'Redirect URI',
    entityId: 'Entity ID',
    ssoUrl: 'Sign-on URL',
    ssoPostUrl: 'Sign-on URL (POST)',
    sloUrl: 'Logout URL',
    metadataUrl: 'Metadata URL',
    acsUrl: 'Assertion consumer URL',
    certificate: 'Signing certificate',
    sharedUser: 'Shared user',
    adapter: 'Auto-login adapter',
    loginPath: 'Login page',
    autologinUrl: 'Auto-login URL',
    setting: 'Setting in the app',
    headers: 'Headers the app reads',
    trustedAddress: 'Trust them only from',
};

/** The values a person copies into the app by hand (never the shared password: the API never answers it). */
function Values(props: { values: Record<string, string> }) {
    const entries = Object.entries(props.values).filter(([, value]) => value !== '');
    if (entries.length === 0) {
        return <p>No values to copy for this method.</p>;
    }

    return (
        <dl class="identity-values">
            {entries.map(([key, value]) => (
                <div key={key} class="identity-value" data-key={key}>
                    <dt>{VALUE_NAMES[key] ?? key}</dt>
                    <dd>
                        {value.includes('\n') ? (
                            <pre tabIndex={0} aria-label={VALUE_NAMES[key] ?? key}>
                                {value}
                            </pre>
                        ) : (
                            <code>{value}</code>
                        )}{' '}
                        <CopyButton value={value} label={VALUE_NAMES[key] ?? key} />
                    </dd>
                </div>
            ))}
        </dl>
    );
}

function ChangeMethod(props: { app: App; onApplied: () => void }) {
    const [choice, setChoice] = useState<MethodChoice>(() => choiceFromApp(props.app));
    const [acceptRisks, setAcceptRisks] = useState(false);
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const [runId, setRunId] = useState<number | undefined>(undefined);
    const apply = async () => {
        setBusy(true);
        setError(undefined);
        try {
            const payload = { ...choicePayload(choice, { withAdminUser: true }), ...(acceptRisks ? { acceptRisks: true } : {}) };
            const started = await api.post<RunStarted>(`/api/apps/${encodeURIComponent(props.app.name)}/sso`, payload);
            setRunId(started.runId);
            setChoice({ ...choice, sharedPassword: '' });
        } catch (failure) {
            setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
        } finally {
            setBusy(false);
        }
    };

    return (
        <div class="change-method">
            <SignInChooser app={props.app} choice={choice} onChange={setChoice} withAdminUser />
            {props.app.image ? <EvidenceDetail image={`${props.app.image}:${props.app.tag}`} /> : null}
            <p class="field-check">
                <input
                    id="sso-accept-risks"
                    type="checkbox"
                    checked={acceptRisks}
                    onChange={(event) => setAcceptRisks(event.currentTarget.checked)}
                />{' '}
                <label for="sso-accept-risks">Accept the compose file's lint risks for this run</label>
            </p>
            <Button variant="primary" busy={busy} onClick={() => void apply()}>
                Apply the sign-in method
            </Button>
            <ErrorText error={error} />
            {runId !== undefined ? <RunLog runId={runId} title="Sign-in method" onEnd={props.onApplied} /> : null}
        </div>
    );
}

/** The account card: the method in force, the values to copy, the last sign-in check, and changing the method. */
export function AccountTab(props: { app: App; editable: boolean; onChanged: () => void }) {
    const identity = props.app.identity;
    const [changing, setChanging] = useState(false);
    if (!identity) {
        return <p>Nothing is known about how visitors are known inside this app.</p>;
    }

    const option = identity.options.find((candidate) => candidate.method === identity.method);
    return (
        <>
            <Card title="How visitors are known inside the app" level={3}>
                <p class="identity-method">
                    {identity.method ? (
                        <>
                            <strong>{option?.title ?? methodWords(identity.method)}</strong>{' '}
                            {option?.level ? <Badge level={option.level as BadgeLevel} /> : null}{' '}
                            {option && !option.singleSignOn ? <Badge tone="neutral">not single sign-on</Badge> : null}
                        </>
                    ) : (
                        'No method chosen: the identity provider stands in front, the app keeps its own login.'
                    )}
                </p>
                {identity.recipe ? (
                    <p>
                        Recipe: {identity.recipe.title} <Badge level={identity.recipe.level as BadgeLevel} />
                    </p>
                ) : null}
                {identity.adminUser ? <p>Admin account in the app: {identity.adminUser}</p> : null}
                {props.app.draft.sharedUser ? (
                    <p>
                        Shared account: {props.app.draft.sharedUser}
                        {props.app.draft.hasSharedPassword ? ' (a password is saved; it is never shown)' : ''}
                    </p>
                ) : null}
                <Values values={identity.values} />
                <p
                    class={identity.check ? (identity.check.ok ? 'check-ok' : 'check-failed') : 'check-none'}
                    data-check={identity.check?.ok ?? 'none'}
                >
                    {identity.check
                        ? `Last sign-in check (${dateTime(identity.check.at)}): ${identity.check.ok ? 'passed' : 'failed'}: ${identity.check.text}`
                        : 'The sign-in has not been checked yet (a deploy checks it).'}
                </p>
                {props.editable && !changing ? <Button onClick={() => setChanging(true)}>Change the method</Button> : null}
            </Card>
            {props.editable && changing ? (
                <Card title="Change the sign-in method" level={3}>
                    <ChangeMethod app={props.app} onApplied={props.onChanged} />
                </Card>
            ) : null}
            {props.editable && props.app.state === 'running' && identity.check?.ok ? <SaveRecipe app={props.app} /> : null}
        </>
    );
}
