import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';

import { api, useApi } from '../../api.ts';
import { Badge, type BadgeTone } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { dateTime } from '../../format/time.ts';
import { type FormError, errorFor, formError } from '../account/form-error.ts';
import { SelectField, type SelectOption } from './select-field.tsx';
import type { IdpConnection, IdpDiscovery } from './types.ts';

const CONNECT_FIELDS = ['kind', 'url', 'token', 'outpostUrl', 'outpost', 'authorizationFlow', 'invalidationFlow', 'signingKey'] as const;

export function healthTone(status: string): BadgeTone {
    if (status === 'ok') {
        return 'good';
    }

    return status === 'not-configured' ? 'neutral' : 'bad';
}

/** The identity provider in front of every app: its state, connecting it (of a kind the server has), and forgetting its token. */
export function IdentityProviderSection() {
    const { data, error, loading, reload } = useApi<IdpConnection>('/api/admin/idp');
    const [note, setNote] = useState<string | undefined>(undefined);
    if (loading && !data) {
        return <Spinner label="Asking the identity provider…" />;
    }

    if (!data) {
        return <ErrorText error={error} />;
    }

    const changed = (message?: string) => {
        setNote(message);
        reload();
    };
    return (
        <>
            <ConnectionCard connection={data} note={note} onDisconnected={changed} />
            {/* Keyed by the saved URL: the forms start from it again once it changes. */}
            <BootstrapCard
                key={`bootstrap ${data.url ?? ''}`}
                url={data.url ?? ''}
                kind={data.kind}
                kinds={data.kinds}
                onConnected={() => changed('Connected with a token of Gatehouse’s own.')}
            />
            <ConnectCard
                key={`connect ${data.url ?? ''}`}
                url={data.url ?? ''}
                kind={data.kind}
                kinds={data.kinds}
                tokenSet={data.tokenSet}
                onConnected={() => changed('Connection saved.')}
            />
        </>
    );
}

function ConnectionCard(props: { connection: IdpConnection; note: string | undefined; onDisconnected: (note: string) => void }) {
    const { connection } = props;
    return (
        <Card title="Connection">
            <p class="idp-state">
                {connection.connected ? <Badge tone="good">connected</Badge> : <Badge tone="neutral">not connected</Badge>}{' '}
                <Badge tone={healthTone(connection.health.status)}>{connection.health.status}</Badge> {connection.health.message}
                <span class="muted"> (checked {dateTime(connection.health.checkedAt)})</span>
            </p>
            <p class="form-status" role="status">
                {props.note ?? ''}
            </p>
            {connection.url ? (
                <dl class="facts">
                    <dt>Provider</dt>
                    <dd>
                        {connection.kind} {connection.version ?? ''} at <code>{connection.url}</code>
                    </dd>
                    <dt>Outpost</dt>
                    <dd>
                        {connection.outpost?.name ?? 'none'}, reached by nginx at <code>{connection.outpostUrl}</code>
                    </dd>
                    <dt>Authorization flow</dt>
                    <dd>{connection.authorizationFlow?.slug ?? 'none'}</dd>
                    <dt>Invalidation flow</dt>
                    <dd>{connection.invalidationFlow?.slug ?? 'none'}</dd>
                    <dt>Signing key</dt>
                    <dd>{connection.signingKey?.name ?? 'the provider’s default'}</dd>
                    <dt>API token</dt>
                    <dd>{connection.tokenSet ? <Badge tone="good">set</Badge> : <Badge tone="neutral">not set</Badge>}</dd>
                </dl>
            ) : null}
            {connection.tokenSet ? <DisconnectAction onDisconnected={props.onDisconnected} /> : null}
        </Card>
    );
}

function DisconnectAction(props: { onDisconnected: (note: string) => void }) {
    const [confirming, setConfirming] = useState(false);
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<Error | undefined>(undefined);
    const disconnect = async () => {
        setBusy(true);
        setError(undefined);
        try {
            const answer = await api.delete<IdpConnection>('/api/admin/idp/token');
            const revoked = answer.tokenRevoked ? 'The token was revoked at the provider.' : 'The token was forgotten.';
            props.onDisconnected([revoked, answer.note].filter(Boolean).join(' '));
        } catch (failure) {
            setError(failure as Error);
            setBusy(false);
        }
    };
    return (
        <div class="test-action">
            {confirming ? (
                <div class="row-actions">
                    <span>Forget the token? Apps keep their objects at the provider; new deploys go without it.</span>
                    <Button variant="danger" busy={busy} onClick={() => void disconnect()}>
                        Disconnect
                    </Button>
                    <Button onClick={() => setConfirming(false)}>Keep connected</Button>
                </div>
            ) : (
                <Button variant="danger" onClick={() => setConfirming(true)}>
                    Disconnect…
                </Button>
            )}
            <ErrorText error={error} />
        </div>
    );
}

