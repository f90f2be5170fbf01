import Boom from '@hapi/boom';
import Cookie from '@hapi/cookie';
import Crumb from '@hapi/crumb';
import type { Plugin, Request, RouteOptions, Server } from '@hapi/hapi';

import { clientAddress } from '../../lib/client-address.ts';
import { errorShapeFor } from '../../lib/errors.ts';
import type { VersionSnapshot } from '../../lib/read-cache.ts';
import type { SignInClient } from './domain/accounts/sign-in-service.ts';
import { sessions } from './domain/accounts/session-service.ts';
import type { DeployRole, DeployUser } from './domain/accounts/user-service.ts';

export const SESSION_STRATEGY = 'dp-session';
export const SESSION_COOKIE = 'dp_session';
export const CSRF_COOKIE = 'dp_csrf';

/** What a signed-in request carries; `role` is what the route loader checks. */
export interface DeployCredentials {
    user: DeployUser;
    sessionId: number;
    mfaPending: boolean;
    role: DeployRole;
    /** The write counters the session look-up checked, for the request's later cached reads. */
    asOf?: VersionSnapshot;
    [key: string]: unknown;
}

/** Routes a session waiting for its second factor may reach. */
const MFA_PENDING_ROUTES = new Set(['auth.submitMfa', 'auth.logout', 'auth.me']);

/**
 * A session waiting for its second factor reaches the routes that finish or end it, and every public route as an
 * anonymous caller would: a person who left the code page can sign in again with the password (which replaces the
 * waiting session) instead of being stuck with "two-factor code required".
 */
function reachableWhileMfaPending(request: Request): boolean {
    const role = (request.route.settings.plugins as { gatehouse?: { role?: string } } | undefined)?.gatehouse?.role;
    return role === 'public' || MFA_PENDING_ROUTES.has(String(request.route.settings.id));
}

const AUTOLOGIN_PATH_PREFIX = '/api/autologin/';

function isDeployRequest(request: Request): boolean {
    return request.path.startsWith('/api/') && errorShapeFor(request.path) === 'deploy' && !request.path.startsWith('/api/swagger');
}

/**
 * The cookie's key, derived from the master key: it survives restarts and is never stored. Given as a
 * buffer, iron uses it as it is instead of running PBKDF2 on every request.
 */
function cookiePassword(server: Server): Buffer {
    return server.app.sealer.derive('dp_session cookie');
}

export function deployCredentials(request: Request): DeployCredentials | undefined {
    return request.auth.isAuthenticated ? (request.auth.credentials as DeployCredentials) : undefined;
}

export function requireDeployCredentials(request: Request): DeployCredentials {
    const credentials = deployCredentials(request);
    if (!credentials) {
        throw Boom.unauthorized('not signed in');
    }

    return credentials;
}

/** The write counters the request's session look-up checked: its later cached reads reuse them. */
export function requestSnapshot(request: Request): VersionSnapshot | undefined {
    return deployCredentials(request)?.asOf;
}

/** Editors and administrators see secret values; viewers see them masked. */
export function mayReadSecrets(request: Request): boolean {
    return requireDeployCredentials(request).role !== 'viewer';
}

/** The client's address: the peer's, or the one a trusted proxy forwards (TRUSTED_PROXIES). */
export { clientAddress };

/** Who a sign-in step comes from: the client's address and the session its browser holds, which the step ends. */
export function signInClient(request: Request): SignInClient {
    return { address: clientAddress(request), sessionId: deployCredentials(request)?.sessionId };
}

/**
 * The deploy manager's security: sessions in an HttpOnly cookie (server-side records), the CSRF
 * header matching the dp_csrf cookie on every non-GET request, and an Origin that matches the public URL.
 */
export const deploySecurityPlugin: Plugin<undefined> = {
    name: 'deploy-security',
    dependencies: ['db'],
    async register(server) {
        const { publicUrl } = server.app.config;
        const secure = publicUrl.startsWith('https:');
        await server.register(Cookie);
        server.auth.strategy(SESSION_STRATEGY, 'cookie', {
            cookie: {
                name: SESSION_COOKIE,
                password: cookiePassword(server),
                isSecure: secure,
                isHttpOnly: true,
                isSameSite: 'Lax',
                path: '/',
                ttl: server.app.config.deploy.sessionHours * 3_600_000,
                clearInvalid: true,
            },
            validate: async (_request: Request, session: { sid?: string }) => {
                const found = typeof session.sid === 'string' ? await sessions(server).find(session.sid) : undefined;
                if (!found) {
                    return { isValid: false };
                }

                const credentials: DeployCredentials = {
                    user: found.user,
                    sessionId: found.session.id,
                    mfaPending: found.session.mfaPending,
                    role: found.user.role,
                    asOf: found.asOf,
                };
                return { isValid: true, credentials };
            },
        });

        const crumbOptions: Crumb.RegisterOptions = {
            key: CSRF_COOKIE,
            restful: true,
            headerName: 'X-CSRF-Token',
            // The auto-login answers on an app's own domain (through nginx): no Gatehouse cookie goes there.
            skip: (request?: Request) => !request || !isDeployRequest(request) || request.path.startsWith(AUTOLOGIN_PATH_PREFIX),
            cookieOptions: { path: '/', isSecure: secure, isHttpOnly: false, isSameSite: 'Strict' },
        };
        await server.register({ plugin: Crumb, options: crumbOptions });
    },
};

/**
 * The checks every deploy route runs, as extensions of those routes alone (the route loader adds them): hapi runs a
 * server-wide extension on every request, the git API's included. A write whose Origin is not the public URL's is
 * refused, and a session still waiting for its second factor reaches only the routes that finish or end it.
 */
export function deployRouteExtensions(server: Server): NonNullable<RouteOptions['ext']> {
    const allowedOrigin = new URL(server.app.config.publicUrl).origin;
    return {
        onPreAuth: {
            method: (request, h) => {
                const origin = request.headers.origin;
                if (request.method !== 'get' && origin !== undefined && origin !== allowedOrigin) {
                    throw Boom.forbidden('origin not allowed');
                }

                return h.continue;
            },
        },
        onPostAuth: {
            method: (request, h) => {
                if (deployCredentials(request)?.mfaPending && !reachableWhileMfaPending(request)) {
                    throw Boom.unauthorized('two-factor code required');
                }

                return h.continue;
            },
        },
    };
}
