import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { now, whereContains } from '../../../../lib/database.ts';
import { BadRequestError, NotFoundError, RenamedError, ValidationError } from '../../../../lib/errors.ts';
import type { Page, Paging } from '../../../../lib/paging.ts';
import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { type ApiUser, toApiUser } from './format.ts';
import { isValidEmail } from '../../../../lib/email.ts';
import { userNameProblem } from './names.ts';
import { hashPassword, MIN_PASSWORD_LENGTH } from './passwords.ts';
import { toUserRow, USER_TYPE, type UserRow, visibilityValue } from './user-row.ts';
import { Service } from '../../../../lib/service.ts';

// The row and its conversions live in user-row.ts, which the formatters read without the service.
export { toUserRow, USER_TYPE, type UserRow, visibilityName, visibilityValue } from './user-row.ts';

export interface CreateUserInput {
    username: string;
    email: string;
    password?: string;
    full_name?: string;
    login_name?: string;
    source_id?: number;
    must_change_password?: boolean;
    restricted?: boolean;
    visibility?: string;
    created_at?: string;
    is_admin?: boolean;
}

export interface EditUserInput {
    email?: string;
    full_name?: string;
    password?: string;
    must_change_password?: boolean;
    website?: string;
    location?: string;
    description?: string;
    active?: boolean;
    admin?: boolean;
    allow_git_hook?: boolean;
    allow_import_local?: boolean;
    max_repo_creation?: number;
    prohibit_login?: boolean;
    allow_create_organization?: boolean;
    restricted?: boolean;
    visibility?: string;
    login_name?: string;
    source_id?: number;
}

export interface UserSearch {
    q?: string;
    login_name?: string;
    source_id?: number;
    visibility?: string;
    is_active?: boolean;
    is_admin?: boolean;
    is_restricted?: boolean;
    is_2fa_enabled?: boolean;
    is_prohibit_login?: boolean;
    sort?: string;
    order?: string;
}

const SEARCH_FIELDS: Array<keyof UserSearch> = [
    'q',
    'login_name',
    'source_id',
    'visibility',
    'is_active',
    'is_admin',
    'is_restricted',
    'is_2fa_enabled',
    'is_prohibit_login',
    'sort',
    'order',
];

export interface UserPage {
    rows: UserRow[];
    total: number;
}

const SORT_COLUMNS: Record<string, string> = { name: 'lower_name', created: 'created_at', updated: 'updated_at', id: 'id' };

/** Things other parts of the system own that block or follow a user's deletion (repositories, packages...). */
export interface OwnedThings {
    name: string;
    count(ownerId: number, server: Server): Promise<number>;
    /** Removes what the owner has: database rows inside `trx`, files after it commits (the returned function). */
    purge(owner: UserRow, trx: Knex.Transaction, server: Server): Promise<(() => Promise<void>) | void>;
}

const ownedThings: OwnedThings[] = [];

/** The names of the kinds of things an owner still has (e.g. "repositories, packages"), or '' when none. */
export async function countOwnedThings(ownerId: number, server: Server): Promise<string> {
    const kinds: string[] = [];
    for (const things of ownedThings) {
        if ((await things.count(ownerId, server)) > 0) {
            kinds.push(things.name);
        }
    }

    return kinds.join(', ');
}

/** Repositories, packages and the like register here, so that deleting a user honours them. */
export function registerOwnedThings(things: OwnedThings): void {
    if (!ownedThings.some((registered) => registered.name === things.name)) {
        ownedThings.push(things);
    }
}

export class UserService extends Service {
    readonly #searches: ReadCache<Page<ApiUser>>;

    constructor(server: Server) {
        super(server);
        this.#searches = readCache(server, ['users']);
    }
    async byId(id: number): Promise<UserRow | undefined> {
        const raw = await this.knex('users').where({ id }).first();
        return raw ? toUserRow(raw) : undefined;
    }

    async byName(name: string): Promise<UserRow | undefined> {
        const raw = await this.knex('users').where({ lower_name: name.toLowerCase() }).first();
        return raw ? toUserRow(raw) : undefined;
    }

