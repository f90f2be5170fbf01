/**
 * The embedded outpost's forward auth (`/outpost.goauthentik.io/*`), as authentik's proxyv2 handlers behave
 * (reference: authentik-forward-auth §3, §4, §7):
 * - the provider is looked up by the request's host including its port (X-Forwarded-Host, else Host) among the proxy
 *   providers on the embedded outpost that have an application; a forward_domain provider by its cookie domain;
 *   with exactly one such provider the host is not checked; otherwise 400 "no app for hostname";
 * - a session per provider lives in the cookie `authentik_proxy_<8 hex of sha256(client_id)>`; it keeps the claims
 *   of the sign-in, so a change of bindings does not end it;
 * - `auth/nginx` answers 200 with the identity headers for a signed-in session, else 401 (remembering the URL);
 *   `start` sends the browser to authentik's authorization endpoint; `callback` exchanges the code and goes back;
 *   `sign_out` ends the session and shows the provider's invalidation flow.
 */
import Crypto from 'node:crypto';

import { type AuthentikWeb, type Claims, claimsOf } from './authorization.ts';
import { clearCookie, type CookieOptions, header, redirect, type Reply, setCookie, text, type WebRequest } from './http.ts';
import { embeddedOutpost } from './outposts.ts';
import { applicationOf, findProvider } from './providers.ts';
import { CALLBACK_SIGNATURE } from './proxy-providers.ts';
import { type ApplicationRecord, generateId, type ProxyProviderRecord, type Store } from './store.ts';

export const OUTPOST_PREFIX = '/outpost.goauthentik.io';
/** The provider's default access token validity (hours=24). */
const SESSION_SECONDS = 24 * 60 * 60;

interface PendingLogin {
    redirect: string;
    redirectUri: string;
}

interface OutpostSession {
    providerPk: number;
    /** The URL to go back to after signing in, remembered by a 401 from auth/nginx. */
    redirect?: string;
    /** Logins started from this session, by OAuth state. */
    pending: Map<string, PendingLogin>;
    claims?: Claims;
}

interface Served {
    provider: ProxyProviderRecord;
    application: ApplicationRecord;
}

export function sessionCookieName(provider: ProxyProviderRecord): string {
    return `authentik_proxy_${Crypto.createHash('sha256').update(provider.client_id).digest('hex').slice(0, 8)}`;
}

const firstOf = (value: string | undefined): string | undefined => value?.split(',')[0]?.trim() || undefined;

function requestHost(request: WebRequest): string {
    return (firstOf(header(request, 'x-forwarded-host')) ?? header(request, 'host') ?? '').toLowerCase();
}

function hostOf(url: string): string {
    return URL.canParse(url) ? new URL(url).host.toLowerCase() : '';
}

/** An HS256 JWT signed with the client secret, as authentik signs for a provider without a signing key. */
function jwtOf(store: Store, served: Served, claims: Claims): string {
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const now = Math.floor(Date.now() / 1000);
    const body = encode({
        iss: `${store.url}/application/o/${served.application.slug}/`,
        sub: claims.uid,
        aud: served.provider.client_id,
        iat: now,
        exp: now + 3600,
        preferred_username: claims.username,
        email: claims.email,
        name: claims.name,
        groups: claims.groups,
        entitlements: claims.entitlements,
    });
    const signed = `${encode({ alg: 'HS256', typ: 'JWT' })}.${body}`;
    return `${signed}.${Crypto.createHmac('sha256', served.provider.client_secret).update(signed).digest('base64url')}`;
}

export class EmbeddedOutpost {
    readonly #sessions = new Map<string, OutpostSession>();

    constructor(
        private readonly store: Store,
        private readonly web: AuthentikWeb,
    ) {}

