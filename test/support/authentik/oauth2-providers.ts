/**
 * OAuth2/OpenID providers: `/providers/oauth2/` and their `setup_urls`. authentik's rules beside the schema: the
 * flows, keys, scope mappings and federated providers named must exist; names and client ids are unique; a regex
 * redirect URI must compile; validity fields must read as `hours=1;minutes=2`. Client id and secret are generated when
 * left out, and the secret is shown as authentik shows it. Since 2026.5 a provider created without `grant_types`
 * gets none (the web UI selects them all, the API does not), so it refuses every authorization until some are set.
 * openid-endpoints.ts serves the OpenID side.
 */
import type { ApiOperations } from './api.ts';
import { ApiError, fieldError, unknownPk } from './errors.ts';
import type { Json } from './http.ts';
import { applicationOf, checkFlows, checkUniqueName, findProvider, providerOfKind, providerOperations, showProvider } from './providers.ts';
import { findScopeMapping } from './scope-mappings.ts';
import { type ApplicationRecord, generateId, type OAuth2ProviderRecord, type RedirectUri, type Store } from './store.ts';

/** The grant types authentik's migration gave providers made before the field existed (2026.5). */
const ALL_GRANT_TYPES = [
    'authorization_code',
    'hybrid',
    'implicit',
    'client_credentials',
    'password',
    'urn:ietf:params:oauth:grant-type:device_code',
    'refresh_token',
];
const GRANT_TYPES_SINCE = [2026, 5];
const VALIDITY_FIELDS = ['access_code_validity', 'access_token_validity', 'refresh_token_validity', 'refresh_token_threshold'];
const DURATION_UNITS_MS: Record<string, number> = {
    microseconds: 0.001,
    milliseconds: 1,
    seconds: 1000,
    minutes: 60_000,
    hours: 3_600_000,
    days: 86_400_000,
    weeks: 604_800_000,
};

function hasGrantTypes(version: string): boolean {
    const [major = 0, minor = 0] = version.split('.').map(Number);
    const [sinceMajor = 0, sinceMinor = 0] = GRANT_TYPES_SINCE;
    return major > sinceMajor || (major === sinceMajor && minor >= sinceMinor);
}

/** Fresh each time: the records own their arrays. */
const defaults = (
    store: Store,
): Omit<OAuth2ProviderRecord, 'pk' | 'kind' | 'name' | 'authorization_flow' | 'invalidation_flow' | 'redirect_uris'> => ({
    authentication_flow: null,
    property_mappings: [],
    client_type: 'confidential',
    grant_types: hasGrantTypes(store.version) ? [] : [...ALL_GRANT_TYPES],
    client_id: generateId(40),
    client_secret: generateId(128),
    access_code_validity: 'minutes=1',
    access_token_validity: 'hours=1',
    refresh_token_validity: 'days=30',
    refresh_token_threshold: 'seconds=0',
    include_claims_in_id_token: true,
    signing_key: null,
    encryption_key: null,
    logout_uri: '',
    logout_method: 'backchannel',
    sub_mode: 'hashed_user_id',
    issuer_mode: 'per_provider',
    jwt_federation_sources: [],
    jwt_federation_providers: [],
});

/** authentik's `timedelta_from_string`, in milliseconds; undefined where authentik raises ValueError. */
export function durationMs(expression: string): number | undefined {
    let total = 0;
    let known = 0;
    for (const pair of expression.split(';')) {
        const parts = pair.split('=');
        if (parts.length !== 2) return undefined;
        const unit = DURATION_UNITS_MS[(parts[0] ?? '').toLowerCase()];
        if (unit === undefined) continue;
        const value = Number((parts[1] ?? '').trim());
        if ((parts[1] ?? '').trim() === '' || Number.isNaN(value)) return undefined;
        total += value * unit;
        known++;
    }

    return known > 0 ? total : undefined;
}