    /**
     * The user or organisation behind a path's name: a renamed name answers 307 to the new one,
     * an unknown one 404 with Gitea's message.
     */
    async resolve(name: string, type?: number): Promise<UserRow> {
        const user = await this.byName(name);
        if (user && (type === undefined || user.type === type)) {
            return user;
        }

        if (!user) {
            const redirect = await this.knex('user_redirects').where({ lower_name: name.toLowerCase() }).first();
            if (redirect) {
                const target = await this.byId(Number(redirect.redirect_user_id));
                if (target && (type === undefined || target.type === type)) {
                    throw new RenamedError(name, target.name);
                }
            }
        }

        throw new NotFoundError(`user redirect does not exist [name: ${name}]`);
    }

    async isNameTaken(name: string, trx: Knex = this.knex): Promise<boolean> {
        return Boolean(await trx('users').where({ lower_name: name.toLowerCase() }).first('id'));
    }

    async isEmailTaken(email: string, exceptUserId = 0, trx: Knex = this.knex): Promise<boolean> {
        const row = await trx('email_addresses').where({ lower_email: email.toLowerCase() }).whereNot({ uid: exceptUserId }).first('id');
        return Boolean(row);
    }

    checkNewName(name: string): void {
        const problem = userNameProblem(name);
        if (problem) {
            throw new ValidationError(problem.message);
        }
    }

    async create(input: CreateUserInput): Promise<UserRow> {
        this.checkNewName(input.username);
        if (!isValidEmail(input.email)) {
            throw new ValidationError(`e-mail invalid [email: ${input.email}]`);
        }

        const local = !input.source_id;
        if (local && (input.password ?? '').length < MIN_PASSWORD_LENGTH) {
            throw new BadRequestError('PasswordIsRequired');
        }

        if (input.source_id) {
            throw new ValidationError(`login source does not exist [id: ${input.source_id}]`);
        }

        const visibility = visibilityValue(input.visibility) ?? 0;
        const passwordHash = input.password ? await hashPassword(input.password) : '';
        const created = input.created_at ? Date.parse(input.created_at) : now();
        return await this.knex.transaction(async (trx) => {
            if (await this.isNameTaken(input.username, trx)) {
                throw new ValidationError(`user already exists [name: ${input.username}]`);
            }

            if (await this.isEmailTaken(input.email, 0, trx)) {
                throw new ValidationError(`e-mail already in use [email: ${input.email}]`);
            }

            const [id] = await trx('users').insert({
                lower_name: input.username.toLowerCase(),
                name: input.username,
                full_name: input.full_name ?? '',
                email: input.email,
                passwd_hash: passwordHash,
                must_change_password: input.must_change_password ?? false,
                login_name: input.login_name ?? '',
                login_source: 0,
                type: USER_TYPE.individual,
                visibility,
                is_active: true,
                is_admin: input.is_admin ?? false,
                is_restricted: input.restricted ?? false,
                created_at: created,
                updated_at: created,
            });
            await trx('email_addresses').insert({
                uid: id,
                email: input.email,
                lower_email: input.email.toLowerCase(),
                is_activated: true,
                is_primary: true,
            });
            return toUserRow(await trx('users').where({ id }).first());
        });
    }

