import Boom from '@hapi/boom';
import type { Lifecycle, Request } from '@hapi/hapi';

import { BareForbiddenError, ForbiddenError, NotFoundError } from '../../../../lib/errors.ts';
import { organizations } from '../../domain/orgs/org-service.ts';
import { repositories } from '../../domain/repositories/repository-service.ts';
import { credentialsOf, type GitCredentials } from '../../domain/identity/auth.ts';
import { isPublicOnlyScope, type ScopeCategory, tokenGrants } from '../../domain/identity/token-service.ts';
import { USER_TYPE, type UserRow, users, visibilityName } from '../../domain/identity/user-service.ts';

const ORG_LEVELS = ['visible', 'member', 'owner'] as const;
const USER_KINDS = ['individual', 'any'] as const;

/** What an operation demands, from `x-gatehouse-access` in the Swagger document. */
export interface OperationAccess {
    scopes: ScopeCategory[];
    signIn: boolean;
    siteAdmin: boolean;
    /**
     * The path's `{org}` is loaded (404 when it is missing or hidden from the caller) and the caller must see it
     * (`visible`), be a member (`member`) or an owner (`owner`); site administrators are both (403 otherwise).
     */
    org?: (typeof ORG_LEVELS)[number];
    /** The path's `{username}` is loaded (404 when missing): an individual user (`individual`), or any account (`any`). */
    user?: (typeof USER_KINDS)[number];
}

/** The organisation a path names, as the access check loaded it: Gitea's ctx.Org. */
export interface PathOrg {
    org: UserRow;
    /** The caller owns it, or is a site administrator. */
    isOwner: boolean;
    /** The caller is a member (owners and site administrators are). */
    isMember: boolean;
}

declare module '@hapi/hapi' {
    interface PluginsStates {
        /** What the git access check loaded from the path, for the handler (pathOrg, pathUser). */
        gitPath?: { org?: PathOrg; user?: UserRow };
    }
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

/**
 * A token with the `public-only` scope, on an operation that asks for a scope: Gitea's ctx.PublicOnly. Such a token
 * reaches public organisations, users, repositories and packages only (checkPublicOnly, assignOrg).
 */
function isPublicOnly(credentials: GitCredentials | undefined, access: OperationAccess): boolean {
    return credentials?.token !== undefined && access.scopes.length > 0 && isPublicOnlyScope(credentials.token.scope);
}

/** Whether the request's token is limited to public resources, for listings that must leave the others out. */
export function publicOnlyToken(request: Request): boolean {
    return isPublicOnlyScope(credentialsOf(request)?.token?.scope ?? '');
}

const isPublic = (owner: UserRow): boolean => visibilityName(owner.visibility) === 'public';

/**
 * Gitea's rules for a public-only token, besides the organisation's (assignOrg): the notifications are refused
 * whole (rejectPublicOnly: they mix public and private repositories); a repository (`{owner}/{repo}`) that is private,
 * or whose owner is not public, is not there (repoAssignment's TokenCanAccessRepo, a 404 as for one the caller cannot
 * see); a package registry owner (`{owner}`) that is not public is refused (reqPackageAccess).
 */
async function checkPublicOnly(request: Request, access: OperationAccess): Promise<void> {
    const params = request.params as Record<string, string | undefined>;
    if (access.scopes.includes('notification') && params.repo === undefined) {
        throw new ForbiddenError('this endpoint is not available for public-only tokens');
    }

    if (params.owner === undefined) {
        return;
    }

    const owner = await users(request.server).byName(params.owner);
    if (!owner) {
        return; // the handler answers an unknown or renamed owner as it always does
    }

    if (params.repo !== undefined) {
        const repository = await repositories(request.server).byName(owner, params.repo);
        if (repository && (repository.is_private || !isPublic(owner))) {
            throw new NotFoundError();
        }
    } else if (access.scopes.includes('package') && !isPublic(owner)) {
        throw new ForbiddenError('token scope is limited to public packages');
    }
}

/**
 * Gitea's orgAssignment, with reqOrgMembership or reqOrgOwnership when the operation asks for them. A public-only
 * token is refused an organisation that is not public before anything else is checked (checkTokenPublicOnly).
 */
async function assignOrg(request: Request, level: NonNullable<OperationAccess['org']>, publicOnly: boolean): Promise<PathOrg> {
    const viewer = credentialsOf(request)?.user;
    const service = organizations(request.server);
    const name = String(request.params.org);
    const org = publicOnly ? await users(request.server).resolve(name, USER_TYPE.organization) : await service.visible(name, viewer);
    if (publicOnly && !isPublic(org)) {
        throw new ForbiddenError('token scope is limited to public orgs');
    }

    const isOwner = Boolean(viewer?.is_admin) || (await service.isOwner(org, viewer));
    const isMember = isOwner || (await service.isMember(org, viewer));
    if (level === 'owner' && !isOwner) {
        throw new ForbiddenError('Must be an organization owner');
    }

    if (level === 'member' && !isMember) {
        throw new ForbiddenError('Must be an organization member');
    }

    return { org, isOwner, isMember };
}

/** Gitea's UserAssignmentAPI: the path's user, found case-insensitively (a renamed one's old name redirects). */
async function assignUser(request: Request, kind: NonNullable<OperationAccess['user']>): Promise<UserRow> {
    return await users(request.server).resolve(String(request.params.username), kind === 'individual' ? USER_TYPE.individual : undefined);
}

/** A declaration the check does not know is a mistake in the Swagger document: it stops start-up. */
function checkDeclaration(access: OperationAccess): void {
    if (access.org !== undefined && !ORG_LEVELS.includes(access.org)) {
        throw new Error(`x-gatehouse-access: org must be one of ${ORG_LEVELS.join(', ')}, not ${String(access.org)}`);
    }

    if (access.user !== undefined && !USER_KINDS.includes(access.user)) {
        throw new Error(`x-gatehouse-access: user must be one of ${USER_KINDS.join(', ')}, not ${String(access.user)}`);
    }
}

/**
 * Runs after authentication on every git route: account state, token scope, sign-in, site administrator, then the
 * organisation or user the path names, loaded once here and handed to the handler (pathOrg, pathUser).
 */
export function accessCheck(access: OperationAccess): Lifecycle.Method {
    checkDeclaration(access);
    return async (request, h) => {
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

        const publicOnly = isPublicOnly(credentials, access);
        if (publicOnly) {
            await checkPublicOnly(request, access);
        }

        if (access.org || access.user) {
            request.plugins.gitPath = {
                org: access.org ? await assignOrg(request, access.org, publicOnly) : undefined,
                user: access.user ? await assignUser(request, access.user) : undefined,
            };
        }

        return h.continue;
    };
}

/** The organisation the path names, for an operation that declares `org` access. */
export function pathOrg(request: Request): PathOrg {
    const org = request.plugins.gitPath?.org;
    if (!org) {
        throw new Error(`${String(request.route.settings.id)} reads the path's organisation but declares no org access`);
    }

    return org;
}

/** The user the path names, for an operation that declares `user` access. */
export function pathUser(request: Request): UserRow {
    const user = request.plugins.gitPath?.user;
    if (!user) {
        throw new Error(`${String(request.route.settings.id)} reads the path's user but declares no user access`);
    }

    return user;
}
