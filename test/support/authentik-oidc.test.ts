import Crypto from 'node:crypto';

import {
    type ApiResponse,
    Configuration,
    CoreApi,
    FlowsApi,
    GrantTypeEnum,
    MatchingModeEnum,
    type OAuth2ProviderRequest,
    PoliciesApi,
    PropertymappingsApi,
    ProvidersApi,
    CryptoApi,
    ResponseError,
} from '@goauthentik/api';
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as OpenId from 'openid-client';

import { type AuthentikStandIn, startAuthentikStandIn } from './authentik/index.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

type Json = Record<string, unknown>;

const SCOPE = 'goauthentik.io/providers/oauth2/scope-';
const SVC_GROUPS = (username: string) => `return {"svc_groups": ["admin"] if request.user.username == "${username}" else ["user"]}`;
const FLOW_GRANTS = [GrantTypeEnum.AuthorizationCode, GrantTypeEnum.RefreshToken];

function clients(standIn: AuthentikStandIn) {
    const configuration = new Configuration({ basePath: `${standIn.url}/api/v3`, accessToken: standIn.bootstrapToken });
    return {
        core: new CoreApi(configuration),
        crypto: new CryptoApi(configuration),
        flows: new FlowsApi(configuration),
        mappings: new PropertymappingsApi(configuration),
        policies: new PoliciesApi(configuration),
        providers: new ProvidersApi(configuration),
    };
}

type Clients = ReturnType<typeof clients>;

async function json<T = Json>(call: Promise<ApiResponse<unknown>>): Promise<T> {
    return (await (await call).raw.json()) as T;
}

async function refusal(call: Promise<unknown>): Promise<{ status: number; body: Json }> {
    const error = (await expect(call).to.reject(ResponseError)) as ResponseError;
    const text = await error.response.text();
    return { status: error.response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
}

async function flowPk(api: Clients, slug: string): Promise<string> {
    const page = await json<{ results: Json[] }>(api.flows.flowsInstancesListRaw({ slug }));
    return String(page.results[0]?.pk);
}

/** The pks of the managed mappings, by the last part of their managed name (`openid`, `email`...). */
async function managedMappings(api: Clients): Promise<Record<string, string>> {
    const managed = ['openid', 'email', 'profile', 'offline_access'].map((scope) => `${SCOPE}${scope}`);
    const page = await json<{ results: Json[] }>(api.mappings.propertymappingsProviderScopeListRaw({ managed }));
    return Object.fromEntries(page.results.map((mapping) => [String(mapping.managed).slice(SCOPE.length), String(mapping.pk)]));
}

async function signingKey(api: Clients): Promise<string> {
    const page = await json<{ results: Json[] }>(api.crypto.cryptoCertificatekeypairsListRaw({ hasKey: true }));
    return String(page.results[0]?.pk);
}

async function providerRequest(api: Clients, name: string, fields: Partial<OAuth2ProviderRequest> = {}): Promise<OAuth2ProviderRequest> {
    return {
        name,
        authorizationFlow: await flowPk(api, 'default-provider-authorization-implicit-consent'),
        invalidationFlow: await flowPk(api, 'default-provider-invalidation-flow'),
        redirectUris: [],
        ...fields,
    };
}

/** An OIDC app as Gatehouse sets one up: provider, application, group bindings. */
async function oidcApp(api: Clients, slug: string, fields: Partial<OAuth2ProviderRequest>, groups: string[]): Promise<Json> {
    const provider = await json(
        api.providers.providersOauth2CreateRaw({ oAuth2ProviderRequest: await providerRequest(api, `dp-${slug}-sso`, fields) }),
    );
    const application = await json(
        api.core.coreApplicationsCreateRaw({ applicationRequest: { name: slug, slug, provider: Number(provider.pk) } }),
    );
    for (const [order, group] of groups.entries()) {
        await api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target: String(application.pk), group, order } });
    }

    return provider;
}

interface Step {
    status: number;
    url: string;
    location?: string;
    body: string;
}

/** A browser by hand: one cookie jar for the stand-in's host, redirects followed one at a time. */
class Browser {
    readonly cookies = new Map<string, string>();

    constructor(private readonly origin: string) {}

