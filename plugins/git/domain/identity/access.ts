import Boom from '@hapi/boom';
import type { Lifecycle, Request } from '@hapi/hapi';

import { BareForbiddenError, ForbiddenError } from '../../../../lib/errors.ts';
import { credentialsOf, type GitCredentials } from './auth.ts';
import { type ScopeCategory, tokenGrants } from './token-service.ts';
import type { UserRow } from './user-service.ts';

/** What an operation demands, from `x-gatehouse-access` in the Swagger document. */
export interface OperationAccess {
    scopes: ScopeCategory[];
    signIn: boolean;
    siteAdmin: boolean;
}

function accountRefusal(user: UserRow, publicUrl: string): string | undefined {
    if (!user.is_active) {
        return 'This account is not activated.';
    }

    if (user.prohibit_login) {
        return 'This account is prohibited from signing in, please contact your site administrator.';
    }

    if (user.must_change_password) {
        return `You must change your password. Change it at: ${publicUrl}user/settings/account`;
    }

    return undefined;
}

function checkScopes(request: Request, credentials: GitCredentials, access: OperationAccess): void {
    if (!credentials.token || access.scopes.length === 0) {
        return;
    }

    const level = request.method === 'get' || request.method === 'head' ? 'read' : 'write';
    const missing = access.scopes.filter((category) => !tokenGrants(credentials.token?.scope ?? '', category, level));
    if (missing.length > 0) {
        const required = access.scopes.map((category) => `${level}:${category}`).join(' ');
        throw new ForbiddenError(
            `token does not have at least one of required scope(s), required=[${required}], token scope=${credentials.token.scope}`,
        );
    }
}

/** Runs after authentication on every git route: account state, token scope, sign-in, site administrator. */
export function accessCheck(access: OperationAccess): Lifecycle.Method {
    return (request, h) => {
        const credentials = credentialsOf(request);
        if (credentials) {
            const refusal =
                accountRefusal(credentials.doer, request.server.app.config.publicUrl) ??
                accountRefusal(credentials.user, request.server.app.config.publicUrl);
            if (refusal) {
                throw new BareForbiddenError(refusal);
            }

            checkScopes(request, credentials, access);
        }

        if (access.signIn && !credentials) {
            throw Boom.unauthorized('token is required');
        }

        if (access.siteAdmin && !credentials?.user.is_admin) {
            throw new ForbiddenError('user should be the site admin');
        }

        return h.continue;
    };
}