    handle(request: WebRequest): Reply {
        const served = this.#lookup(request);
        if (!served) {
            return { status: 400, body: { Message: 'no app for hostname' } };
        }

        switch (request.url.pathname.slice(OUTPOST_PREFIX.length)) {
            case '/auth/nginx':
                return this.#authNginx(request, served);
            case '/start':
                return this.#start(request, served);
            case '/callback':
                return this.#callback(request, served);
            case '/sign_out':
                return this.#signOut(request, served);
            case '/ping':
                return { status: 204 };
            default:
                return text(404, '404 page not found');
        }
    }

    /** The proxy providers the outpost serves: on the embedded outpost and bound to an application. */
    #served(): Served[] {
        const served: Served[] = [];
        for (const pk of embeddedOutpost(this.store)?.providers ?? []) {
            const provider = findProvider(this.store, pk);
            const application = provider && applicationOf(this.store, provider);
            if (provider?.kind === 'proxy' && application) {
                served.push({ provider, application });
            }
        }

        return served;
    }

    #lookup(request: WebRequest): Served | undefined {
        const served = this.#served();
        const host = requestHost(request);
        const exact = served.find(({ provider }) => hostOf(provider.external_host) === host);
        if (exact) {
            return exact;
        }

        const hostname = host.replace(/:\d+$/, '');
        const domains = served
            .filter(({ provider }) => provider.mode === 'forward_domain' && provider.cookie_domain !== '')
            .map((candidate) => ({ candidate, domain: candidate.provider.cookie_domain.replace(/^\./, '').toLowerCase() }))
            .filter(({ domain }) => hostname === domain || hostname.endsWith(`.${domain}`))
            .sort((a, b) => b.domain.length - a.domain.length);
        if (domains[0]) {
            return domains[0].candidate;
        }

        return served.length === 1 ? served[0] : undefined;
    }

    #session(request: WebRequest, provider: ProxyProviderRecord): { id: string; session: OutpostSession; isNew: boolean } {
        const id = request.cookies.get(sessionCookieName(provider)) ?? '';
        const session = this.#sessions.get(id);
        if (session && session.providerPk === provider.pk) {
            return { id, session, isNew: false };
        }

        const created = { id: generateId(48), session: { providerPk: provider.pk, pending: new Map() }, isNew: true };
        this.#sessions.set(created.id, created.session);
        return created;
    }

    #cookieOptions(provider: ProxyProviderRecord): CookieOptions {
        return {
            maxAgeSeconds: SESSION_SECONDS,
            secure: provider.external_host.startsWith('https:'),
            domain: provider.mode === 'forward_domain' && provider.cookie_domain ? provider.cookie_domain : undefined,
        };
    }

    #cookie(provider: ProxyProviderRecord, id: string): string {
        return setCookie(sessionCookieName(provider), id, this.#cookieOptions(provider));
    }

    /** The URL nginx asks about: X-Original-URI with the forwarded host and scheme, else X-Original-URL. */
    #originalUrl(request: WebRequest): URL | undefined {
        const uri = header(request, 'x-original-uri');
        if (uri) {
            const base = `${firstOf(header(request, 'x-forwarded-proto')) ?? 'http'}://${requestHost(request)}`;
            return URL.canParse(uri, base) ? new URL(uri, base) : undefined;
        }

        const url = header(request, 'x-original-url');
        return url && URL.canParse(url) ? new URL(url) : undefined;
    }

    #skipsAuthentication(provider: ProxyProviderRecord, url: URL): boolean {
        const subject = provider.mode === 'forward_domain' ? url.href : url.pathname;
        return provider.skip_path_regex
            .split('\n')
            .map((line) => line.trim())
            .filter(Boolean)
            .some((pattern) => new RegExp(pattern).test(subject));
    }

    #authNginx(request: WebRequest, served: Served): Reply {
        const url = this.#originalUrl(request);
        if (!url) {
            return text(500, 'configuration error');
        }

        if (url.pathname.startsWith(OUTPOST_PREFIX) || this.#skipsAuthentication(served.provider, url)) {
            return { status: 200, body: '' };
        }

        const { id, session } = this.#session(request, served.provider);
        if (session.claims) {
            return { status: 200, headers: this.#identityHeaders(request, served, session.claims), body: '' };
        }

        session.redirect = url.href;
        return text(401, 'unauthorized request', [this.#cookie(served.provider, id)]);
    }

    #identityHeaders(request: WebRequest, served: Served, claims: Claims): Record<string, string> {
        const outpost = embeddedOutpost(this.store);
        return {
            'X-authentik-username': claims.username,
            'X-authentik-groups': claims.groups.join('|'),
            'X-authentik-entitlements': claims.entitlements.join('|'),
            'X-authentik-email': claims.email,
            'X-authentik-name': claims.name,
            'X-authentik-uid': claims.uid,
            'X-authentik-jwt': jwtOf(this.store, served, claims),
            'X-authentik-meta-jwks': `${this.store.url}/application/o/${served.application.slug}/jwks/`,
            'X-authentik-meta-outpost': outpost?.name ?? '',
            'X-authentik-meta-provider': served.provider.name,
            'X-authentik-meta-app': served.application.slug,
            'X-authentik-meta-version': `goauthentik.io/outpost/${this.store.version}`,
            ...(header(request, 'user-agent') ? { 'User-Agent': header(request, 'user-agent') ?? '' } : {}),
        };
    }

    /** `rd` is followed only to the provider's own host (single mode) or below its cookie domain (domain mode). */
    #allowedRedirect(provider: ProxyProviderRecord, rd: string | null): string | undefined {
        if (!rd || !URL.canParse(rd)) {
            return undefined;
        }

        if (provider.mode === 'forward_domain') {
            const domain = provider.cookie_domain.replace(/^\./, '');
            return domain && new URL(rd).hostname.endsWith(domain) ? rd : undefined;
        }

        return rd.includes(provider.external_host.replace(/^[a-z]+:\/\//i, '')) ? rd : undefined;
    }

    #start(request: WebRequest, served: Served): Reply {
        const { provider } = served;
        const { id, session } = this.#session(request, provider);
        const rd = request.url.searchParams.get('rd');
        const state = generateId(32);
        const scheme =
            firstOf(header(request, 'x-forwarded-proto')) ?? (rd && URL.canParse(rd) ? new URL(rd).protocol.replace(':', '') : 'http');
        const redirectUri = `${scheme}://${requestHost(request)}${OUTPOST_PREFIX}/callback?${CALLBACK_SIGNATURE}=true`;
        session.pending.set(state, {
            redirect: this.#allowedRedirect(provider, rd) ?? session.redirect ?? provider.external_host,
            redirectUri,
        });
        const authorize = new URLSearchParams({
            client_id: provider.client_id,
            redirect_uri: redirectUri,
            response_type: 'code',
            scope: 'openid email profile ak_proxy entitlements',
            state,
        });
        return redirect(`${this.store.url}/application/o/authorize/?${authorize}`, [this.#cookie(provider, id)]);
    }

    #callback(request: WebRequest, served: Served): Reply {
        const { id, session } = this.#session(request, served.provider);
        const state = request.url.searchParams.get('state') ?? '';
        const pending = session.pending.get(state);
        if (!pending) {
            return text(400, 'invalid state');
        }

        session.pending.delete(state);
        const user = this.web.exchange(request.url.searchParams.get('code') ?? '', served.provider, pending.redirectUri);
        if (!user) {
            return text(400, 'failed to redeem code');
        }

        session.claims = claimsOf(this.store, user);
        return redirect(pending.redirect, [this.#cookie(served.provider, id)]);
    }

    #signOut(request: WebRequest, served: Served): Reply {
        const name = sessionCookieName(served.provider);
        this.#sessions.delete(request.cookies.get(name) ?? '');
        const flow = this.store.flows.find((candidate) => candidate.pk === served.provider.invalidation_flow);
        return redirect(`${this.store.url}/if/flow/${flow?.slug ?? ''}/`, [clearCookie(name, this.#cookieOptions(served.provider))]);
    }
}