/** Python's `re.fullmatch` of a regex redirect URI; false for a pattern JavaScript cannot compile. */
function fullMatch(pattern: string, value: string): boolean {
    try {
        return new RegExp(`^(?:${pattern})$`).test(value);
    } catch {
        return false;
    }
}

const FORBIDDEN_SCHEMES = ['javascript:', 'data:', 'vbscript:'];

/**
 * Whether the redirect URI is allowed, as authentik's `check_redirect_uri`: strict entries compare exactly, regex
 * entries must match the whole URI. A provider without authorization redirect URIs adopts the first one it is sent.
 */
export function allowsRedirect(
    provider: OAuth2ProviderRecord,
    uri: string,
    type: RedirectUri['redirect_uri_type'] = 'authorization',
): boolean {
    if (uri === '') {
        return false;
    }

    const allowed = provider.redirect_uris.filter((entry) => entry.redirect_uri_type === type);
    if (allowed.length === 0 && type === 'authorization') {
        provider.redirect_uris.push({ matching_mode: 'strict', url: uri, redirect_uri_type: 'authorization' });
        return true;
    }

    const matched = allowed.some((entry) => (entry.matching_mode === 'strict' ? entry.url === uri : fullMatch(entry.url, uri)));
    return matched && !FORBIDDEN_SCHEMES.some((scheme) => uri.toLowerCase().startsWith(scheme));
}

/** The issuer: per provider `<url>/application/o/<slug>/`, or global `<url>/`; null without an application. */
export function issuerOf(store: Store, provider: OAuth2ProviderRecord, application = applicationOf(store, provider)): string | null {
    if (provider.issuer_mode === 'global') return `${store.url}/`;
    return application ? `${store.url}/application/o/${application.slug}/` : null;
}

/** The URLs `setup_urls` and the discovery document name. */
export function setupUrls(store: Store, provider: OAuth2ProviderRecord, application: ApplicationRecord): Json {
    const root = `${store.url}/application/o`;
    return {
        issuer: issuerOf(store, provider, application),
        authorize: `${root}/authorize/`,
        token: `${root}/token/`,
        user_info: `${root}/userinfo/`,
        provider_info: `${root}/${application.slug}/.well-known/openid-configuration`,
        logout: `${root}/${application.slug}/end-session/`,
        jwks: `${root}/${application.slug}/jwks/`,
        dcr_registration: null,
    };
}

export function showOAuth2Provider(store: Store, provider: OAuth2ProviderRecord): Json {
    const { kind: _kind, ...fields } = provider;
    return { ...fields, ...showProvider(store, provider) };
}

function normalizedRedirects(body: Json): Json {
    if (!Array.isArray(body.redirect_uris)) {
        return body;
    }

    const redirectUris = (body.redirect_uris as Json[]).map((entry) => ({ redirect_uri_type: 'authorization', ...entry }));
    return { ...body, redirect_uris: redirectUris };
}

function checkKeys(store: Store, body: Json): void {
    for (const field of ['signing_key', 'encryption_key']) {
        const pk = body[field];
        if (pk !== undefined && pk !== null && !store.keypairs.some((keypair) => keypair.pk === pk)) {
            throw unknownPk(field, pk);
        }
    }

    if (body.signing_key && !store.keypairs.some((keypair) => keypair.pk === body.signing_key && keypair.private_key_available)) {
        throw fieldError('signing_key', 'The keypair has no private key, so it cannot sign tokens.');
    }

    if (body.encryption_key) {
        const detail = 'the authentik stand-in does not encrypt tokens (encryption_key)';
        throw new ApiError(400, { encryption_key: [detail] }, detail);
    }
}

