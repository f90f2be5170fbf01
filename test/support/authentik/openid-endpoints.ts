/**
 * authentik's OAuth2/OpenID URLs, served by one oidc-provider instance per OAuth2 provider (openid-provider.ts).
 * authentik shares some URLs across applications and keys others by application slug, so each request is sent to
 * its instance by what it carries:
 * - `/application/o/authorize/` by `client_id` (a proxy provider's client stays with authorization.ts), and
 *   `/application/o/authorize/<uid>` (oidc-provider's return after the flow) by the interaction it resumes;
 * - `/application/o/token/` by the client id of its client authentication; `client_secret_basic` is rewritten as
 *   `client_secret_post`, since an oidc-provider client registers only one of them and authentik takes both;
 * - `/application/o/userinfo/` by looking the access token up in each instance's storage;
 * - `/application/o/<slug>/...` (discovery, jwks, end-session) by the application's slug;
 * - the provider's authorization flow page `/if/flow/<slug>/?client_id=...`, where oidc-provider sends the browser
 *   to log in and consent: it asks the stand-in's sign-in page (a user signed in to authentik is not asked again),
 *   judges the application's policy bindings (403 "Permission denied", as the outpost flow does), and consents
 *   implicitly to the scopes the provider's mappings answer.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

import type { AuthentikWeb } from './authorization.ts';
import { AUTHENTICATION_FLOW, findFlow } from './flows.ts';
import { html, type Json, redirect, type Reply, type WebRequest, writeReply } from './http.ts';
import { deniedPage, messagePage } from './login-page.ts';
import { allowsRedirect } from './oauth2-providers.ts';
import {
    ACR,
    buildOpenIdProvider,
    configurationKey,
    mappedScopes,
    OAUTH2_ROOT,
    type OpenIdInstance,
    OpenIdStorage,
} from './openid-provider.ts';
import { passesPolicies } from './policies.ts';
import { applicationOf } from './providers.ts';
import { subjectOf } from './scope-mappings.ts';
import { type ApplicationRecord, generateId, type OAuth2ProviderRecord, type Store } from './store.ts';

/** Serves one request: may answer through `response` itself (oidc-provider does). */
export type RawHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

interface Served {
    provider: OAuth2ProviderRecord;
    application: ApplicationRecord;
    instance: OpenIdInstance;
    storage: OpenIdStorage;
}

const AUTHORIZE = `${OAUTH2_ROOT}/authorize/`;
const TOKEN = `${OAUTH2_ROOT}/token/`;
const USERINFO = `${OAUTH2_ROOT}/userinfo/`;
const RESUME = /^\/application\/o\/authorize\/([^/]+)\/?$/;
const BY_SLUG = /^\/application\/o\/([-a-zA-Z0-9_]+)\/(.*)$/;
const FLOW = /^\/if\/flow\/([-a-zA-Z0-9_]+)\/$/;
const DISCOVERY = '.well-known/openid-configuration';

/** The request as oidc-provider should read it: its body again (the server read it), maybe with a new URL or body. */
function replay(request: IncomingMessage, options: { url?: string; body: string; headers?: IncomingHttpHeaders }): IncomingMessage {
    const body = Buffer.from(options.body);
    const headers = { ...(options.headers ?? request.headers) };
    if (body.length > 0 || headers['content-length'] !== undefined) headers['content-length'] = String(body.length);
    const copy = Readable.from(body.length > 0 ? [body] : [], { objectMode: false });
    return Object.assign(copy, {
        method: request.method,
        url: options.url ?? request.url,
        headers,
        rawHeaders: request.rawHeaders,
        httpVersion: request.httpVersion,
        httpVersionMajor: request.httpVersionMajor,
        httpVersionMinor: request.httpVersionMinor,
        socket: request.socket,
        connection: request.socket,
    }) as unknown as IncomingMessage;
}

/** Client id and secret of an HTTP Basic header, decoded as RFC 6749 §2.3.1 encodes them. */
function basicCredentials(authorization: string | undefined): { id: string; secret: string } | undefined {
    const [scheme, encoded = ''] = (authorization ?? '').trim().split(/\s+/, 2);
    if (scheme?.toLowerCase() !== 'basic') return undefined;
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return undefined;
    const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));
    try {
        return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
    } catch {
        return undefined;
    }
}

function bearerToken(request: WebRequest): string | undefined {
    const [scheme, token] = String(request.headers.authorization ?? '')
        .trim()
        .split(/\s+/, 2);
    if (scheme?.toLowerCase() === 'bearer' && token) return token;
    return request.method === 'POST' ? (new URLSearchParams(request.body).get('access_token') ?? undefined) : undefined;
}

