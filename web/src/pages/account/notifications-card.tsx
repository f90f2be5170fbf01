import { useState } from 'preact/hooks';
import type { TargetedSubmitEvent } from 'preact';

import { api, useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { type FormError, errorFor, formError } from './form-error.ts';

const KINDS = [
    { kind: 'run-failed', label: 'A run failed or was rolled back' },
    { kind: 'backup-failed', label: 'A backup failed' },
    { kind: 'certificate-expiring', label: 'A certificate expires within 14 days' },
    { kind: 'certificate-renewal-failed', label: 'A certificate failed to renew' },
    { kind: 'container-unhealthy', label: 'A container is unhealthy or restarting in a loop' },
    { kind: 'update-available', label: 'An update is available' },
] as const;

type Kind = (typeof KINDS)[number]['kind'];

export interface NotificationSettings {
    email: { enabled: boolean; address: string; kinds: Kind[] };
    webhook: { url: string | null; secretSet: boolean; kinds: Kind[] };
}

const FIELDS = ['webhook.url', 'webhook.secret', 'url', 'secret'];

/** The API names a field by its path (webhook.url) or, for a shape it refuses, by its own name (secret). */
function notificationsError(failure: unknown): FormError {
    const error = formError(failure, FIELDS);
    return error.field === 'url' || error.field === 'secret' ? { ...error, field: `webhook.${error.field}` } : error;
}

/** Which events reach the user, by e-mail and by a signed webhook. */
export function NotificationsCard() {
    const { data, error, loading, reload } = useApi<NotificationSettings>('/api/account/notifications');
    return (
        <Card title="Notifications">
            {loading && !data ? <Spinner /> : null}
            <ErrorText error={error} />
            {data ? <NotificationsForm key={JSON.stringify(data)} settings={data} onSaved={reload} /> : null}
        </Card>
    );
}

function KindChoices(props: { channel: string; chosen: Kind[]; onChange: (kinds: Kind[]) => void }) {
    const toggle = (kind: Kind, on: boolean) =>
        props.onChange(KINDS.map((entry) => entry.kind).filter((name) => (name === kind ? on : props.chosen.includes(name))));
    return (
        <fieldset class="notification-kinds">
            <legend>Events by {props.channel}</legend>
            {KINDS.map(({ kind, label }) => (
                <div class="field checkbox-field" key={kind}>
                    <label>
                        <input
                            type="checkbox"
                            name={`${props.channel}-${kind}`}
                            checked={props.chosen.includes(kind)}
                            onChange={(event) => toggle(kind, event.currentTarget.checked)}
                        />{' '}
                        {label}
                    </label>
                </div>
            ))}
        </fieldset>
    );
}

function NotificationsForm(props: { settings: NotificationSettings; onSaved: () => void }) {
    const { email, webhook } = props.settings;
    const [emailEnabled, setEmailEnabled] = useState(email.enabled);
    const [emailKinds, setEmailKinds] = useState<Kind[]>(email.kinds);
    const [url, setUrl] = useState(webhook.url ?? '');
    const [secret, setSecret] = useState('');
    const [webhookKinds, setWebhookKinds] = useState<Kind[]>(webhook.kinds);
    const { busy, error, submit } = useSubmit<FormError>(notificationsError);
    const [saved, setSaved] = useState(false);

    const save = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setSaved(false);
        const webhookChange = { url: url.trim(), kinds: webhookKinds, ...(secret ? { secret } : {}) };
        await submit(async () => {
            await api.put('/api/account/notifications', { email: { enabled: emailEnabled, kinds: emailKinds }, webhook: webhookChange });
            setSecret('');
            setSaved(true);
            props.onSaved();
        });
    };

    return (
        <form class="form account-form notifications-form" onSubmit={(event) => void save(event)}>
            <div class="field checkbox-field">
                <label>
                    <input
                        type="checkbox"
                        name="emailEnabled"
                        checked={emailEnabled}
                        onChange={(event) => setEmailEnabled(event.currentTarget.checked)}
                    />{' '}
                    Send e-mail to {email.address}
                </label>
            </div>
            <KindChoices channel="e-mail" chosen={emailKinds} onChange={setEmailKinds} />
            <Field
                label="Webhook URL"
                name="webhookUrl"
                type="url"
                value={url}
                onInput={setUrl}
                maxLength={2048}
                placeholder="https://hooks.example.com/gatehouse"
                hint="Each event is POSTed as JSON, signed with the secret in X-Gatehouse-Signature (HMAC-SHA256). Empty: no webhook."
                error={errorFor(error, 'webhook.url')}
            />
            <div class="secret-state">
                <span>Webhook secret:</span> {webhook.secretSet ? <Badge tone="good">set</Badge> : <Badge tone="neutral">not set</Badge>}
            </div>
            <Field
                label={webhook.secretSet ? 'New webhook secret' : 'Webhook secret'}
                name="webhookSecret"
                type="password"
                value={secret}
                onInput={setSecret}
                minLength={8}
                maxLength={255}
                autocomplete="new-password"
                hint={webhook.secretSet ? 'Leave empty to keep the one that is set; it is never shown again.' : '8 to 255 characters.'}
                error={errorFor(error, 'webhook.secret')}
            />
            <KindChoices channel="webhook" chosen={webhookKinds} onChange={setWebhookKinds} />
            <div class="form-actions">
                <Button type="submit" variant="primary" busy={busy}>
                    Save notifications
                </Button>
                <p class="form-status" role="status">
                    {saved ? 'Notification settings saved.' : ''}
                </p>
            </div>
            <ErrorText error={errorFor(error)} />
        </form>
    );
}
