import type { Lifecycle, Request } from '@hapi/hapi';

import { ValidationError } from '../../../../lib/errors.ts';
import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { pathUser } from '../shared/access.ts';
import { readsAsOf, signedInUser } from '../../domain/identity/auth.ts';
import { toApiUser } from '../../domain/identity/format.ts';
import { type CreateUserInput, type EditUserInput, USER_TYPE, type UserSearch, users } from '../../domain/identity/user-service.ts';
import { resolveSortOrder } from '../shared/query.ts';

/** Gitea's user_model.AdminUserOrderByMap; no sort is by name. */
const SORTS = ['name', 'created', 'updated', 'id'];

function searchFilters(query: Record<string, unknown>): UserSearch {
    const order = resolveSortOrder(query, SORTS);
    return { ...(query as UserSearch), sort: order?.sort, order: order?.order };
}

function publicUrl(request: Request): string {
    return request.server.app.config.publicUrl;
}

export const adminSearchUsers: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const { items, total } = await users(request.server).search(
        searchFilters(request.query),
        paging,
        signedInUser(request),
        readsAsOf(request),
    );
    return setPagingHeaders(request, h.response(items), publicUrl(request), { total, paging });
};

export const adminCreateUser: Lifecycle.Method = async (request, h) => {
    const input = request.payload as CreateUserInput;
    // Gitea makes an administrator-created user change the password unless told otherwise.
    const user = await users(request.server).create({ ...input, must_change_password: input.must_change_password ?? true });
    return h.response(toApiUser(user, signedInUser(request), publicUrl(request))).code(201);
};

export const adminEditUser: Lifecycle.Method = async (request) => {
    const edited = await users(request.server).edit(pathUser(request), request.payload as EditUserInput);
    return toApiUser(edited, signedInUser(request), publicUrl(request));
};

export const adminDeleteUser: Lifecycle.Method = async (request, h) => {
    await users(request.server).delete(pathUser(request), signedInUser(request), (request.query as { purge?: boolean }).purge === true);
    return h.response().code(204);
};

export const adminRenameUser: Lifecycle.Method = async (request, h) => {
    const user = pathUser(request);
    if (user.type !== USER_TYPE.individual) {
        throw new ValidationError('target is an organization but not user');
    }

    await users(request.server).rename(user, (request.payload as { new_username: string }).new_username);
    return h.response().code(204);
};