const answer =
    (reply: Reply): RawHandler =>
    async (_request, response) => {
        writeReply(response, reply);
    };

const jsonError = (status: number, error: string, description: string, headers: Record<string, string> = {}): RawHandler =>
    answer({ status, headers: { 'cache-control': 'no-store', ...headers }, body: { error, error_description: description } });

export class OpenIdEndpoints {
    readonly #instances = new Map<number, { key: string; instance: OpenIdInstance }>();
    readonly #storages = new Map<number, OpenIdStorage>();
    readonly #cookieKeys = [generateId(48)];

    constructor(
        private readonly store: Store,
        private readonly web: AuthentikWeb,
        /** Told what fails inside an OpenID provider. */
        private readonly violation: (text: string) => void,
    ) {}

    /** The handler of a request this part serves, or undefined for the rest of the stand-in. */
    route(request: WebRequest): RawHandler | undefined {
        const path = request.url.pathname;
        if (path === AUTHORIZE) return this.#authorize(request);
        if (path === TOKEN) return this.#token(request);
        if (path === USERINFO) return this.#userinfo(request);
        const resumed = RESUME.exec(path)?.[1];
        if (resumed) return this.#resume(request, resumed);
        const [, slug, rest] = BY_SLUG.exec(path) ?? [];
        if (slug !== undefined && rest !== undefined) return this.#bySlug(request, slug, rest);
        const flow = FLOW.exec(path)?.[1];
        return flow ? this.#authorizationFlow(request, flow) : undefined;
    }

    #served(provider: OAuth2ProviderRecord): Served | undefined {
        const application = applicationOf(this.store, provider);
        if (!application) return undefined;
        let storage = this.#storages.get(provider.pk);
        if (!storage) {
            storage = new OpenIdStorage();
            this.#storages.set(provider.pk, storage);
        }

        const key = configurationKey({ store: this.store, provider, application });
        let built = this.#instances.get(provider.pk);
        if (built?.key !== key) {
            const onServerError = (error: Error) =>
                this.violation(`the OpenID provider of ${provider.name} failed: ${error.stack ?? error.message}`);
            const source = { store: this.store, provider, application, storage, cookieKeys: this.#cookieKeys, onServerError };
            built = { key, instance: buildOpenIdProvider(source) };
            this.#instances.set(provider.pk, built);
        }

        return { provider, application, instance: built.instance, storage };
    }