    async request(url: string, form?: Record<string, string>): Promise<Step> {
        const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        const response = await fetch(url, {
            method: form ? 'POST' : 'GET',
            redirect: 'manual',
            headers: { ...(cookie ? { cookie } : {}), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
            body: form ? new URLSearchParams(form).toString() : undefined,
        });
        this.#keep(response);
        const location = response.headers.get('location') ?? undefined;
        return { status: response.status, url, location: location && new URL(location, url).href, body: await response.text() };
    }

    #keep(response: Response): void {
        for (const line of response.headers.getSetCookie()) {
            const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
            const name = pair.slice(0, pair.indexOf('='));
            const value = pair.slice(pair.indexOf('=') + 1);
            const expired = attributes.some((attribute) => /^max-age=0$/i.test(attribute) || /^expires=.*1970/i.test(attribute));
            if (value === '' || expired) {
                this.cookies.delete(name);
            } else {
                this.cookies.set(name, value);
            }
        }
    }

    /** Follows redirects on the stand-in, signing in once on the sign-in form; stops where a redirect leaves it. */
    async authorize(
        url: string,
        credentials?: { username: string; password: string },
    ): Promise<{ last: Step; callback?: URL; trail: string[] }> {
        const trail: string[] = [];
        let signedIn = false;
        let step = await this.request(url);
        for (let hop = 0; hop < 20; hop++) {
            trail.push(`${new URL(step.url).pathname} ${step.status}`);
            if (step.location && !step.location.startsWith(this.origin)) {
                return { last: step, callback: new URL(step.location), trail };
            }

            if (step.location) {
                step = await this.request(step.location);
            } else if (credentials && !signedIn && step.status === 200 && step.body.includes('name="uid_field"')) {
                signedIn = true;
                step = await this.request(step.url, { uid_field: credentials.username, password: credentials.password });
            } else {
                return { last: step, trail };
            }
        }

        throw new Error(`too many redirects: ${trail.join(' -> ')}`);
    }
}

const decodePart = (part: string | undefined): Json => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Json;

/** The JWT's header and claims once its signature checks out with the JWKS (RS256) or the secret (HS256). */
async function verifiedJwt(token: string, keys: { jwksUrl?: string; secret?: string }): Promise<{ header: Json; claims: Json }> {
    const [header, payload, signature = ''] = token.split('.');
    const signed = Buffer.from(`${header}.${payload}`);
    const decodedHeader = decodePart(header);
    let valid: boolean;
    if (decodedHeader.alg === 'HS256') {
        valid =
            Crypto.createHmac('sha256', keys.secret ?? '')
                .update(signed)
                .digest('base64url') === signature;
    } else {
        const jwks = (await (await fetch(keys.jwksUrl ?? '')).json()) as { keys: Array<Json & Crypto.webcrypto.JsonWebKey> };
        const jwk = jwks.keys.find((candidate) => candidate.kid === decodedHeader.kid);
        valid =
            jwk !== undefined &&
            Crypto.verify('sha256', signed, Crypto.createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature, 'base64url'));
    }

    expect(valid, 'JWT signature').to.be.true();
    return { header: decodedHeader, claims: decodePart(payload) };
}

async function relyingParty(standIn: AuthentikStandIn, slug: string, provider: Json, options: { basic?: boolean; alg?: string } = {}) {
    const secret = String(provider.client_secret);
    const metadata = { client_secret: secret, ...(options.alg ? { id_token_signed_response_alg: options.alg } : {}) };
    const issuer = new URL(`${standIn.url}/application/o/${slug}/`);
    return await OpenId.discovery(
        issuer,
        String(provider.client_id),
        metadata,
        options.basic ? OpenId.ClientSecretBasic(secret) : undefined,
        {
            execute: [OpenId.allowInsecureRequests],
        },
    );
}

/** The authorization request an app makes, with PKCE and state. */
async function authorizationRequest(config: OpenId.Configuration, redirectUri: string, scope = 'openid email profile') {
    const verifier = OpenId.randomPKCECodeVerifier();
    const state = OpenId.randomState();
    const url = OpenId.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope,
        state,
        code_challenge: await OpenId.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
    });
    return { url: url.href, checks: { pkceCodeVerifier: verifier, expectedState: state } };
}

