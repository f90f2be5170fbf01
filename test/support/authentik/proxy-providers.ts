/**
 * Proxy providers (forward auth): `/providers/proxy/`. authentik's rules beside the schema: the flows, certificate
 * and mappings named must exist; names are unique; mode `proxy` (the default, also when a PATCH leaves `mode` out)
 * needs an internal host (reference §10); basic auth needs both attribute names. Every write re-applies
 * `set_oauth_defaults`: a confidential client with the managed scope mappings and the outpost callback URLs.
 */
import { fieldError, nonFieldError, unknownPk } from './errors.ts';
import type { Json } from './http.ts';
import { applicationOf, checkFlows, checkUniqueName, findProvider, providerOperations, showProvider } from './providers.ts';
import { findScopeMapping, proxyScopeMappingPks } from './scope-mappings.ts';
import { generateId, type ProxyProviderRecord, type Store } from './store.ts';

export const CALLBACK_SIGNATURE = 'X-authentik-auth-callback';

/** Fresh each time: the records own their arrays. */
const defaults = (): Omit<
    ProxyProviderRecord,
    'pk' | 'kind' | 'name' | 'authorization_flow' | 'invalidation_flow' | 'external_host' | 'client_id' | 'client_secret'
> => ({
    authentication_flow: null,
    property_mappings: [],
    internal_host: '',
    internal_host_ssl_validation: true,
    certificate: null,
    skip_path_regex: '',
    basic_auth_enabled: false,
    basic_auth_password_attribute: '',
    basic_auth_user_attribute: '',
    mode: 'proxy',
    intercept_header_auth: true,
    cookie_domain: '',
    jwt_federation_sources: [],
    jwt_federation_providers: [],
    access_token_validity: 'hours=24',
    refresh_token_validity: 'days=30',
});

/** The redirect URIs `set_oauth_defaults` registers: the outpost's callback on the external host. */
export function callbackUrls(provider: ProxyProviderRecord): string[] {
    const signature = `?${CALLBACK_SIGNATURE}=true`;
    return [
        `${new URL('outpost.goauthentik.io/callback', provider.external_host).href}${signature}`,
        `${provider.external_host}${signature}`,
    ];
}

export function showProxyProvider(store: Store, provider: ProxyProviderRecord): Json {
    const { kind: _kind, client_secret: _secret, ...fields } = provider;
    return {
        ...fields,
        ...showProvider(store, provider),
        redirect_uris: callbackUrls(provider).map((url) => ({ matching_mode: 'strict', url, redirect_uri_type: 'authorization' })),
        outpost_set: store.outposts
            .filter((outpost) => outpost.providers.includes(provider.pk))
            .map((outpost) => `Outpost ${outpost.name}`),
    };
}

/** The serializer's field checks, then its `validate`, on the fields the request sent. */
function checkRequest(store: Store, body: Json, existing?: ProxyProviderRecord): void {
    checkFlows(store, body);
    checkUniqueName(store, body.name, existing);
    if (body.certificate && !store.keypairs.some((keypair) => keypair.pk === body.certificate)) {
        throw unknownPk('certificate', body.certificate);
    }

    const unknownMapping = ((body.property_mappings ?? []) as string[]).find((pk) => !findScopeMapping(store, pk));
    if (unknownMapping) throw unknownPk('property_mappings', unknownMapping);
    // The stand-in has no sources to federate with.
    const [source] = (body.jwt_federation_sources ?? []) as string[];
    if (source) throw unknownPk('jwt_federation_sources', source);
    const federated = ((body.jwt_federation_providers ?? []) as number[]).find((pk) => findProvider(store, pk)?.kind !== 'oauth2');
    if (federated !== undefined) throw unknownPk('jwt_federation_providers', federated);
    if (body.basic_auth_enabled === true && (!body.basic_auth_password_attribute || !body.basic_auth_user_attribute)) {
        throw fieldError('basic_auth_enabled', 'User and password attributes must be set when basic auth is enabled.');
    }

    if ((body.mode ?? 'proxy') === 'proxy' && (body.internal_host ?? '') === '') {
        throw nonFieldError('Internal host cannot be empty when forward auth is disabled.');
    }
}

function applyOauthDefaults(store: Store, provider: ProxyProviderRecord): void {
    provider.property_mappings = [...new Set([...provider.property_mappings, ...proxyScopeMappingPks(store)])];
}

function create(store: Store, body: Json): ProxyProviderRecord {
    checkRequest(store, body);
    // The schema checked the body's fields and their types, and the required ones are there.
    const provider = {
        ...defaults(),
        ...body,
        pk: store.nextProviderPk(),
        kind: 'proxy',
        client_id: generateId(40),
        client_secret: generateId(128),
    } as ProxyProviderRecord;
    applyOauthDefaults(store, provider);
    store.providers.push(provider);
    return provider;
}

function change(store: Store, provider: ProxyProviderRecord, body: Json): void {
    checkRequest(store, body, provider);
    Object.assign(provider, body);
    applyOauthDefaults(store, provider);
}

/** `<field>__iexact` on one of the provider's own fields (not `certificate__name__iexact`). */
const OWN_FIELD_FILTER = /^([a-z]+(?:_[a-z]+)*)__iexact$/;

const iexact = (value: unknown, wanted: unknown): boolean =>
    wanted === undefined || (typeof wanted === 'string' ? String(value ?? '').toLowerCase() === wanted.toLowerCase() : value === wanted);

function filtered(store: Store, query: Record<string, unknown>): ProxyProviderRecord[] {
    const providers = store.providers.filter((provider): provider is ProxyProviderRecord => provider.kind === 'proxy');
    return providers.filter((provider) => {
        const certificate = store.keypairs.find((keypair) => keypair.pk === provider.certificate);
        const authorizationFlow = store.flows.find((flow) => flow.pk === provider.authorization_flow);
        const fieldsMatch = Object.entries(query).every(([key, wanted]) => {
            const field = OWN_FIELD_FILTER.exec(key)?.[1];
            return !field || field === 'property_mappings' || iexact(provider[field as keyof ProxyProviderRecord], wanted);
        });
        return (
            fieldsMatch &&
            (query.application__isnull === undefined || (applicationOf(store, provider) === undefined) === query.application__isnull) &&
            iexact(authorizationFlow?.slug, query.authorization_flow__slug__iexact) &&
            iexact(certificate?.name, query.certificate__name__iexact) &&
            iexact(certificate?.pk, query.certificate__kp_uuid__iexact)
        );
    });
}

export const proxyProviderOperations = providerOperations<ProxyProviderRecord>('providers_proxy', {
    kind: 'proxy',
    filtered,
    show: showProxyProvider,
    create,
    change,
});
