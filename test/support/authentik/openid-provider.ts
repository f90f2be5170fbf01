/**
 * One real OpenID Connect provider (the `oidc-provider` package) per OAuth2 provider of the stand-in, configured
 * from its record as authentik would serve it: issuer per application slug, authentik's endpoint paths, the record's
 * client (its secret, its redirect URIs matched by authentik's rules), claims only from the attached scope mappings,
 * `sub` per `sub_mode`, ID tokens signed RS256 with the signing key's RSA key or HS256 with the client secret, token
 * lifetimes from the validity fields. The records are changed in place by the API, so what they say is read at each
 * request, except what oidc-provider fixes when it starts (issuer, keys, scopes and their claims); `configurationKey`
 * changes with those, and the caller then builds a new instance over the same storage, so sessions, codes and tokens
 * outlive the change.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import Provider, {
    type Adapter,
    type AdapterPayload,
    type ClientMetadata,
    type Configuration,
    type ErrorOut,
    type JWK,
    type KoaContextWithOIDC,
} from 'oidc-provider';

import { privateKeyOf } from './crypto.ts';
import { findFlow } from './flows.ts';
import type { Json } from './http.ts';
import { logoutPage, messagePage } from './login-page.ts';
import { allowsRedirect, durationMs, issuerOf } from './oauth2-providers.ts';
import { findScopeMapping, mappingClaimNames, mappingClaims, subjectOf } from './scope-mappings.ts';
import type { ApplicationRecord, OAuth2ProviderRecord, ScopeMappingRecord, Store, UserRecord } from './store.ts';

export const OAUTH2_ROOT = '/application/o';
export const ACR = 'goauthentik.io/providers/oauth2/default';
const DAY_S = 24 * 60 * 60;
const PLACEHOLDER_REDIRECT = 'https://redirect-uris.stand-in.invalid/';

interface Stored {
    payload: AdapterPayload;
    expiresAt?: number;
}

/** What oidc-provider keeps for one OAuth2 provider (sessions, interactions, grants, codes, tokens), by model and id. */
export class OpenIdStorage {
    readonly #entries = new Map<string, Stored>();

    find(model: string, id: string): AdapterPayload | undefined {
        const key = `${model}:${id}`;
        const entry = this.#entries.get(key);
        if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
            this.#entries.delete(key);
            return undefined;
        }

        return entry?.payload;
    }

    /** The adapter of one model; `Client` is answered from the record instead (`client`). */
    adapter(model: string, client: (id: string) => ClientMetadata | undefined): Adapter {
        const entries = this.#entries;
        const find = (id: string): AdapterPayload | undefined => (model === 'Client' ? client(id) : this.find(model, id));
        const findBy = (field: 'uid' | 'userCode', value: string): AdapterPayload | undefined => {
            for (const [key, entry] of entries) {
                if (key.startsWith(`${model}:`) && entry.payload[field] === value) return this.find(model, key.slice(model.length + 1));
            }

            return undefined;
        };
        return {
            async upsert(id, payload, expiresIn) {
                entries.set(`${model}:${id}`, { payload, expiresAt: expiresIn ? Date.now() + expiresIn * 1000 : undefined });
            },
            find: async (id) => find(id),
            findByUid: async (uid) => findBy('uid', uid),
            findByUserCode: async (userCode) => findBy('userCode', userCode),
            async consume(id) {
                const entry = entries.get(`${model}:${id}`);
                if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
            },
            async destroy(id) {
                entries.delete(`${model}:${id}`);
            },
            async revokeByGrantId(grantId) {
                for (const [key, entry] of entries) {
                    if (entry.payload.grantId === grantId) entries.delete(key);
                }
            },
        };
    }
}

/** The parts of the stand-in an OpenID provider reads. */
export interface OpenIdSource {
    store: Store;
    provider: OAuth2ProviderRecord;
    application: ApplicationRecord;
    storage: OpenIdStorage;
    cookieKeys: string[];
    /** Told what fails inside oidc-provider: a stand-in bug. */
    onServerError(error: Error): void;
}

function attachedMappings(store: Store, provider: OAuth2ProviderRecord): ScopeMappingRecord[] {
    return provider.property_mappings
        .map((pk) => findScopeMapping(store, pk))
        .filter((mapping) => mapping !== undefined)
        .sort((a, b) => a.scope_name.localeCompare(b.scope_name));
}

/** The scopes the provider's mappings answer, as authentik offers them: only those are granted. */
export function mappedScopes(store: Store, provider: OAuth2ProviderRecord): string[] {
    return [...new Set(attachedMappings(store, provider).map((mapping) => mapping.scope_name))];
}