type Kinds = IdpConnection['kinds'];

/** The kind of provider, among those the server has, and its URL (the field named after the kind). */
function KindAndUrl(props: {
    kinds: Kinds;
    kind: string;
    onKind: (kind: string) => void;
    url: string;
    onUrl: (url: string) => void;
    error: FormError | undefined;
}) {
    return (
        <>
            <SelectField
                label="Kind of provider"
                name="kind"
                value={props.kind}
                onChange={props.onKind}
                options={props.kinds.map((kind) => ({ value: kind.name, label: kind.title }))}
                error={errorFor(props.error, 'kind')}
            />
            <Field
                label={`${titleOf(props.kinds, props.kind)} URL`}
                name="url"
                type="url"
                value={props.url}
                onInput={props.onUrl}
                required
                error={errorFor(props.error, 'url')}
            />
        </>
    );
}

const titleOf = (kinds: Kinds, kind: string): string => kinds.find((known) => known.name === kind)?.title ?? kind;

function BootstrapCard(props: { url: string; kind: string; kinds: Kinds; onConnected: () => void }) {
    const [kind, setKind] = useState(props.kind);
    const [url, setUrl] = useState(props.url);
    const [bootstrapToken, setBootstrapToken] = useState('');
    const { busy, error, submit } = useSubmit<FormError>((failure) => formError(failure, ['kind', 'url', 'bootstrapToken']));
    const bootstrap = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        await submit(async () => {
            await api.post('/api/admin/idp/bootstrap', { kind, url, bootstrapToken });
            setBootstrapToken('');
            props.onConnected();
        });
    };
    return (
        <Card title="Connect with a bootstrap token">
            <p>
                For a new authentik: give the URL and its <code>AUTHENTIK_BOOTSTRAP_TOKEN</code>. Gatehouse makes an API token of its own,
                keeps only that one, and picks the embedded outpost, the default flows and the self-signed key.
            </p>
            <form class="form admin-form" onSubmit={(event) => void bootstrap(event)}>
                <KindAndUrl kinds={props.kinds} kind={kind} onKind={setKind} url={url} onUrl={setUrl} error={error} />
                <Field
                    label="Bootstrap token"
                    name="bootstrapToken"
                    type="password"
                    value={bootstrapToken}
                    onInput={setBootstrapToken}
                    required
                    autocomplete="off"
                    hint="Used once, not kept."
                    error={errorFor(error, 'bootstrapToken')}
                />
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Connect with the bootstrap token
                    </Button>
                </div>
                <ErrorText error={errorFor(error)} />
            </form>
        </Card>
    );
}

interface Choices {
    outpostUrl: string;
    outpost: string;
    authorizationFlow: string;
    invalidationFlow: string;
    signingKey: string;
}

const NO_CHOICES: Choices = { outpostUrl: '', outpost: '', authorizationFlow: '', invalidationFlow: '', signingKey: '' };
const DEFAULT_OPTION: SelectOption = { value: '', label: 'Keep the saved one, else the default' };

/** What PUT /api/admin/idp is sent: choices left at their default are left out. */
export function connectPayload(kind: string, url: string, token: string, choices: Choices): Record<string, string> {
    const payload: Record<string, string> = { kind, url: url.trim() };
    if (token) {
        payload.token = token;
    }

    for (const [key, value] of Object.entries(choices)) {
        if (value.trim()) {
            payload[key] = value.trim();
        }
    }

    return payload;
}

