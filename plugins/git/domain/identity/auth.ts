import Boom from '@hapi/boom';
import type { Request, RequestAuth, ResponseToolkit, Server } from '@hapi/hapi';

import { clientAddress } from '../../../../lib/client-address.ts';
import { BareForbiddenError, NotFoundError } from '../../../../lib/errors.ts';
import type { VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { FailureThrottle, SharedFailures } from '../../../../lib/throttle.ts';
import { tokens, type TokenRow } from './token-service.ts';
import { users, USER_TYPE, type UserRow } from './user-service.ts';
import { verifyPassword } from './passwords.ts';

export const GIT_AUTH_STRATEGY = 'gitea';

/** Who is calling: the signed-in user (after Sudo), who really signed in, and the token used, if any. */
export interface GitCredentials {
    user: UserRow;
    doer: UserRow;
    token?: TokenRow;
    /** The write counters authentication checked, for the request's cached reads (lib/read-cache.ts). */
    asOf?: VersionSnapshot;
    [key: string]: unknown;
}

const INVALID_CREDENTIALS = 'invalid username, password or token';

interface PresentedCredential {
    token?: string;
    username?: string;
    password?: string;
}

/** The Authorization header's scheme and value: `token abc`, `Bearer abc`, `Basic ...`; whitespace as Gitea allows. */
function schemeAndValue(header: string): [scheme: string, value: string] {
    const trimmed = header.trim();
    const space = trimmed.search(/\s/);
    return space < 0
        ? [trimmed, '']
        : [
              trimmed.slice(0, space),
              trimmed
                  .slice(space + 1)
                  .trim()
                  .replace(/\s+/g, ' '),
          ];
}

function presentedCredential(request: Request): PresentedCredential | undefined {
    const header = request.headers.authorization as string | undefined;
    if (header) {
        const [scheme, value] = schemeAndValue(header);
        const lowerScheme = scheme.toLowerCase();
        if (lowerScheme === 'token' || lowerScheme === 'bearer') {
            return { token: value };
        }

        if (lowerScheme === 'basic') {
            const decoded = Buffer.from(value, 'base64').toString('utf8');
            const colon = decoded.indexOf(':');
            return colon < 0
                ? { username: decoded, password: '' }
                : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
        }

        return {};
    }

    const query = request.query as Record<string, unknown>;
    const fromQuery = query.token ?? query.access_token;
    return typeof fromQuery === 'string' && fromQuery !== '' ? { token: fromQuery } : undefined;
}

/**
 * Failed Basic passwords, per user name and client address (lib/throttle.ts), in the database that every Gatehouse
 * process on it shares; a throttled attempt is a 429.
 */
const passwordThrottle = defineService<FailureThrottle>(
    'gitPasswordThrottle',
    (owner) => new FailureThrottle(owner.app.config.signInLimits, Date.now, new SharedFailures(owner.app.knex, 'git')),
);

async function passwordUser(server: Server, username: string, password: string, address: string): Promise<UserRow | undefined> {
    return await passwordThrottle(server).guard(username, address, async (priority) => {
        const user = await users(server).byName(username);
        const valid = user?.type === USER_TYPE.individual && (await verifyPassword(user.passwd_hash, password, priority));
        return valid ? user : undefined;
    });
}

async function signIn(
    request: Request,
    presented: PresentedCredential,
): Promise<{ user: UserRow; token?: TokenRow; asOf?: VersionSnapshot }> {
    const { server } = request;
    if (presented.token !== undefined) {
        const found = await tokens(server).find(presented.token);
        if (!found) {
            throw Boom.unauthorized(INVALID_CREDENTIALS);
        }

        return found;
    }

    const { username = '', password = '' } = presented;
    // Basic with an empty password (or x-oauth-basic) carries a token as the user name.
    if (password === '' || password === 'x-oauth-basic') {
        return await signIn(request, { token: username });
    }

    const asToken = await tokens(server).find(password);
    if (asToken) {
        return asToken;
    }

    const user = await passwordUser(server, username, password, clientAddress(request));
    if (!user) {
        throw Boom.unauthorized(INVALID_CREDENTIALS);
    }

    return { user };
}

/** `Sudo` header or `sudo` query: a site administrator acts as another user. */
async function applySudo(request: Request, doer: UserRow): Promise<UserRow> {
    const sudo = request.headers.sudo ?? (request.query as Record<string, unknown>).sudo;
    if (typeof sudo !== 'string' || sudo === '') {
        return doer;
    }

    if (!doer.is_admin) {
        throw new BareForbiddenError('Only administrators allowed to sudo.');
    }

    const user = await users(request.server).byName(sudo);
    if (!user || user.type !== USER_TYPE.individual) {
        throw new NotFoundError(`user redirect does not exist [name: ${sudo}]`);
    }

    return user;
}

/** Stands in request.auth.credentials for "none presented" from onPreAuth to onCredentials (see skipAnonymous). */
const NO_CREDENTIALS: RequestAuth['credentials'] = Object.freeze({});

/** Whether the route authenticates with the git strategy, credentials being optional. */
function optionalGitAuth(request: Request): boolean {
    const auth = request.route.settings.auth;
    return typeof auth === 'object' && auth.mode !== 'required' && (auth.strategies?.includes(GIT_AUTH_STRATEGY) ?? false);
}

/**
 * Lets anonymous requests past hapi's authentication without its failure path. A request that presents no credentials
 * would make the scheme and then hapi each build an error with a stack trace, and log two events, on every anonymous
 * read. Credentials already set when authentication starts make hapi skip the strategies (as server.inject's do): a
 * placeholder is set in onPreAuth, and taken away in onCredentials, before anything reads it, leaving the request
 * unauthenticated as hapi would have left it.
 */
function skipAnonymous(server: Server): void {
    server.ext('onPreAuth', (request, h) => {
        if (!request.auth.credentials && optionalGitAuth(request) && !presentedCredential(request)) {
            request.auth.credentials = NO_CREDENTIALS;
        }

        return h.continue;
    });
    server.ext('onCredentials', (request, h) => {
        if (request.auth.credentials === NO_CREDENTIALS) {
            request.auth.isAuthenticated = false;
            // hapi's own value for an unauthenticated request.
            request.auth.credentials = null as unknown as RequestAuth['credentials'];
        }

        return h.continue;
    });
}

/** Gitea's credentials: token or Bearer header, Basic with password or token, token or access_token in the query. */
export function registerGitAuth(server: Server): void {
    skipAnonymous(server);
    server.auth.scheme(GIT_AUTH_STRATEGY, () => ({
        async authenticate(request: Request, h: ResponseToolkit) {
            const presented = presentedCredential(request);
            if (!presented) {
                throw Boom.unauthorized(null, 'token');
            }

            if (presented.token === undefined && presented.username === undefined) {
                throw Boom.unauthorized(INVALID_CREDENTIALS);
            }

            const { user: doer, token, asOf } = await signIn(request, presented);
            const user = await applySudo(request, doer);
            const credentials: GitCredentials = { user, doer, token, asOf };
            return h.authenticated({ credentials });
        },
    }));
    server.auth.strategy(GIT_AUTH_STRATEGY, GIT_AUTH_STRATEGY);
}

export function credentialsOf(request: Request): GitCredentials | undefined {
    return request.auth.isAuthenticated ? (request.auth.credentials as GitCredentials) : undefined;
}

/** The request's view of the database for cached reads: what its authentication checked, if a token signed it in. */
export function readsAsOf(request: Request): VersionSnapshot | undefined {
    return credentialsOf(request)?.asOf;
}

/** The signed-in user of a route that demands one (the access check has already refused anonymous callers). */
export function signedInUser(request: Request): UserRow {
    const credentials = credentialsOf(request);
    if (!credentials) {
        throw Boom.unauthorized('token is required');
    }

    return credentials.user;
}
