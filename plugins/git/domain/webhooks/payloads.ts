import type { Server } from '@hapi/hapi';

import { type ApiUser, toApiUser } from '../identity/format.ts';
import type { UserRow } from '../identity/user-service.ts';
import { type ApiRepository, toApiRepository } from '../repositories/format.ts';
import type { RepositoryRow } from '../repositories/repository-service.ts';

/** Payloads show people as an anonymous viewer would (no e-mail), as Gitea's ToUser with no doer does. */
export function payloadUser(server: Server, user: UserRow): ApiUser {
    return toApiUser(user, undefined, server.app.config.publicUrl);
}

/** The repository as its owner sees it: Gitea converts it with owner access for webhooks. */
export function payloadRepository(server: Server, repository: RepositoryRow, owner: UserRow): ApiRepository {
    const api = toApiRepository(repository, owner, undefined, server.app.config.publicUrl);
    return { ...api, permissions: { admin: true, push: true, pull: true } };
}

/** Gitea's RepositoryPayload; `organization` is the owner, whether a user or an organisation. */
export function repositoryPayload(
    server: Server,
    action: 'created' | 'deleted',
    repository: RepositoryRow,
    owner: UserRow,
    sender: UserRow,
): object {
    return {
        action,
        repository: payloadRepository(server, repository, owner),
        organization: payloadUser(server, owner),
        sender: payloadUser(server, sender),
    };
}