describe('authentik stand-in: OAuth2 providers and scope mappings', () => {
    let standIn: AuthentikStandIn;
    let api: Clients;

    before(async () => {
        standIn = await startAuthentikStandIn();
        api = clients(standIn);
    });

    after(async () => {
        await standIn.close();
    });

    it('lists the managed scope mappings by their managed names, as a fresh install has them', async () => {
        const page = await json<{ results: Json[] }>(
            api.mappings.propertymappingsProviderScopeListRaw({ managed: [`${SCOPE}openid`, `${SCOPE}email`, `${SCOPE}profile`] }),
        );
        expect(page.results.map((mapping) => mapping.scope_name)).to.equal(['email', 'openid', 'profile']);
        const email = page.results.find((mapping) => mapping.scope_name === 'email');
        expect(email).to.include({
            name: "authentik default OAuth Mapping: OpenID 'email'",
            component: 'ak-property-mapping-provider-scope-form',
        });
        expect(email?.expression).to.contain('"email_verified": False');
        const all = await json<{ results: Json[] }>(api.mappings.propertymappingsProviderScopeListRaw({ managedIsnull: false }));
        expect(all.results.map((mapping) => mapping.managed).sort()).to.equal([
            `${SCOPE}authentik_api`,
            `${SCOPE}email`,
            `${SCOPE}entitlements`,
            `${SCOPE}offline_access`,
            `${SCOPE}openid`,
            `${SCOPE}profile`,
            'goauthentik.io/providers/proxy/scope-proxy',
        ]);
        expect(standIn.violations).to.equal([]);
    });

    it('creates the one custom expression it understands; refuses other Python with 400 naming that, as a violation', async () => {
        const created = await json(
            api.mappings.propertymappingsProviderScopeCreateRaw({
                scopeMappingRequest: { name: 'dp-wiki svc_groups', scopeName: 'profile', expression: SVC_GROUPS('alice'), managed: 'mine' },
            }),
        );
        expect(created).to.include({ scope_name: 'profile', managed: null, description: '', expression: SVC_GROUPS('alice') });
        const python = await refusal(
            api.mappings.propertymappingsProviderScopeCreateRaw({
                scopeMappingRequest: { name: 'other', scopeName: 'profile', expression: 'return {"x": request.user.attributes.get("x")}' },
            }),
        );
        expect(python.status).to.equal(400);
        expect(String((python.body.expression as string[])[0])).to.contain('does not run Python');
        expect(standIn.violations).to.have.length(1);
        standIn.violations.length = 0;
        const taken = await refusal(
            api.mappings.propertymappingsProviderScopeCreateRaw({
                scopeMappingRequest: { name: 'dp-wiki svc_groups', scopeName: 'profile', expression: SVC_GROUPS('bob') },
            }),
        );
        expect(taken.body).to.equal({ name: ['Property Mapping with this name already exists.'] });
        const spaced = await refusal(
            api.mappings.propertymappingsProviderScopeCreateRaw({
                scopeMappingRequest: { name: 'spaced', scopeName: 'two words', expression: SVC_GROUPS('bob') },
            }),
        );
        expect(spaced.body).to.equal({ scope_name: ['Value must not contain spaces.'] });
        const patched = await json(
            api.mappings.propertymappingsProviderScopePartialUpdateRaw({
                pmUuid: String(created.pk),
                patchedScopeMappingRequest: { expression: SVC_GROUPS('carol') },
            }),
        );
        expect(patched.expression).to.equal(SVC_GROUPS('carol'));
        expect(standIn.violations).to.equal([]);
    });

    it('creates an OAuth2 provider as authentik does: generated client id and secret, defaults, no grant types since 2026.5', async () => {
        const mappings = await managedMappings(api);
        const created = await json(
            api.providers.providersOauth2CreateRaw({
                oAuth2ProviderRequest: await providerRequest(api, 'dp-notes-sso', {
                    redirectUris: [{ matchingMode: MatchingModeEnum.Strict, url: 'https://notes.apps.test/callback' }],
                    propertyMappings: [mappings.openid ?? '', mappings.email ?? ''],
                }),
            }),
        );
        expect(created.client_id).to.match(/^[a-zA-Z0-9]{40}$/);
        expect(created.client_secret).to.match(/^[a-zA-Z0-9]{128}$/);
        expect(created).to.include({
            client_type: 'confidential',
            grant_types: [],
            sub_mode: 'hashed_user_id',
            issuer_mode: 'per_provider',
            include_claims_in_id_token: true,
            access_code_validity: 'minutes=1',
            access_token_validity: 'hours=1',
            signing_key: null,
            component: 'ak-provider-oauth2-form',
            meta_model_name: 'authentik_providers_oauth2.oauth2provider',
            verbose_name: 'OAuth2/OpenID Provider',
            redirect_uris: [{ matching_mode: 'strict', url: 'https://notes.apps.test/callback', redirect_uri_type: 'authorization' }],
            property_mappings: [mappings.openid, mappings.email],
        });
        const id = Number(created.pk);
        const byClient = await json<{ results: Json[] }>(api.providers.providersOauth2ListRaw({ clientId: String(created.client_id) }));
        expect(byClient.results.map((provider) => provider.pk)).to.equal([id]);
        const patched = await json(
            api.providers.providersOauth2PartialUpdateRaw({
                id,
                patchedOAuth2ProviderRequest: { clientId: 'notes-client', grantTypes: FLOW_GRANTS, subMode: 'user_username' },
            }),
        );
        expect(patched).to.include({ client_id: 'notes-client', client_secret: created.client_secret, grant_types: FLOW_GRANTS });
        const application = await json(
            api.core.coreApplicationsCreateRaw({ applicationRequest: { name: 'Notes', slug: 'notes', provider: id } }),
        );
        expect(application.launch_url).to.equal('https://notes.apps.test');
        const byApplication = await json<{ results: Json[] }>(
            api.providers.providersOauth2ListRaw({ application: String(application.pk) }),
        );
        expect(byApplication.results.map((provider) => provider.name)).to.equal(['dp-notes-sso']);
        expect(standIn.violations).to.equal([]);
    });

    it('gives a provider created without grant types all of them on a server older than 2026.5', async () => {
        const older = await startAuthentikStandIn({ version: '2026.2.4' });
        try {
            const olderApi = clients(older);
            const created = await json(
                olderApi.providers.providersOauth2CreateRaw({ oAuth2ProviderRequest: await providerRequest(olderApi, 'dp-old-sso') }),
            );
            expect(created.grant_types).to.include(['authorization_code', 'refresh_token']);
            expect(older.violations).to.equal([]);
        } finally {
            await older.close();
        }
    });

    it("refuses what authentik's rules refuse with 400 in DRF's shape", async () => {
        await api.providers.providersOauth2CreateRaw({
            oAuth2ProviderRequest: await providerRequest(api, 'dp-taken-sso', { clientId: 'taken' }),
        });
        const name = await refusal(
            api.providers.providersOauth2CreateRaw({ oAuth2ProviderRequest: await providerRequest(api, 'dp-taken-sso') }),
        );
        expect(name).to.equal({ status: 400, body: { name: ['provider with this name already exists.'] } });
        const clientId = await refusal(
            api.providers.providersOauth2CreateRaw({
                oAuth2ProviderRequest: await providerRequest(api, 'dp-other-sso', { clientId: 'taken' }),
            }),
        );
        expect(clientId.body).to.equal({ client_id: ['OAuth2/OpenID Provider with this Client ID already exists.'] });
        const ghost = Crypto.randomUUID();
        const key = await refusal(
            api.providers.providersOauth2CreateRaw({
                oAuth2ProviderRequest: await providerRequest(api, 'dp-other-sso', { signingKey: ghost }),
            }),
        );
        expect(key.body).to.equal({ signing_key: [`Invalid pk "${ghost}" - object does not exist.`] });
        const regex = await refusal(
            api.providers.providersOauth2CreateRaw({
                oAuth2ProviderRequest: await providerRequest(api, 'dp-other-sso', {
                    redirectUris: [{ matchingMode: MatchingModeEnum.Regex, url: 'https://(unclosed.test/' }],
                }),
            }),
        );
        expect(regex.body).to.equal({ redirect_uris: ['Invalid Regex Pattern: https://(unclosed.test/'] });
        const validity = await refusal(
            api.providers.providersOauth2CreateRaw({
                oAuth2ProviderRequest: await providerRequest(api, 'dp-other-sso', { accessTokenValidity: 'an hour' }),
            }),
        );
        expect(validity.body).to.equal({ access_token_validity: ["an hour is not in the correct format of 'hours=3;minutes=1'."] });
        expect(standIn.violations).to.equal([]);
    });

    it('refuses what the schema refuses with 400 and records each as a violation', async () => {
        const base = await providerRequest(api, 'dp-bad-sso');
        const headers = { authorization: `Bearer ${standIn.bootstrapToken}`, 'content-type': 'application/json' };
        const post = async (body: Json) => {
            const response = await fetch(`${standIn.url}/api/v3/providers/oauth2/`, {
                method: 'POST',
                headers,
                body: JSON.stringify(body),
            });
            return { status: response.status, body: (await response.json()) as Json };
        };
        const flows = { name: base.name, authorization_flow: base.authorizationFlow, invalidation_flow: base.invalidationFlow };
        expect(await post(flows)).to.equal({ status: 400, body: { redirect_uris: ['This field is required.'] } });
        const mode = await post({ ...flows, redirect_uris: [{ matching_mode: 'prefix', url: 'https://x.test/' }] });
        expect(mode.status).to.equal(400);
        expect(mode.body.redirect_uris).to.exist();
        expect(standIn.violations).to.have.length(2);
        expect(String(standIn.violations[0])).to.startWith('POST /api/v3/providers/oauth2/: body');
        standIn.violations.length = 0;
    });

    it('answers setup_urls only once an application is bound: 404 before, then the URLs', async () => {
        const provider = await json(
            api.providers.providersOauth2CreateRaw({ oAuth2ProviderRequest: await providerRequest(api, 'dp-docs-sso') }),
        );
        const id = Number(provider.pk);
        expect((await refusal(api.providers.providersOauth2SetupUrlsRetrieveRaw({ id }))).status).to.equal(404);
        await api.core.coreApplicationsCreateRaw({ applicationRequest: { name: 'Docs', slug: 'docs', provider: id } });
        const urls = await json(api.providers.providersOauth2SetupUrlsRetrieveRaw({ id }));
        const root = `${standIn.url}/application/o`;
        expect(urls).to.equal({
            issuer: `${root}/docs/`,
            authorize: `${root}/authorize/`,
            token: `${root}/token/`,
            user_info: `${root}/userinfo/`,
            provider_info: `${root}/docs/.well-known/openid-configuration`,
            logout: `${root}/docs/end-session/`,
            jwks: `${root}/docs/jwks/`,
            dcr_registration: null,
        });
        expect(standIn.violations).to.equal([]);
    });

    it('takes a deleted scope mapping off the providers that had it', async () => {
        const mapping = await json(
            api.mappings.propertymappingsProviderScopeCreateRaw({
                scopeMappingRequest: { name: 'dp-temp svc_groups', scopeName: 'svc', expression: SVC_GROUPS('alice') },
            }),
        );
        const provider = await json(
            api.providers.providersOauth2CreateRaw({
                oAuth2ProviderRequest: await providerRequest(api, 'dp-temp-sso', { propertyMappings: [String(mapping.pk)] }),
            }),
        );
        await api.mappings.propertymappingsProviderScopeDestroyRaw({ pmUuid: String(mapping.pk) });
        expect((await json(api.providers.providersOauth2RetrieveRaw({ id: Number(provider.pk) }))).property_mappings).to.equal([]);
        expect(standIn.violations).to.equal([]);
    });
});

