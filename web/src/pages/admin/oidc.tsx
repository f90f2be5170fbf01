import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';

import { api, useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { CopyButton } from '../../components/CopyButton.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { type FormError, errorFor, formError } from '../account/form-error.ts';
import type { OidcSettings, OidcTestReport } from './types.ts';

const FIELDS = ['enabled', 'issuer', 'clientId', 'clientSecret'] as const;

/** Signing in to Gatehouse through an OpenID Connect provider; the client secret is only ever "set" or not. */
export function OidcSection() {
    const { data, error, loading, reload } = useApi<OidcSettings>('/api/admin/oidc');
    if (loading && !data) {
        return <Spinner />;
    }

    if (!data) {
        return <ErrorText error={error} />;
    }

    return <OidcForm key={JSON.stringify(data)} settings={data} onSaved={reload} />;
}

function OidcForm(props: { settings: OidcSettings; onSaved: () => void }) {
    const [enabled, setEnabled] = useState(props.settings.enabled);
    const [issuer, setIssuer] = useState(props.settings.issuer);
    const [clientId, setClientId] = useState(props.settings.clientId);
    const [clientSecret, setClientSecret] = useState('');
    const [removeSecret, setRemoveSecret] = useState(false);
    const { busy, error, submit } = useSubmit<FormError>((failure) => formError(failure, FIELDS));
    const [saved, setSaved] = useState(false);

    const save = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setSaved(false);
        // Left out, the stored secret stays; an empty one removes it.
        const secretChange = removeSecret ? { clientSecret: '' } : clientSecret ? { clientSecret } : {};
        await submit(async () => {
            await api.put('/api/admin/oidc', { enabled, issuer, clientId, ...secretChange });
            setClientSecret('');
            setSaved(true);
            props.onSaved();
        });
    };

    return (
        <Card title="OIDC sign-in">
            <p>
                People can sign in to Gatehouse through an OpenID Connect provider; an existing, active user is matched by a verified e-mail
                address (none is created), and the provider's sign-in stands in for the second factor.
            </p>
            <div class="redirect-uri">
                <p>
                    Register this redirect URI at the provider: <code>{props.settings.redirectUri}</code>
                </p>
                <CopyButton value={props.settings.redirectUri} label="the redirect URI" />
            </div>
            <form class="form admin-form" onSubmit={(event) => void save(event)}>
                <div class="field checkbox-field">
                    <label>
                        <input
                            type="checkbox"
                            name="enabled"
                            checked={enabled}
                            onChange={(event) => setEnabled(event.currentTarget.checked)}
                        />{' '}
                        Let people sign in through the provider
                    </label>
                    <ErrorText error={errorFor(error, 'enabled')} />
                </div>
                <Field
                    label="Issuer"
                    name="issuer"
                    type="url"
                    value={issuer}
                    onInput={setIssuer}
                    placeholder="https://id.example.com/application/o/gatehouse/"
                    hint="HTTPS, except on loopback addresses; the provider must offer discovery."
                    error={errorFor(error, 'issuer')}
                />
                <Field
                    label="Client ID"
                    name="clientId"
                    value={clientId}
                    onInput={setClientId}
                    autocomplete="off"
                    error={errorFor(error, 'clientId')}
                />
                <div class="secret-state">
                    <span>Client secret:</span>{' '}
                    {props.settings.hasClientSecret ? <Badge tone="good">set</Badge> : <Badge tone="neutral">not set</Badge>}
                </div>
                <Field
                    label={props.settings.hasClientSecret ? 'New client secret' : 'Client secret'}
                    name="clientSecret"
                    type="password"
                    value={clientSecret}
                    onInput={setClientSecret}
                    autocomplete="new-password"
                    disabled={removeSecret}
                    hint={
                        props.settings.hasClientSecret ? 'Leave empty to keep the one that is set.' : 'Needed unless the client is public.'
                    }
                    error={errorFor(error, 'clientSecret')}
                />
                {props.settings.hasClientSecret ? (
                    <div class="field checkbox-field">
                        <label>
                            <input
                                type="checkbox"
                                name="removeSecret"
                                checked={removeSecret}
                                onChange={(event) => setRemoveSecret(event.currentTarget.checked)}
                            />{' '}
                            Remove the client secret
                        </label>
                    </div>
                ) : null}
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Save OIDC settings
                    </Button>
                    <p class="form-status" role="status">
                        {saved ? 'OIDC settings saved.' : ''}
                    </p>
                </div>
                <ErrorText error={errorFor(error)} />
            </form>
            <IssuerTest issuer={issuer} />
        </Card>
    );
}

/** Reads the issuer's discovery document, as the form says it now (or as stored when empty); saves nothing. */
function IssuerTest(props: { issuer: string }) {
    const [busy, setBusy] = useState(false);
    const [report, setReport] = useState<OidcTestReport | undefined>(undefined);
    const [error, setError] = useState<Error | undefined>(undefined);
    const test = async () => {
        setBusy(true);
        setError(undefined);
        setReport(undefined);
        try {
            setReport(await api.post<OidcTestReport>('/api/admin/oidc/test', props.issuer.trim() ? { issuer: props.issuer.trim() } : {}));
        } catch (failure) {
            setError(failure as Error);
        } finally {
            setBusy(false);
        }
    };
    return (
        <div class="test-action">
            <Button busy={busy} onClick={() => void test()}>
                Test the issuer
            </Button>
            {report?.ok ? (
                <p class="test-result" role="status">
                    <Badge tone="good">ok</Badge> {report.issuer} answers; its sign-in page is <code>{report.authorizationEndpoint}</code>.
                </p>
            ) : null}
            <ErrorText error={report && !report.ok ? `The test failed: ${report.error ?? 'no answer'}` : error} />
        </div>
    );
}