/** Each scope with the claims its mappings add: oidc-provider releases only claims of granted scopes. */
function scopeClaims(store: Store, provider: OAuth2ProviderRecord): Record<string, string[] | null> {
    const claims: Record<string, string[] | null> = { openid: ['sub'], acr: null, auth_time: null, sid: null, iss: null };
    for (const mapping of attachedMappings(store, provider)) {
        const before = claims[mapping.scope_name] ?? [];
        claims[mapping.scope_name] = [...new Set([...before, ...mappingClaimNames(mapping)])];
    }

    return claims;
}

/** What oidc-provider fixes when it starts: when this changes, the instance must be built again. */
export function configurationKey(source: Omit<OpenIdSource, 'storage' | 'cookieKeys' | 'onServerError'>): string {
    const { store, provider, application } = source;
    return JSON.stringify({
        issuer: issuerOf(store, provider, application),
        slug: application.slug,
        signingKey: provider.signing_key,
        claimsInIdToken: provider.include_claims_in_id_token,
        claims: scopeClaims(store, provider),
    });
}

function signingJwks(store: Store, provider: OAuth2ProviderRecord): JWK[] {
    const keypair = store.keypairs.find((candidate) => candidate.pk === provider.signing_key);
    const key = keypair && privateKeyOf(keypair);
    return key ? [{ ...(key.export({ format: 'jwk' }) as JWK), use: 'sig', alg: 'RS256' }] : [];
}

const isWebUrl = (url: string): boolean => /^https?:$/.test(URL.parse(url)?.protocol ?? '') && !url.includes('#');

function strictUrls(provider: OAuth2ProviderRecord, type: 'authorization' | 'logout'): string[] {
    return provider.redirect_uris
        .filter((entry) => entry.redirect_uri_type === type && entry.matching_mode === 'strict' && isWebUrl(entry.url))
        .map((entry) => entry.url);
}

/** The client as oidc-provider registers it; which redirect URIs are allowed is decided by `allowsRedirect`. */
function clientMetadata(provider: OAuth2ProviderRecord): ClientMetadata {
    const strict = strictUrls(provider, 'authorization');
    const refresh = provider.grant_types.includes('refresh_token') ? ['refresh_token'] : [];
    return {
        client_id: provider.client_id,
        client_secret: provider.client_secret,
        // oidc-provider wants at least one valid URL here; regex entries are not URLs, and none are needed.
        redirect_uris: strict.length > 0 ? strict : [PLACEHOLDER_REDIRECT],
        post_logout_redirect_uris: strictUrls(provider, 'logout'),
        grant_types: ['authorization_code', ...refresh],
        response_types: ['code'],
        // client_secret_basic arrives rewritten as client_secret_post (openid-endpoints.ts), so both work.
        token_endpoint_auth_method: provider.client_type === 'confidential' ? 'client_secret_post' : 'none',
        id_token_signed_response_alg: provider.signing_key ? 'RS256' : 'HS256',
    };
}

function userClaims(store: Store, provider: OAuth2ProviderRecord, user: UserRecord, scope: string): Json {
    const granted = new Set(scope.split(' '));
    const claims: Json = {};
    for (const mapping of attachedMappings(store, provider).filter((candidate) => granted.has(candidate.scope_name))) {
        Object.assign(claims, mappingClaims(store, mapping, user));
    }

    return claims;
}

const ERROR_TITLES: Record<string, string> = {
    invalid_redirect_uri: 'Redirect URI Error',
    invalid_client: 'Client ID Error',
};

/** authentik's wording for the errors it shows as a page; oidc-provider's for the rest. */
const ERROR_MESSAGES: Record<string, string> = {
    invalid_redirect_uri: 'The request fails due to a missing, invalid, or mismatching redirection URI (redirect_uri).',
    invalid_client: 'The client identifier (client_id) is missing or invalid.',
};

function renderError(ctx: KoaContextWithOIDC, out: ErrorOut): void {
    ctx.type = 'html';
    ctx.body = messagePage(ERROR_TITLES[out.error] ?? out.error, ERROR_MESSAGES[out.error] ?? out.error_description ?? '');
}

function seconds(validity: string, fallback: number): number {
    return Math.max(1, Math.floor((durationMs(validity) ?? fallback * 1000) / 1000));
}