function checkReferences(store: Store, body: Json): void {
    const unknownMapping = ((body.property_mappings ?? []) as string[]).find((pk) => !findScopeMapping(store, pk));
    if (unknownMapping) throw unknownPk('property_mappings', unknownMapping);
    // The stand-in has no sources to federate with.
    const [source] = (body.jwt_federation_sources ?? []) as string[];
    if (source) throw unknownPk('jwt_federation_sources', source);
    const federated = ((body.jwt_federation_providers ?? []) as number[]).find((pk) => findProvider(store, pk)?.kind !== 'oauth2');
    if (federated !== undefined) throw unknownPk('jwt_federation_providers', federated);
}

/** The serializer's field checks, then `validate_redirect_uris`, on the fields the request sent. */
function checkRequest(store: Store, body: Json, existing?: OAuth2ProviderRecord): void {
    checkFlows(store, body);
    checkUniqueName(store, body.name, existing);
    if (
        body.client_id !== undefined &&
        store.providers.some((provider) => provider !== existing && provider.client_id === body.client_id)
    ) {
        throw fieldError('client_id', 'OAuth2/OpenID Provider with this Client ID already exists.');
    }

    checkKeys(store, body);
    checkReferences(store, body);
    for (const field of VALIDITY_FIELDS) {
        const value = body[field];
        if (typeof value === 'string' && durationMs(value) === undefined) {
            throw fieldError(field, `${value} is not in the correct format of 'hours=3;minutes=1'.`);
        }
    }

    for (const entry of (body.redirect_uris ?? []) as RedirectUri[]) {
        if (entry.matching_mode === 'regex' && !isRegex(entry.url)) {
            throw fieldError('redirect_uris', `Invalid Regex Pattern: ${entry.url}`);
        }
    }
}

function isRegex(pattern: string): boolean {
    try {
        new RegExp(pattern);
        return true;
    } catch {
        return false;
    }
}

function create(store: Store, body: Json): OAuth2ProviderRecord {
    checkRequest(store, body);
    // The schema checked the body's fields and their types, and the required ones are there.
    const provider = {
        ...defaults(store),
        ...normalizedRedirects(body),
        pk: store.nextProviderPk(),
        kind: 'oauth2',
    } as OAuth2ProviderRecord;
    store.providers.push(provider);
    return provider;
}

function change(store: Store, provider: OAuth2ProviderRecord, body: Json): void {
    checkRequest(store, body, provider);
    Object.assign(provider, normalizedRedirects(body));
}

const SIMPLE_FILTERS = [
    'access_code_validity',
    'access_token_validity',
    'refresh_token_validity',
    'authorization_flow',
    'client_id',
    'client_type',
    'include_claims_in_id_token',
    'issuer_mode',
    'name',
    'signing_key',
    'sub_mode',
] as const;

function filtered(store: Store, query: Record<string, unknown>): OAuth2ProviderRecord[] {
    const mappings =
        Array.isArray(query.property_mappings) && query.property_mappings.length > 0 ? (query.property_mappings as string[]) : undefined;
    return store.providers
        .filter((provider): provider is OAuth2ProviderRecord => provider.kind === 'oauth2')
        .filter(
            (provider) =>
                SIMPLE_FILTERS.every((field) => query[field] === undefined || provider[field] === query[field]) &&
                (query.application === undefined || applicationOf(store, provider)?.pk === query.application) &&
                (!mappings || provider.property_mappings.some((pk) => mappings.includes(pk))),
        );
}

export const oauth2ProviderOperations: ApiOperations = {
    ...providerOperations<OAuth2ProviderRecord>('providers_oauth2', {
        kind: 'oauth2',
        filtered,
        show: showOAuth2Provider,
        create,
        change,
    }),

    providers_oauth2_setup_urls_retrieve: {
        access: 'objects',
        run(context) {
            const provider = providerOfKind<OAuth2ProviderRecord>('oauth2', context);
            const application = applicationOf(context.store, provider);
            // The schema declares this 404 without a body.
            return application ? { status: 200, body: setupUrls(context.store, provider, application) } : { status: 404 };
        },
    },
};