function ConnectCard(props: { url: string; kind: string; kinds: Kinds; tokenSet: boolean; onConnected: () => void }) {
    const [kind, setKind] = useState(props.kind);
    const [url, setUrl] = useState(props.url);
    const [token, setToken] = useState('');
    const [choices, setChoices] = useState<Choices>(NO_CHOICES);
    const [discovery, setDiscovery] = useState<IdpDiscovery | undefined>(undefined);
    const [busy, setBusy] = useState<'discover' | 'save' | undefined>(undefined);
    const [error, setError] = useState<FormError | undefined>(undefined);

    const run = async (what: 'discover' | 'save', work: () => Promise<void>) => {
        setBusy(what);
        setError(undefined);
        try {
            await work();
        } catch (failure) {
            setError(formError(failure, CONNECT_FIELDS));
        } finally {
            setBusy(undefined);
        }
    };
    const discover = () =>
        void run('discover', async () => {
            setDiscovery(await api.post<IdpDiscovery>('/api/admin/idp/discover', { kind, url: url.trim(), token }));
            setChoices(NO_CHOICES);
        });
    const save = (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        void run('save', async () => {
            await api.put('/api/admin/idp', connectPayload(kind, url, token, choices));
            setToken('');
            setDiscovery(undefined);
            props.onConnected();
        });
    };
    const choose = (key: keyof Choices) => (value: string) => setChoices({ ...choices, [key]: value });

    return (
        <Card title="Connect with an API token">
            <p>The token must belong to an administrator of the provider. Discover lists what there is to choose; Connect saves.</p>
            <form class="form admin-form" onSubmit={save}>
                <KindAndUrl
                    kinds={props.kinds}
                    kind={kind}
                    onKind={(chosen) => {
                        setKind(chosen);
                        setDiscovery(undefined);
                    }}
                    url={url}
                    onUrl={setUrl}
                    error={error}
                />
                <Field
                    label="API token"
                    name="token"
                    type="password"
                    value={token}
                    onInput={setToken}
                    required={!props.tokenSet}
                    autocomplete="off"
                    hint={props.tokenSet ? 'Leave empty to keep the token that is set.' : undefined}
                    error={errorFor(error, 'token')}
                />
                {discovery ? (
                    <DiscoveredChoices
                        title={titleOf(props.kinds, kind)}
                        discovery={discovery}
                        choices={choices}
                        choose={choose}
                        error={error}
                    />
                ) : null}
                <div class="form-actions">
                    <Button busy={busy === 'discover'} disabled={busy === 'save' || !token} onClick={discover}>
                        Discover
                    </Button>
                    <Button type="submit" variant="primary" busy={busy === 'save'} disabled={busy === 'discover'}>
                        Connect
                    </Button>
                </div>
                <ErrorText error={errorFor(error)} />
            </form>
        </Card>
    );
}

function DiscoveredChoices(props: {
    title: string;
    discovery: IdpDiscovery;
    choices: Choices;
    choose: (key: keyof Choices) => (value: string) => void;
    error: FormError | undefined;
}) {
    const { discovery, choices, choose, error } = props;
    const outposts = discovery.outposts.filter((outpost) => outpost.type === 'proxy');
    const flowOptions = (flows: IdpDiscovery['flows']['authorization']) => [
        DEFAULT_OPTION,
        ...flows.map((flow) => ({ value: flow.pk, label: flow.name ? `${flow.name} (${flow.slug})` : flow.slug })),
    ];
    return (
        <fieldset class="discovered">
            <legend>
                {props.title} {discovery.version}: choices
            </legend>
            <SelectField
                label="Outpost"
                name="outpost"
                value={choices.outpost}
                onChange={choose('outpost')}
                options={[DEFAULT_OPTION, ...outposts.map((outpost) => ({ value: outpost.pk, label: outpost.name }))]}
                error={errorFor(error, 'outpost')}
            />
            <Field
                label="Outpost URL (where nginx reaches the outpost)"
                name="outpostUrl"
                type="url"
                value={choices.outpostUrl}
                onInput={choose('outpostUrl')}
                hint={`Empty: the saved one, else the ${props.title} URL (the embedded outpost).`}
                error={errorFor(error, 'outpostUrl')}
            />
            <SelectField
                label="Authorization flow"
                name="authorizationFlow"
                value={choices.authorizationFlow}
                onChange={choose('authorizationFlow')}
                options={flowOptions(discovery.flows.authorization)}
                error={errorFor(error, 'authorizationFlow')}
            />
            <SelectField
                label="Invalidation flow"
                name="invalidationFlow"
                value={choices.invalidationFlow}
                onChange={choose('invalidationFlow')}
                options={flowOptions(discovery.flows.invalidation)}
                error={errorFor(error, 'invalidationFlow')}
            />
            <SelectField
                label="Signing key"
                name="signingKey"
                value={choices.signingKey}
                onChange={choose('signingKey')}
                options={[DEFAULT_OPTION, ...discovery.signingKeys.map((key) => ({ value: key.pk, label: key.name }))]}
                error={errorFor(error, 'signingKey')}
            />
        </fieldset>
    );
}