describe('authentik stand-in: OpenID Connect behind an OAuth2 provider', () => {
    let standIn: AuthentikStandIn;
    let api: Clients;
    let wiki: Json;
    const CALLBACK = 'https://wiki.apps.test:8443/oauth/callback';
    const alice = { username: 'alice', password: 'alice-password-1' };
    const bob = { username: 'bob', password: 'bob-password-1' };
    const carol = { username: 'carol', password: 'carol-password-1' };

    before(async () => {
        standIn = await startAuthentikStandIn();
        api = clients(standIn);
        standIn.addUser({ ...alice, name: 'Alice Liddell', email: 'alice@example.test', groups: ['staff', 'readers'] });
        standIn.addUser({ ...bob, name: 'Bob', email: 'bob@example.test', groups: ['ops'] });
        standIn.addUser({ ...carol, name: 'Carol', email: 'carol@example.test', groups: ['staff'] });
        const staff = String(standIn.state.groups.find((group) => group.name === 'staff')?.pk);
        const mappings = await managedMappings(api);
        const svc = await json(
            api.mappings.propertymappingsProviderScopeCreateRaw({
                scopeMappingRequest: { name: 'dp-wiki svc_groups', scopeName: 'profile', expression: SVC_GROUPS('alice') },
            }),
        );
        wiki = await oidcApp(
            api,
            'wiki',
            {
                signingKey: await signingKey(api),
                grantTypes: FLOW_GRANTS,
                propertyMappings: [mappings.openid, mappings.email, mappings.profile, mappings.offline_access, String(svc.pk)].map(String),
                redirectUris: [
                    { matchingMode: MatchingModeEnum.Strict, url: CALLBACK },
                    { matchingMode: MatchingModeEnum.Regex, url: String.raw`https://wiki\.apps\.test:8443/cb/[a-z]+` },
                ],
            },
            [staff],
        );
    });

    after(async () => {
        await standIn.close();
    });

    it("answers discovery at authentik's URLs, with the issuer per application", async () => {
        const response = await fetch(`${standIn.url}/application/o/wiki/.well-known/openid-configuration`);
        expect(response.status).to.equal(200);
        const document = (await response.json()) as Json;
        const root = `${standIn.url}/application/o`;
        expect(document).to.include({
            issuer: `${root}/wiki/`,
            authorization_endpoint: `${root}/authorize/`,
            token_endpoint: `${root}/token/`,
            userinfo_endpoint: `${root}/userinfo/`,
            jwks_uri: `${root}/wiki/jwks/`,
            end_session_endpoint: `${root}/wiki/end-session/`,
            id_token_signing_alg_values_supported: ['RS256'],
        });
        expect(document.scopes_supported).to.include(['openid', 'email', 'profile', 'offline_access']);
        expect(document.claims_supported).to.include(['email', 'groups', 'preferred_username', 'svc_groups']);
        const jwks = (await (await fetch(`${root}/wiki/jwks/`)).json()) as { keys: Json[] };
        expect(jwks.keys).to.have.length(1);
        expect(jwks.keys[0]).to.include({ kty: 'RSA', use: 'sig', alg: 'RS256' });
        expect(jwks.keys[0]?.d).to.not.exist();
        const root302 = await fetch(`${root}/wiki/`, { redirect: 'manual' });
        expect(root302.headers.get('location')).to.equal(`${root}/wiki/.well-known/openid-configuration`);
        expect(standIn.violations).to.equal([]);
    });

    it('runs the code flow for openid-client: sign-in form, ID token signed RS256 by the jwks, userinfo claims', async () => {
        const config = await relyingParty(standIn, 'wiki', wiki);
        const request = await authorizationRequest(config, CALLBACK);
        const browser = new Browser(standIn.url);
        const visit = await browser.authorize(request.url, alice);
        expect(visit.trail.map((step) => step.replace(/authorize\/[-\w]+ /, 'authorize/<uid> '))).to.equal([
            '/application/o/authorize/ 303',
            '/if/flow/default-provider-authorization-implicit-consent/ 302',
            '/if/flow/default-authentication-flow/ 200',
            '/if/flow/default-authentication-flow/ 302',
            '/if/flow/default-provider-authorization-implicit-consent/ 303',
            '/application/o/authorize/<uid> 303',
        ]);
        expect(visit.callback?.href.startsWith(`${CALLBACK}?`)).to.be.true();
        const tokens = await OpenId.authorizationCodeGrant(config, visit.callback ?? new URL(CALLBACK), request.checks);
        const { header, claims } = await verifiedJwt(String(tokens.id_token), { jwksUrl: `${standIn.url}/application/o/wiki/jwks/` });
        expect(header.alg).to.equal('RS256');
        expect(claims).to.include({ iss: `${standIn.url}/application/o/wiki/`, aud: wiki.client_id, email: 'alice@example.test' });
        expect(claims.sub).to.match(/^[0-9a-f]{64}$/);
        const userinfo: Json = await OpenId.fetchUserInfo(config, tokens.access_token, String(claims.sub));
        expect(userinfo).to.include({
            email: 'alice@example.test',
            email_verified: false,
            name: 'Alice Liddell',
            given_name: 'Alice Liddell',
            preferred_username: 'alice',
            nickname: 'alice',
            groups: ['staff', 'readers'],
            svc_groups: ['admin'],
        });
        expect(tokens.refresh_token).to.not.exist();
        expect(standIn.violations).to.equal([]);
    });

    it('asks a user signed in to authentik for nothing: the second sign-in is redirects only', async () => {
        const config = await relyingParty(standIn, 'wiki', wiki);
        const browser = new Browser(standIn.url);
        await browser.authorize((await authorizationRequest(config, CALLBACK)).url, carol);
        const again = await authorizationRequest(config, CALLBACK, 'openid profile offline_access');
        const visit = await browser.authorize(again.url);
        expect(visit.trail.some((step) => step.startsWith('/if/flow/default-authentication-flow/'))).to.be.false();
        const tokens = await OpenId.authorizationCodeGrant(config, visit.callback ?? new URL(CALLBACK), again.checks);
        const claims: Json = tokens.claims() ?? {};
        expect(claims.preferred_username).to.equal('carol');
        expect(claims.svc_groups).to.equal(['user']);
        expect(claims.email).to.not.exist();
        expect(tokens.refresh_token).to.be.a.string();
        const refreshed = await OpenId.refreshTokenGrant(config, String(tokens.refresh_token));
        expect(refreshed.access_token).to.be.a.string();
        expect(standIn.violations).to.equal([]);
    });

    it("refuses a user outside the application's groups with authentik's 403 page", async () => {
        const config = await relyingParty(standIn, 'wiki', wiki);
        const visit = await new Browser(standIn.url).authorize((await authorizationRequest(config, CALLBACK)).url, bob);
        expect(visit.callback).to.not.exist();
        expect(visit.last.status).to.equal(403);
        expect(new URL(visit.last.url).pathname).to.equal('/if/flow/default-provider-authorization-implicit-consent/');
        expect(visit.last.body).to.contain('Permission denied').and.to.contain('Request has been denied.');
        expect(standIn.violations).to.equal([]);
    });

    it('takes redirect URIs as authentik does: strict ones exactly, regex ones matched whole, anything else refused', async () => {
        const config = await relyingParty(standIn, 'wiki', wiki);
        const browser = new Browser(standIn.url);
        const byRegex = await browser.authorize((await authorizationRequest(config, 'https://wiki.apps.test:8443/cb/done')).url, alice);
        expect(byRegex.callback?.pathname).to.equal('/cb/done');
        for (const wrong of [
            `${CALLBACK}/`,
            'https://wiki.apps.test:8443/cb/done/extra',
            'https://evil.test/?https://wiki.apps.test:8443/cb/x',
        ]) {
            const visit = await browser.authorize((await authorizationRequest(config, wrong)).url);
            expect(visit.callback, wrong).to.not.exist();
            expect(visit.last.status).to.equal(400);
            expect(visit.last.body).to.contain('Redirect URI Error');
        }

        expect(standIn.violations).to.equal([]);
    });

    it('signs with HS256 and the client secret without a signing key; client_secret_basic works as well', async () => {
        const mappings = await managedMappings(api);
        const plain = await oidcApp(
            api,
            'plain',
            {
                grantTypes: FLOW_GRANTS,
                propertyMappings: [mappings.openid ?? '', mappings.profile ?? ''],
                redirectUris: [{ matchingMode: MatchingModeEnum.Strict, url: 'https://plain.apps.test/callback' }],
            },
            [],
        );
        const config = await relyingParty(standIn, 'plain', plain, { basic: true, alg: 'HS256' });
        const request = await authorizationRequest(config, 'https://plain.apps.test/callback');
        const visit = await new Browser(standIn.url).authorize(request.url, bob);
        const tokens = await OpenId.authorizationCodeGrant(config, visit.callback ?? new URL('https://plain.apps.test/'), request.checks);
        const { header, claims } = await verifiedJwt(String(tokens.id_token), { secret: String(plain.client_secret) });
        expect(header.alg).to.equal('HS256');
        expect(claims).to.include({ aud: plain.client_id, preferred_username: 'bob', groups: ['ops'] });
        expect(claims.email).to.not.exist();
        const jwks = (await (await fetch(`${standIn.url}/application/o/plain/jwks/`)).json()) as { keys: Json[] };
        expect(jwks.keys).to.equal([]);
        expect(standIn.violations).to.equal([]);
    });

    it('sends the browser back with invalid_request for a provider created without grant types (2026.5 and later)', async () => {
        const mappings = await managedMappings(api);
        const bare = await oidcApp(
            api,
            'bare',
            {
                propertyMappings: [mappings.openid ?? ''],
                redirectUris: [{ matchingMode: MatchingModeEnum.Strict, url: 'https://bare.apps.test/cb' }],
            },
            [],
        );
        const config = await relyingParty(standIn, 'bare', bare);
        const visit = await new Browser(standIn.url).authorize(
            (await authorizationRequest(config, 'https://bare.apps.test/cb')).url,
            alice,
        );
        expect(visit.callback?.searchParams.get('error')).to.equal('invalid_request');
        expect(standIn.violations).to.equal([]);
    });

    it('follows changes of the mappings: without the email mapping the same provider gives no email', async () => {
        const mappings = await managedMappings(api);
        const id = Number(wiki.pk);
        const before = (await json(api.providers.providersOauth2RetrieveRaw({ id }))).property_mappings as string[];
        await api.providers.providersOauth2PartialUpdateRaw({
            id,
            patchedOAuth2ProviderRequest: { propertyMappings: before.filter((pk) => pk !== mappings.email) },
        });
        try {
            const config = await relyingParty(standIn, 'wiki', wiki);
            const request = await authorizationRequest(config, CALLBACK);
            const visit = await new Browser(standIn.url).authorize(request.url, alice);
            const tokens = await OpenId.authorizationCodeGrant(config, visit.callback ?? new URL(CALLBACK), request.checks);
            const userinfo = await OpenId.fetchUserInfo(config, tokens.access_token, String(tokens.claims()?.sub));
            expect(userinfo.email).to.not.exist();
            expect(userinfo.preferred_username).to.equal('alice');
        } finally {
            await api.providers.providersOauth2PartialUpdateRaw({ id, patchedOAuth2ProviderRequest: { propertyMappings: before } });
        }

        expect(standIn.violations).to.equal([]);
    });

    it("ends the application's session at its end-session URL, after a confirmation, with the invalidation flow's words", async () => {
        const config = await relyingParty(standIn, 'wiki', wiki);
        const request = await authorizationRequest(config, CALLBACK);
        const browser = new Browser(standIn.url);
        const visit = await browser.authorize(request.url, alice);
        const tokens = await OpenId.authorizationCodeGrant(config, visit.callback ?? new URL(CALLBACK), request.checks);
        const logout = await browser.request(OpenId.buildEndSessionUrl(config, { id_token_hint: String(tokens.id_token) }).href);
        expect(logout.status).to.equal(200);
        const action = /<form[^>]*action="([^"]+)"/.exec(logout.body)?.[1] ?? '';
        const xsrf = /name="xsrf" value="([^"]+)"/.exec(logout.body)?.[1] ?? '';
        expect(action).to.equal(`${standIn.url}/application/o/wiki/end-session/confirm`);
        const confirmed = await browser.request(action, { xsrf, logout: 'yes' });
        const done = await browser.request(confirmed.location ?? '');
        expect(done.body).to.contain('Logged out of application').and.to.contain('logged out of wiki');
        // The authentik session stays: signing in again asks for nothing.
        const again = await browser.authorize((await authorizationRequest(config, CALLBACK)).url);
        expect(again.callback?.searchParams.get('code')).to.exist();
        expect(standIn.violations).to.equal([]);
    });

    it('answers userinfo 401 for a token it never issued, and token 401 for an unknown client', async () => {
        const userinfo = await fetch(`${standIn.url}/application/o/userinfo/`, { headers: { authorization: 'Bearer not-a-token' } });
        expect(userinfo.status).to.equal(401);
        expect(((await userinfo.json()) as Json).error).to.equal('invalid_token');
        const token = await fetch(`${standIn.url}/application/o/token/`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', client_id: 'nobody', client_secret: 'x' }).toString(),
        });
        expect(token.status).to.equal(401);
        expect(standIn.violations).to.equal([]);
    });
});