    async edit(user: UserRow, input: EditUserInput): Promise<UserRow> {
        const changes: Partial<Record<keyof UserRow, unknown>> = {};
        if (input.email !== undefined) {
            if (!isValidEmail(input.email)) {
                throw new BadRequestError(`e-mail invalid [email: ${input.email}]`);
            }

            if (await this.isEmailTaken(input.email, user.id)) {
                throw new BadRequestError(`e-mail already in use [email: ${input.email}]`);
            }

            changes.email = input.email;
        }

        if (input.password !== undefined && input.password !== '') {
            if (input.password.length < MIN_PASSWORD_LENGTH) {
                throw new BadRequestError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
            }

            changes.passwd_hash = await hashPassword(input.password);
        }

        if (input.admin === false && user.is_admin && (await this.#countActiveAdmins()) <= 1) {
            throw new BadRequestError(`can not delete the last admin user [uid: ${user.id}]`);
        }

        const visibility = visibilityValue(input.visibility);
        if (visibility !== undefined) {
            changes.visibility = visibility;
        }

        const direct: Array<[keyof EditUserInput, keyof UserRow]> = [
            ['full_name', 'full_name'],
            ['must_change_password', 'must_change_password'],
            ['website', 'website'],
            ['location', 'location'],
            ['description', 'description'],
            ['active', 'is_active'],
            ['admin', 'is_admin'],
            ['allow_git_hook', 'allow_git_hook'],
            ['allow_import_local', 'allow_import_local'],
            ['max_repo_creation', 'max_repo_creation'],
            ['prohibit_login', 'prohibit_login'],
            ['allow_create_organization', 'allow_create_organization'],
            ['restricted', 'is_restricted'],
            ['login_name', 'login_name'],
        ];
        for (const [field, column] of direct) {
            if (input[field] !== undefined) {
                changes[column] = input[field];
            }
        }

        await this.knex.transaction(async (trx) => {
            await trx('users')
                .where({ id: user.id })
                .update({ ...changes, updated_at: now() });
            if (changes.email !== undefined) {
                await this.#replacePrimaryEmail(trx, user.id, String(changes.email));
            }

            if (changes.passwd_hash !== undefined) {
                // A new password ends the user's tokens, as in Gitea.
                await trx('access_tokens').where({ uid: user.id }).delete();
            }
        });
        return (await this.byId(user.id)) as UserRow;
    }

    async #replacePrimaryEmail(trx: Knex.Transaction, userId: number, email: string): Promise<void> {
        const existing = await trx('email_addresses').where({ uid: userId, lower_email: email.toLowerCase() }).first();
        await trx('email_addresses').where({ uid: userId, is_primary: true }).update({ is_primary: false });
        if (existing) {
            await trx('email_addresses').where({ id: existing.id }).update({ is_primary: true, email });
            return;
        }

        await trx('email_addresses').insert({ uid: userId, email, lower_email: email.toLowerCase(), is_activated: true, is_primary: true });
    }

