/**
 * authentik's own web side, as the outpost's OAuth login meets it: the authorization endpoint
 * (`/application/o/authorize/`), the authentication flow's sign-in page, and the flow pages a provider's invalidation
 * flow shows. A sign-in sets the `authentik_session` cookie on the stand-in's host; the authorization endpoint then
 * judges the application's policy bindings as they are at that moment and hands out a one-time code.
 */
import { findUserByName, groupsOf, userUid } from './directory.ts';
import { AUTHENTICATION_FLOW } from './flows.ts';
import { html, redirect, type Reply, setCookie, type WebRequest } from './http.ts';
import { deniedPage, loginPage, messagePage } from './login-page.ts';
import { passesPolicies } from './policies.ts';
import { applicationOf } from './providers.ts';
import { callbackUrls } from './proxy-providers.ts';
import { generateId, type ProviderRecord, type ProxyProviderRecord, type Store, timestamp, type UserRecord } from './store.ts';

export const SESSION_COOKIE = 'authentik_session';
const CODE_LIFETIME_MS = 60_000;

/** What the outpost learns about the user from the token exchange, frozen at sign-in. */
export interface Claims {
    username: string;
    groups: string[];
    entitlements: string[];
    email: string;
    name: string;
    uid: string;
}

interface AuthorizationCode {
    providerPk: number;
    userPk: number;
    redirectUri: string;
    expiresAt: number;
}

export function claimsOf(store: Store, user: UserRecord): Claims {
    return {
        username: user.username,
        groups: groupsOf(store, user).map((group) => group.name),
        entitlements: [],
        email: user.email,
        name: user.name,
        uid: userUid(store, user),
    };
}

/** A relative path only, as authentik's `next` handling: never another site. */
function safeNext(next: string | null): string {
    return next && next.startsWith('/') && !next.startsWith('//') ? next : '/if/user/';
}

export class AuthentikWeb {
    /** Session key -> user pk. */
    readonly #sessions = new Map<string, number>();
    readonly #codes = new Map<string, AuthorizationCode>();

    constructor(private readonly store: Store) {}

    handle(request: WebRequest): Reply | undefined {
        const path = request.url.pathname;
        if (path === '/application/o/authorize/' && request.method === 'GET') {
            return this.#authorize(request);
        }

        const flow = /^\/if\/flow\/([-a-zA-Z0-9_]+)\/$/.exec(path)?.[1];
        if (flow === AUTHENTICATION_FLOW) {
            return request.method === 'POST' ? this.#signIn(request) : html(200, loginPage());
        }

        const invalidation = this.store.flows.find((candidate) => candidate.slug === flow && candidate.designation === 'invalidation');
        if (invalidation) {
            return html(200, messagePage(invalidation.name, "You've logged out of the application."));
        }

        if (path === '/if/user/') {
            return html(200, messagePage('authentik', 'My applications'));
        }

        return undefined;
    }

    /** The user an authorization code was issued to, once, for that provider and redirect URI. */
    exchange(code: string, provider: ProviderRecord, redirectUri: string): UserRecord | undefined {
        const issued = this.#codes.get(code);
        this.#codes.delete(code);
        if (!issued || issued.providerPk !== provider.pk || issued.redirectUri !== redirectUri || issued.expiresAt < Date.now()) {
            return undefined;
        }

        return this.store.users.find((user) => user.pk === issued.userPk);
    }

    /** The user signed in to authentik with the request's `authentik_session` cookie. */
    sessionUser(request: WebRequest): UserRecord | undefined {
        const pk = this.#sessions.get(request.cookies.get(SESSION_COOKIE) ?? '');
        return this.store.users.find((user) => user.pk === pk);
    }

    /** The proxy providers' logins; OAuth2 providers' go to openid-endpoints.ts first. */
    #authorize(request: WebRequest): Reply {
        const query = request.url.searchParams;
        const provider = this.store.providers.find(
            (candidate): candidate is ProxyProviderRecord => candidate.kind === 'proxy' && candidate.client_id === query.get('client_id'),
        );
        if (!provider) {
            return html(400, messagePage('Client ID Error', 'Invalid client identifier (client_id).'));
        }

        const redirectUri = query.get('redirect_uri') ?? '';
        if (!callbackUrls(provider).includes(redirectUri)) {
            return html(
                400,
                messagePage(
                    'Redirect URI Error',
                    'The request fails due to a missing, invalid, or mismatching redirection URI (redirect_uri).',
                ),
            );
        }

        const application = applicationOf(this.store, provider);
        if (!application) {
            return html(404, messagePage('Not found', 'The provider has no application.'));
        }

        const user = this.sessionUser(request);
        if (!user) {
            const next = `${request.url.pathname}${request.url.search}`;
            return redirect(`${this.store.url}/if/flow/${AUTHENTICATION_FLOW}/?${new URLSearchParams({ next })}`);
        }

        if (!passesPolicies(this.store, application, user)) {
            return html(403, deniedPage());
        }

        const code = generateId(40);
        this.#codes.set(code, { providerPk: provider.pk, userPk: user.pk, redirectUri, expiresAt: Date.now() + CODE_LIFETIME_MS });
        const answer = new URLSearchParams({ code, state: query.get('state') ?? '' });
        return redirect(`${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${answer}`);
    }

    #signIn(request: WebRequest): Reply {
        const form = new URLSearchParams(request.body);
        const identifier = form.get('uid_field') ?? '';
        // The identification stage takes a username or an e-mail address.
        const user =
            findUserByName(this.store, identifier) ??
            this.store.users.find((candidate) => candidate.email !== '' && candidate.email === identifier);
        if (!user || !user.is_active || user.password === '' || user.password !== form.get('password')) {
            return html(200, loginPage({ error: 'Invalid password', username: identifier }));
        }

        const key = generateId(64);
        this.#sessions.set(key, user.pk);
        user.last_login = timestamp();
        return redirect(safeNext(request.url.searchParams.get('next')), [setCookie(SESSION_COOKIE, key)]);
    }
}