    #byClientId(clientId: string | null | undefined): OAuth2ProviderRecord | undefined {
        return this.store.providers.find(
            (candidate): candidate is OAuth2ProviderRecord => candidate.kind === 'oauth2' && candidate.client_id === clientId,
        );
    }

    #passOn(served: Served, request: WebRequest, url?: string, body = request.body, headers?: IncomingHttpHeaders): RawHandler {
        return async (raw, response) => {
            await served.instance.handle(replay(raw, { url, body, headers }), response);
        };
    }

    /**
     * authentik checks the redirect URI, then the grant type (a provider without `authorization_code` in
     * `grant_types` sends the browser back with invalid_request); no scope asked means every scope it maps.
     */
    #authorize(request: WebRequest): RawHandler | undefined {
        const query = new URLSearchParams(request.url.search);
        const provider = this.#byClientId(query.get('client_id'));
        if (!provider) return undefined;
        const served = this.#served(provider);
        if (!served) return answer(html(404, messagePage('Not found', 'The provider has no application.')));
        const redirectUri = query.get('redirect_uri') ?? '';
        const wantsCode = (query.get('response_type') ?? '').split(' ').includes('code');
        if (wantsCode && !provider.grant_types.includes('authorization_code') && allowsRedirect(provider, redirectUri)) {
            const error = new URLSearchParams({ error: 'invalid_request', error_description: 'The request is otherwise malformed' });
            if (query.get('state') !== null) error.set('state', query.get('state') ?? '');
            return answer(redirect(`${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${error}`));
        }

        if ((query.get('scope') ?? '').trim() === '') {
            query.set('scope', mappedScopes(this.store, provider).join(' '));
        }

        // oidc-provider drops offline_access without prompt=consent (OIDC Core §11); authentik does not ask for it, and
        // every authorization here goes through the flow anyway.
        if ((query.get('scope') ?? '').split(' ').includes('offline_access') && !query.has('prompt')) {
            query.set('prompt', 'consent');
        }

        return this.#passOn(served, request, `${AUTHORIZE}?${query}`);
    }

    #resume(request: WebRequest, uid: string): RawHandler | undefined {
        for (const [pk, storage] of this.#storages) {
            const provider = this.store.providers.find((candidate) => candidate.pk === pk);
            const served = provider?.kind === 'oauth2' && storage.find('Interaction', uid) ? this.#served(provider) : undefined;
            if (served) return this.#passOn(served, request);
        }

        return answer(html(400, messagePage('Flow error', 'The authorization request expired or was never started.')));
    }

    #token(request: WebRequest): RawHandler {
        const form = new URLSearchParams(request.body);
        const basic = basicCredentials(request.headers.authorization);
        const provider = this.#byClientId(basic?.id ?? form.get('client_id'));
        const served = provider && this.#served(provider);
        if (!served) return jsonError(401, 'invalid_client', 'client authentication failed');
        if (!basic || form.has('client_secret')) return this.#passOn(served, request);
        form.set('client_id', basic.id);
        form.set('client_secret', basic.secret);
        const { authorization: _authorization, ...headers } = request.headers;
        return this.#passOn(served, request, undefined, form.toString(), headers);
    }

    #userinfo(request: WebRequest): RawHandler {
        const token = bearerToken(request) ?? '';
        for (const [pk, storage] of this.#storages) {
            const provider = this.store.providers.find((candidate) => candidate.pk === pk);
            const served = provider?.kind === 'oauth2' && storage.find('AccessToken', token) ? this.#served(provider) : undefined;
            if (served) return this.#passOn(served, request);
        }

        return jsonError(401, 'invalid_token', 'invalid token provided', { 'www-authenticate': 'Bearer error="invalid_token"' });
    }

    #bySlug(request: WebRequest, slug: string, rest: string): RawHandler | undefined {
        const application = this.store.applications.find((candidate) => candidate.slug === slug);
        const provider = this.store.providers.find((candidate) => candidate.pk === application?.provider);
        const served = provider?.kind === 'oauth2' ? this.#served(provider) : undefined;
        if (!served) return answer(html(404, messagePage('Not found', 'No OAuth2 provider has this application.')));
        if (rest === '') return answer(redirect(`${this.store.url}${OAUTH2_ROOT}/${slug}/${DISCOVERY}`));
        // oidc-provider serves discovery at its own root; the absolute routes keep every other path as it is.
        return this.#passOn(served, request, rest === DISCOVERY ? `/${DISCOVERY}` : undefined);
    }

    /** The provider's authorization flow, reached from oidc-provider's interaction redirect. */
    #authorizationFlow(request: WebRequest, slug: string): RawHandler | undefined {
        const provider = this.#byClientId(request.url.searchParams.get('client_id'));
        if (!provider || findFlow(this.store, provider.authorization_flow)?.slug !== slug) return undefined;
        const served = this.#served(provider);
        return served && ((raw, response) => this.#authorizeUser(request, raw, response, served));
    }

    async #authorizeUser(request: WebRequest, raw: IncomingMessage, response: ServerResponse, served: Served): Promise<void> {
        const { provider, application, instance } = served;
        let details: Awaited<ReturnType<typeof instance.provider.interactionDetails>>;
        try {
            details = await instance.provider.interactionDetails(raw, response);
        } catch {
            writeReply(response, html(400, messagePage('Flow error', 'The authorization request expired or was never started.')));
            return;
        }

        const user = this.web.sessionUser(request);
        if (!user) {
            const next = `${request.url.pathname}${request.url.search}`;
            writeReply(response, redirect(`${this.store.url}/if/flow/${AUTHENTICATION_FLOW}/?${new URLSearchParams({ next })}`));
            return;
        }

        if (!passesPolicies(this.store, application, user)) {
            writeReply(response, html(403, deniedPage()));
            return;
        }

        const accountId = subjectOf(this.store, provider.sub_mode, user);
        const grant = new instance.provider.Grant({ accountId, clientId: provider.client_id });
        const offered = new Set(mappedScopes(this.store, provider));
        const requested = String(details.params.scope ?? '').split(' ');
        grant.addOIDCScope(requested.filter((scope) => offered.has(scope)));
        const claims = (details.prompt.details as Json).missingOIDCClaims;
        if (Array.isArray(claims)) grant.addOIDCClaims(claims as string[]);
        const grantId = await grant.save();
        const result = { login: { accountId, acr: ACR, amr: ['pwd'] }, consent: { grantId } };
        await instance.provider.interactionFinished(raw, response, result, { mergeWithLastSubmission: false });
    }
}