    async #countActiveAdmins(): Promise<number> {
        const row = await this.knex('users')
            .where({ is_admin: true, is_active: true, type: USER_TYPE.individual })
            .count({ count: '*' })
            .first();
        return Number(row?.count ?? 0);
    }

    async rename(user: UserRow, newName: string): Promise<void> {
        if (newName === user.name) {
            return;
        }

        const caseOnly = newName.toLowerCase() === user.lower_name;
        if (!caseOnly) {
            this.checkNewName(newName);
        }

        const afterCommit: Array<() => Promise<void>> = [];
        await this.knex.transaction(async (trx) => {
            if (!caseOnly && (await this.isNameTaken(newName, trx))) {
                throw new ValidationError(`user already exists [name: ${newName}]`);
            }

            await trx('users').where({ id: user.id }).update({ name: newName, lower_name: newName.toLowerCase(), updated_at: now() });
            if (!caseOnly) {
                await trx('user_redirects').where({ lower_name: newName.toLowerCase() }).delete();
                await trx('user_redirects').where({ lower_name: user.lower_name }).delete();
                await trx('user_redirects').insert({ lower_name: user.lower_name, redirect_user_id: user.id });
            }

            for (const hook of renameHooks) {
                const after = await hook(user, newName, trx, this.server);
                if (after) {
                    afterCommit.push(after);
                }
            }
        });
        for (const after of afterCommit) {
            await after();
        }
    }

    /** Deletes an individual user; without purge, refused while the user still owns or belongs to things. */
    async delete(user: UserRow, doer: UserRow, purge: boolean): Promise<void> {
        if (user.type !== USER_TYPE.individual) {
            throw new ValidationError('target is an organization but not user');
        }

        if (user.id === doer.id) {
            throw new ValidationError('you cannot delete yourself');
        }

        if (!purge) {
            for (const things of ownedThings) {
                if ((await things.count(user.id, this.server)) > 0) {
                    throw new ValidationError(`user still has ownership of ${things.name} [uid: ${user.id}]`);
                }
            }

            const memberships = await this.knex('org_users').where({ uid: user.id }).count({ count: '*' }).first();
            if (Number(memberships?.count ?? 0) > 0) {
                throw new ValidationError(`user still has membership of organizations [uid: ${user.id}]`);
            }
        }

        if (user.is_admin && user.is_active && (await this.#countActiveAdmins()) <= 1) {
            throw new ValidationError(`can not delete the last admin user [uid: ${user.id}]`);
        }

        const afterCommit: Array<() => Promise<void>> = [];
        await this.knex.transaction(async (trx) => {
            if (purge) {
                for (const things of ownedThings) {
                    const after = await things.purge(user, trx, this.server);
                    if (after) {
                        afterCommit.push(after);
                    }
                }

                await this.#leaveOrganisations(trx, user);
            }

            await trx('users').where({ id: user.id }).delete();
        });
        for (const after of afterCommit) {
            await after();
        }
    }

    /** Leaves every organisation; an organisation the user was the last owner of is deleted with it. */
    async #leaveOrganisations(trx: Knex.Transaction, user: UserRow): Promise<void> {
        const ownerTeams = await trx('teams')
            .join('team_users', 'team_users.team_id', 'teams.id')
            .where({ 'team_users.uid': user.id, 'teams.authorize': 'owner' })
            .select('teams.id', 'teams.org_id');
        for (const team of ownerTeams) {
            const owners = await trx('team_users').where({ team_id: team.id }).count({ count: '*' }).first();
            if (Number(owners?.count ?? 0) <= 1) {
                await trx('users').where({ id: team.org_id }).delete();
            }
        }

        await trx('team_users').where({ uid: user.id }).delete();
        await trx('org_users').where({ uid: user.id }).delete();
    }

    /** A page of the users matching every filter given, as the viewer sees them; kept in memory until a user is written. */
    async search(filters: UserSearch, paging: Paging, viewer: UserRow, asOf?: VersionSnapshot): Promise<Page<ApiUser>> {
        // What a user shows depends on the viewer only through its id and administrator flag.
        const key = JSON.stringify([
            viewer.id,
            viewer.is_admin,
            paging.limit,
            paging.offset,
            ...SEARCH_FIELDS.map((field) => filters[field] ?? null),
        ]);
        return await this.#searches.get(
            key,
            async () => {
                const { rows, total } = await this.#search(filters, paging);
                const { publicUrl } = this.server.app.config;
                return { items: rows.map((user) => toApiUser(user, viewer, publicUrl)), total };
            },
            asOf,
        );
    }

    async #search(filters: UserSearch, paging: Paging): Promise<UserPage> {
        const query = this.knex('users').where({ type: USER_TYPE.individual });
        if (filters.q) {
            whereContains(query, ['lower_name', 'full_name', 'email'], filters.q);
        }

        if (filters.login_name !== undefined) {
            query.where({ login_name: filters.login_name });
        }

        if (filters.source_id !== undefined) {
            query.where({ login_source: filters.source_id });
        }

        const visibility = visibilityValue(filters.visibility);
        if (visibility !== undefined) {
            query.where({ visibility });
        }

        const flags: Array<[keyof UserSearch, string]> = [
            ['is_active', 'is_active'],
            ['is_admin', 'is_admin'],
            ['is_restricted', 'is_restricted'],
            ['is_prohibit_login', 'prohibit_login'],
        ];
        for (const [filter, column] of flags) {
            if (filters[filter] !== undefined) {
                query.where(column, Boolean(filters[filter]));
            }
        }

        if (filters.is_2fa_enabled === true) {
            // Two-factor sign-in is not offered by the git API yet, so no user has it.
            query.whereRaw('1 = 0');
        }

        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const column = SORT_COLUMNS[filters.sort ?? 'name'] ?? 'lower_name';
        const direction = filters.sort && filters.order === 'desc' ? 'desc' : 'asc';
        const rows = await query.orderBy(column, direction).orderBy('id', 'asc').limit(paging.limit).offset(paging.offset);
        return { rows: rows.map(toUserRow), total };
    }

    async touchLogin(userId: number): Promise<void> {
        await this.knex('users').where({ id: userId }).update({ last_login_at: now() });
    }
}

/** Runs inside the rename's transaction; a returned function runs once it has committed (moving files, say). */
type RenameHook = (user: UserRow, newName: string, trx: Knex.Transaction, server: Server) => Promise<(() => Promise<void>) | void>;
const renameHooks: RenameHook[] = [];

/** Repositories (names on disk and in records) follow their owner's rename through this. */
export function onUserRename(hook: RenameHook): void {
    renameHooks.push(hook);
}

export const users = defineService<UserService>('users', (owner) => new UserService(owner));