function configuration(source: OpenIdSource): Configuration {
    const { store, provider, application, storage } = source;
    const client = (id: string): ClientMetadata | undefined => (id === provider.client_id ? clientMetadata(provider) : undefined);
    const root = `${OAUTH2_ROOT}/${application.slug}`;
    const cookie = (name: string): string => `authentik_oidc_${provider.pk}_${name}`;
    const redirectOrigins = (): string[] => strictUrls(provider, 'authorization').map((url) => new URL(url).origin);
    return {
        adapter: (model: string) => storage.adapter(model, client),
        acrValues: [ACR],
        claims: scopeClaims(store, provider),
        scopes: [...new Set(['openid', ...mappedScopes(store, provider)])],
        conformIdTokenClaims: !provider.include_claims_in_id_token,
        clientAuthMethods: ['client_secret_post', 'client_secret_basic', 'none'],
        responseTypes: ['code'],
        allowOmittingSingleRegisteredRedirectUri: false,
        pkce: { required: () => false },
        jwks: { keys: signingJwks(store, provider) },
        enabledJWA: { idTokenSigningAlgValues: [provider.signing_key ? 'RS256' : 'HS256'] },
        cookies: {
            names: { session: cookie('session'), interaction: cookie('interaction'), resume: cookie('resume') },
            keys: source.cookieKeys,
        },
        routes: {
            authorization: `${OAUTH2_ROOT}/authorize/`,
            token: `${OAUTH2_ROOT}/token/`,
            userinfo: `${OAUTH2_ROOT}/userinfo/`,
            jwks: `${root}/jwks/`,
            end_session: `${root}/end-session/`,
        },
        features: {
            devInteractions: { enabled: false },
            userinfo: { enabled: true },
            rpInitiatedLogout: {
                enabled: true,
                logoutSource(ctx, form) {
                    ctx.body = logoutPage(form, application.name);
                },
                postLogoutSuccessSource(ctx) {
                    const flow = findFlow(store, provider.invalidation_flow);
                    ctx.body = messagePage(flow?.name ?? 'Logout', `You've logged out of ${application.name}.`);
                },
            },
        },
        clientBasedCORS: (_ctx, origin) => redirectOrigins().includes(origin),
        ttl: {
            AuthorizationCode: () => seconds(provider.access_code_validity, 60),
            AccessToken: () => seconds(provider.access_token_validity, 3600),
            IdToken: () => seconds(provider.access_token_validity, 3600),
            RefreshToken: () => seconds(provider.refresh_token_validity, 30 * DAY_S),
            Interaction: 3600,
            Session: 14 * DAY_S,
            Grant: 14 * DAY_S,
        },
        // As authentik: a refresh token when offline_access was granted (oidc-provider's default adds public web clients).
        issueRefreshToken: (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
        // authentik judges the policies on every authorization, so a grant never skips the authorization flow.
        loadExistingGrant: async (ctx) => {
            const grantId = ctx.oidc.result?.consent?.grantId;
            return grantId ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
        },
        interactions: {
            url: (_ctx, interaction) => {
                const flow = findFlow(store, provider.authorization_flow);
                const query = new URLSearchParams({ client_id: String(interaction.params.client_id ?? '') });
                return `${store.url}/if/flow/${flow?.slug ?? ''}/?${query}`;
            },
        },
        findAccount: (_ctx, sub) => {
            const user = store.users.find((candidate) => candidate.is_active && subjectOf(store, provider.sub_mode, candidate) === sub);
            return user && { accountId: sub, claims: (_use, scope) => ({ sub, ...userClaims(store, provider, user, scope) }) };
        },
        renderError: (ctx, out) => renderError(ctx, out),
    };
}

export interface OpenIdInstance {
    provider: Provider;
    handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
}

export function buildOpenIdProvider(source: OpenIdSource): OpenIdInstance {
    const { store, provider, application } = source;
    const issuer = issuerOf(store, provider, application) ?? `${store.url}/`;
    const oidc = new Provider(issuer, configuration(source));
    const client = oidc.Client.prototype as {
        redirectUriAllowed(uri: string): boolean;
        postLogoutRedirectUriAllowed(uri: string): boolean;
    };
    client.redirectUriAllowed = (uri) => allowsRedirect(provider, uri);
    client.postLogoutRedirectUriAllowed = (uri) => allowsRedirect(provider, uri, 'logout');
    oidc.on('server_error', (_ctx: unknown, error: Error) => source.onServerError(error));
    // A client the stand-in describes wrongly is its own bug, whatever endpoint meets it.
    const clientError = (_ctx: unknown, error: Error & { error?: string }) => {
        if (error.error === 'invalid_client_metadata') source.onServerError(error);
    };
    oidc.on('authorization.error', clientError);
    oidc.on('grant.error', clientError);
    oidc.on('userinfo.error', clientError);
    oidc.on('end_session.error', clientError);
    const callback = oidc.callback();
    return {
        provider: oidc,
        handle: async (request, response) => {
            await callback(request, response);
        },
    };
}
