import type { Server } from '@hapi/hapi';

import { now } from '../../../../lib/database.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import type { Page, Paging } from '../../../../lib/paging.ts';
import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { isValidEmail } from '../../../../lib/email.ts';
import { type ApiOrganization, toApiOrganization } from '../identity/format.ts';
import { countOwnedThings, toUserRow, USER_TYPE, type UserPage, type UserRow, users, visibilityValue } from '../identity/user-service.ts';
import { Service } from '../../../../lib/service.ts';

export interface CreateOrgInput {
    username: string;
    full_name?: string;
    email?: string;
    description?: string;
    website?: string;
    location?: string;
    visibility?: string;
    repo_admin_change_team_access?: boolean;
}

export type EditOrgInput = Omit<CreateOrgInput, 'username'>;

const VISIBILITY = { public: 0, limited: 1, private: 2 } as const;

/** Organisations: rows of `users` with type 1, an Owners team, and memberships. */
export class OrganizationService extends Service {
    readonly #pages: ReadCache<Page<ApiOrganization>>;

    constructor(server: Server) {
        super(server);
        this.#pages = readCache(server, ['users', 'org_users']);
    }
    async create(owner: UserRow, input: CreateOrgInput, doer: UserRow): Promise<UserRow> {
        if (!doer.is_admin && !doer.allow_create_organization) {
            throw new ForbiddenError('not allowed to create org');
        }

        users(this.server).checkNewName(input.username);
        if (input.email && !isValidEmail(input.email)) {
            throw new ValidationError(`e-mail invalid [email: ${input.email}]`);
        }

        const visibility = visibilityValue(input.visibility) ?? VISIBILITY.public;
        const createdAt = now();
        return await this.knex.transaction(async (trx) => {
            if (await users(this.server).isNameTaken(input.username, trx)) {
                throw new ValidationError(`user already exists [name: ${input.username}]`);
            }

            const [id] = await trx('users').insert({
                lower_name: input.username.toLowerCase(),
                name: input.username,
                full_name: input.full_name ?? '',
                email: input.email ?? '',
                description: input.description ?? '',
                website: input.website ?? '',
                location: input.location ?? '',
                visibility,
                repo_admin_change_team_access: input.repo_admin_change_team_access ?? false,
                type: USER_TYPE.organization,
                is_active: true,
                created_at: createdAt,
                updated_at: createdAt,
            });
            const [teamId] = await trx('teams').insert({
                org_id: id,
                lower_name: 'owners',
                name: 'Owners',
                authorize: 'owner',
                includes_all_repositories: true,
                can_create_org_repo: true,
            });
            await trx('team_users').insert({ org_id: id, team_id: teamId, uid: owner.id });
            await trx('org_users').insert({ org_id: id, uid: owner.id, is_public: false });
            return toUserRow(await trx('users').where({ id }).first());
        });
    }

    async isOwner(org: UserRow, user: UserRow | undefined): Promise<boolean> {
        if (!user) {
            return false;
        }

        const row = await this.knex('team_users')
            .join('teams', 'teams.id', 'team_users.team_id')
            .where({ 'team_users.org_id': org.id, 'team_users.uid': user.id, 'teams.authorize': 'owner' })
            .first('team_users.id');
        return Boolean(row);
    }

    async isMember(org: UserRow, user: UserRow | undefined): Promise<boolean> {
        if (!user) {
            return false;
        }

        return Boolean(await this.knex('org_users').where({ org_id: org.id, uid: user.id }).first('id'));
    }

    /** Members of a team that may create repositories (the Owners team may). */
    async canCreateRepository(org: UserRow, user: UserRow): Promise<boolean> {
        const row = await this.knex('team_users')
            .join('teams', 'teams.id', 'team_users.team_id')
            .where({ 'team_users.org_id': org.id, 'team_users.uid': user.id })
            .where((where) => where.where('teams.authorize', 'owner').orWhere('teams.can_create_org_repo', true))
            .first('team_users.id');
        return Boolean(row);
    }

    /** Private organisations are seen by members and administrators, limited ones by anyone signed in. */
    async canSee(org: UserRow, viewer: UserRow | undefined): Promise<boolean> {
        if (org.visibility === VISIBILITY.public || viewer?.is_admin) {
            return true;
        }

        if (org.visibility === VISIBILITY.limited) {
            return Boolean(viewer);
        }

        return await this.isMember(org, viewer);
    }

    /** The organisation behind a path's name, as the caller may see it (otherwise 404, as Gitea hides it). */
    async visible(name: string, viewer: UserRow | undefined): Promise<UserRow> {
        const org = await users(this.server).resolve(name, USER_TYPE.organization);
        if (!(await this.canSee(org, viewer))) {
            throw new NotFoundError(`user redirect does not exist [name: ${name}]`);
        }

        return org;
    }

    async edit(org: UserRow, input: EditOrgInput): Promise<UserRow> {
        if (input.email && !isValidEmail(input.email)) {
            throw new ValidationError(`e-mail invalid [email: ${input.email}]`);
        }

        const changes: Record<string, unknown> = {};
        for (const field of ['full_name', 'email', 'description', 'website', 'location', 'repo_admin_change_team_access'] as const) {
            if (input[field] !== undefined) {
                changes[field] = input[field];
            }
        }

        const visibility = visibilityValue(input.visibility);
        if (visibility !== undefined) {
            changes.visibility = visibility;
        }

        await this.knex('users')
            .where({ id: org.id })
            .update({ ...changes, updated_at: now() });
        return (await users(this.server).byId(org.id)) as UserRow;
    }

    /** Refused while the organisation still owns repositories or packages (Gitea answers 500; we say why). */
    async delete(org: UserRow): Promise<void> {
        const owned = await countOwnedThings(org.id, this.server);
        if (owned) {
            throw new ValidationError(`organization still has ownership of ${owned} [uid: ${org.id}]`);
        }

        await this.knex('users').where({ id: org.id }).delete();
    }

    /**
     * Organisations the viewer may see, by name: all for administrators; otherwise public, limited when signed in,
     * and their own. Kept in memory until a user or a membership is written.
     */
    async list(viewer: UserRow | undefined, paging: Paging, all = false, asOf?: VersionSnapshot): Promise<Page<ApiOrganization>> {
        const seesAll = all || viewer?.is_admin === true;
        // An organisation shows its e-mail address to signed-in callers only.
        const key = JSON.stringify([seesAll, viewer?.id ?? null, paging.limit, paging.offset]);
        return await this.#pages.get(
            key,
            async () => {
                const { rows, total } = await this.#list(seesAll ? undefined : (viewer ?? null), paging);
                const { publicUrl } = this.server.app.config;
                return { items: rows.map((org) => toApiOrganization(org, viewer, publicUrl)), total };
            },
            asOf,
        );
    }

    /** `viewer` undefined: every organisation; null: an anonymous caller's. */
    async #list(viewer: UserRow | null | undefined, paging: Paging): Promise<UserPage> {
        const query = this.knex('users').where({ type: USER_TYPE.organization });
        if (viewer !== undefined) {
            query.where((where) => {
                where.where('visibility', VISIBILITY.public);
                if (viewer !== null) {
                    where
                        .orWhere('visibility', VISIBILITY.limited)
                        .orWhereIn('id', this.knex('org_users').where({ uid: viewer.id }).select('org_id'));
                }
            });
        }

        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query.orderBy('lower_name', 'asc').limit(paging.limit).offset(paging.offset);
        return { rows: rows.map(toUserRow), total };
    }
}

export const organizations = defineService<OrganizationService>('organizations', (owner) => new OrganizationService(owner));
