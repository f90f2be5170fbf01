import type { Knex } from 'knex';

import { defineService } from '../../../../lib/services.ts';
import { USER_TYPE, type UserRow } from '../identity/user-service.ts';
import type { RepositoryRow } from './repository-service.ts';
import { Service } from '../../../../lib/service.ts';

const VISIBILITY = { public: 0, limited: 1, private: 2 } as const;
const WRITING_TEAMS = ['owner', 'admin', 'write'];

export interface RepositoryRights {
    canRead: boolean;
    canWrite: boolean;
}

/** What one user holds in one organisation: membership, and the rights of their teams there. */
export interface Membership {
    isMember: boolean;
    teams: string[];
}

const NO_RIGHTS: RepositoryRights = { canRead: false, canWrite: false };
const NOT_A_MEMBER: Membership = { isMember: false, teams: [] };

/**
 * Gitea's HasOrgOrUserVisible: anonymous callers see public owners; a signed-in user also sees limited ones,
 * and a private one (or any one, when the user is restricted) only as its member, itself or an administrator.
 */
function ownerVisible(viewer: UserRow | undefined, owner: UserRow, membership: Membership): boolean {
    if (!viewer) {
        return owner.visibility === VISIBILITY.public;
    }

    if (viewer.is_admin || viewer.id === owner.id || membership.isMember) {
        return true;
    }

    return !viewer.is_restricted && owner.visibility !== VISIBILITY.private;
}

/**
 * What a viewer may do with a repository's issues: the owner's visibility first (a repository of an owner the
 * viewer cannot see is not there at all), then the repository's privacy. Every route that reaches a repository
 * decides through this one function. There are no collaborators nor per-repository teams here: an
 * organisation's members read all of its repositories, and its writing teams write to them.
 */
export function repositoryRights(
    viewer: UserRow | undefined,
    repository: RepositoryRow,
    owner: UserRow,
    membership: Membership = NOT_A_MEMBER,
): RepositoryRights {
    if (!ownerVisible(viewer, owner, membership)) {
        return NO_RIGHTS;
    }

    if (viewer && (viewer.is_admin || viewer.id === owner.id)) {
        return { canRead: true, canWrite: true };
    }

    // Gitea gives a restricted user nothing of a public repository that it has not been given explicitly.
    const everyoneReads = !repository.is_private && !viewer?.is_restricted;
    return {
        canRead: everyoneReads || membership.isMember,
        canWrite: membership.teams.some((team) => WRITING_TEAMS.includes(team)),
    };
}

function membershipKey(userId: number, orgId: number): string {
    return `${userId}:${orgId}`;
}

/** Loads the memberships that `repositoryRights` needs, one query per table for any number of users and owners. */
export class RepositoryAccessService extends Service {
    /** Inside a transaction, pass it: SQLite has one connection, which the transaction holds. */
    async #memberships(userIds: number[], owners: UserRow[], knex: Knex): Promise<Map<string, Membership>> {
        const orgIds = [...new Set(owners.filter((owner) => owner.type === USER_TYPE.organization).map((owner) => owner.id))];
        const users = [...new Set(userIds)];
        const found = new Map<string, Membership>();
        if (orgIds.length === 0 || users.length === 0) {
            return found;
        }

        const members: Array<{ uid: number | string; org_id: number | string }> = await knex('org_users')
            .whereIn('org_id', orgIds)
            .whereIn('uid', users)
            .select('uid', 'org_id');
        for (const row of members) {
            found.set(membershipKey(Number(row.uid), Number(row.org_id)), { isMember: true, teams: [] });
        }

        const teams: Array<{ uid: number | string; org_id: number | string; authorize: string }> = await knex('team_users')
            .join('teams', 'teams.id', 'team_users.team_id')
            .whereIn('team_users.org_id', orgIds)
            .whereIn('team_users.uid', users)
            .select('team_users.uid', 'team_users.org_id', 'teams.authorize');
        for (const row of teams) {
            const key = membershipKey(Number(row.uid), Number(row.org_id));
            const membership = found.get(key) ?? { isMember: false, teams: [] };
            membership.teams.push(row.authorize);
            found.set(key, membership);
        }

        return found;
    }

    async rights(viewer: UserRow | undefined, repository: RepositoryRow, owner: UserRow): Promise<RepositoryRights> {
        if (!viewer) {
            return repositoryRights(viewer, repository, owner);
        }

        const memberships = await this.#memberships([viewer.id], [owner], this.server.app.knex);
        return repositoryRights(viewer, repository, owner, memberships.get(membershipKey(viewer.id, owner.id)));
    }

    /** The users among `candidates` who may read the repository. */
    async readers(candidates: UserRow[], repository: RepositoryRow, owner: UserRow, knex: Knex = this.server.app.knex): Promise<UserRow[]> {
        const memberships = await this.#memberships(
            candidates.map((user) => user.id),
            [owner],
            knex,
        );
        return candidates.filter(
            (user) => repositoryRights(user, repository, owner, memberships.get(membershipKey(user.id, owner.id))).canRead,
        );
    }

    /** The ids of the repositories (each given with its owner) that the viewer may not read. */
    async unreadable(viewer: UserRow, repositories: Array<{ repository: RepositoryRow; owner: UserRow }>): Promise<number[]> {
        if (viewer.is_admin) {
            return [];
        }

        const memberships = await this.#memberships(
            [viewer.id],
            repositories.map(({ owner }) => owner),
            this.server.app.knex,
        );
        return repositories
            .filter(({ repository, owner }) => {
                const membership = memberships.get(membershipKey(viewer.id, owner.id));
                return !repositoryRights(viewer, repository, owner, membership).canRead;
            })
            .map(({ repository }) => repository.id);
    }
}

export const repositoryAccess = defineService<RepositoryAccessService>('repository-access', (owner) => new RepositoryAccessService(owner));
