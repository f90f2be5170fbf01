/**
 * Users and groups: `/core/users/`, `/core/users/me/`, `/core/groups/`. A user is a superuser when one of their
 * groups is (`authentik Admins` holds akadmin), as in authentik, where `is_superuser` is read from the groups.
 */
import Crypto from 'node:crypto';

import type { ApiOperations } from './api.ts';
import { notFound } from './errors.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { type GroupRecord, type Store, timestamp, type UserRecord, type UserType, uuid } from './store.ts';

export const ADMINS_GROUP = 'authentik Admins';
export const ADMIN_USERNAME = 'akadmin';
const AVATAR = '/static/dist/assets/images/user_default.png';
/** The first version whose `SessionUser` has `users` (required): older servers do not send it (reference §9.1). */
const SESSION_USERS_SINCE = [2026, 8];

/** The user as a test describes it: groups by name. */
export interface StandInUser {
    pk: number;
    username: string;
    name: string;
    email: string;
    password: string;
    groups: string[];
    isSuperuser?: boolean;
    isActive?: boolean;
}

export interface NewUser {
    username: string;
    password: string;
    name?: string;
    email?: string;
    groups?: string[];
    isSuperuser?: boolean;
    isActive?: boolean;
    type?: UserType;
    path?: string;
}

export function groupsOf(store: Store, user: UserRecord): GroupRecord[] {
    return store.groups.filter((group) => group.users.includes(user.pk));
}

export function isSuperuser(store: Store, user: UserRecord): boolean {
    return groupsOf(store, user).some((group) => group.is_superuser);
}

/** authentik's `User.uid`: a hash of the install id and the user's pk, also the default `sub`. */
export function userUid(store: Store, user: UserRecord): string {
    return Crypto.createHash('sha256').update(`${store.installId}-${user.pk}`).digest('hex');
}

export function findUserByName(store: Store, username: string): UserRecord | undefined {
    return store.users.find((user) => user.username === username);
}

export function createGroup(store: Store, name: string, superuser = false): GroupRecord {
    if (store.groups.some((group) => group.name === name)) {
        throw new Error(`the authentik stand-in already has a group ${name}`);
    }

    const group = { pk: uuid(), num_pk: store.nextGroupNumPk(), name, is_superuser: superuser, users: [], attributes: {} };
    store.groups.push(group);
    return group;
}

/** Adds a user; groups named but missing are created. `isSuperuser` makes them a member of authentik Admins. */
export function createUser(store: Store, input: NewUser): UserRecord {
    if (findUserByName(store, input.username)) {
        throw new Error(`the authentik stand-in already has a user ${input.username}`);
    }

    const created = timestamp();
    const user: UserRecord = {
        pk: store.nextUserPk(),
        uuid: uuid(),
        username: input.username,
        name: input.name ?? input.username,
        email: input.email ?? '',
        password: input.password,
        is_active: input.isActive ?? true,
        type: input.type ?? 'internal',
        path: input.path ?? 'users',
        attributes: {},
        date_joined: created,
        last_login: null,
        last_updated: created,
        password_change_date: created,
    };
    store.users.push(user);
    const groupNames = [...(input.groups ?? []), ...(input.isSuperuser ? [ADMINS_GROUP] : [])];
    for (const name of new Set(groupNames)) {
        const group = store.groups.find((candidate) => candidate.name === name) ?? createGroup(store, name);
        group.users.push(user.pk);
    }

    return user;
}

/** akadmin in authentik Admins, as authentik's first start creates them. */
export function seedDirectory(store: Store, adminPassword: string): UserRecord {
    createGroup(store, ADMINS_GROUP, true);
    return createUser(store, {
        username: ADMIN_USERNAME,
        password: adminPassword,
        name: 'authentik Default Admin',
        email: 'root@localhost',
        isSuperuser: true,
    });
}

export function describeUser(store: Store, user: UserRecord): StandInUser {
    return {
        pk: user.pk,
        username: user.username,
        name: user.name,
        email: user.email,
        password: user.password,
        groups: groupsOf(store, user).map((group) => group.name),
        isSuperuser: isSuperuser(store, user),
        isActive: user.is_active,
    };
}

export function showPartialUser(store: Store, user: UserRecord): Json {
    const { pk, username, name, is_active, last_login, email, attributes } = user;
    return { pk, username, name, is_active, last_login, email, attributes, uid: userUid(store, user) };
}

export function showPartialGroup(group: GroupRecord): Json {
    const { pk, num_pk, name, is_superuser, attributes } = group;
    return { pk, num_pk, name, is_superuser, attributes };
}

export function showUser(store: Store, user: UserRecord, options: { includeGroups?: boolean; includeRoles?: boolean } = {}): Json {
    const { password: _password, ...fields } = user;
    const groups = groupsOf(store, user);
    return {
        ...fields,
        is_superuser: isSuperuser(store, user),
        groups: groups.map((group) => group.pk),
        groups_obj: options.includeGroups === false ? null : groups.map(showPartialGroup),
        roles: [],
        roles_obj: options.includeRoles === false ? null : [],
        avatar: AVATAR,
        uid: userUid(store, user),
    };
}

export function showGroup(store: Store, group: GroupRecord, query: Record<string, unknown>): Json {
    const members = store.users.filter((user) => group.users.includes(user.pk));
    return {
        ...showPartialGroup(group),
        parents: [],
        parents_obj: query.include_parents === true ? [] : null,
        users: members.map((user) => user.pk),
        users_obj: query.include_users === false ? null : members.map((user) => showPartialUser(store, user)),
        roles: [],
        roles_obj: [],
        inherited_roles_obj: query.include_inherited_roles === true ? [] : null,
        children: [],
        children_obj: query.include_children === true ? [] : null,
    };
}

function showUserSelf(store: Store, user: UserRecord): Json {
    return {
        pk: user.pk,
        username: user.username,
        name: user.name,
        is_active: user.is_active,
        is_superuser: isSuperuser(store, user),
        is_current: true,
        groups: groupsOf(store, user).map((group) => ({ name: group.name, pk: group.pk })),
        roles: [],
        email: user.email,
        avatar: AVATAR,
        uid: userUid(store, user),
        settings: {},
        type: user.type,
        system_permissions: [],
    };
}

function hasSessionUsers(version: string): boolean {
    const [major = 0, minor = 0] = version.split('.').map(Number);
    const [sinceMajor = 0, sinceMinor = 0] = SESSION_USERS_SINCE;
    return major > sinceMajor || (major === sinceMajor && minor >= sinceMinor);
}

export function versionDropsSessionUsers(version: string): boolean {
    return !hasSessionUsers(version);
}

const inList = (value: unknown): unknown[] | undefined => (Array.isArray(value) && value.length > 0 ? value : undefined);

export const directoryOperations: ApiOperations = {
    core_users_me_retrieve: {
        access: 'user',
        run({ store, caller }) {
            const self = showUserSelf(store, caller);
            return { status: 200, body: hasSessionUsers(store.version) ? { user: self, users: [self] } : { user: self } };
        },
    },

    core_users_list: {
        access: 'objects',
        run({ store, query }) {
            const types = inList(query.type);
            const byGroupName = inList(query.groups_by_name);
            const byGroupPk = inList(query.groups_by_pk);
            let users = store.users.filter((user) => {
                const groups = groupsOf(store, user);
                return (
                    (query.username === undefined || user.username === query.username) &&
                    (query.email === undefined || user.email === query.email) &&
                    (query.name === undefined || user.name === query.name) &&
                    (query.uuid === undefined || user.uuid === query.uuid) &&
                    (query.is_active === undefined || user.is_active === query.is_active) &&
                    (query.is_superuser === undefined || isSuperuser(store, user) === query.is_superuser) &&
                    (query.path === undefined || user.path === query.path) &&
                    (typeof query.path_startswith !== 'string' || user.path.startsWith(query.path_startswith)) &&
                    (!types || types.includes(user.type)) &&
                    (!byGroupName || groups.some((group) => byGroupName.includes(group.name))) &&
                    (!byGroupPk || groups.some((group) => byGroupPk.includes(group.pk)))
                );
            });
            users = searched(users, query.search, (user) => [user.username, user.name, user.email]);
            const options = { includeGroups: query.include_groups !== false, includeRoles: query.include_roles !== false };
            return {
                status: 200,
                body: paginated(
                    users.map((user) => showUser(store, user, options)),
                    query,
                    'username',
                ),
            };
        },
    },

    core_users_retrieve: {
        access: 'objects',
        run({ store, params }) {
            const user = store.users.find((candidate) => candidate.pk === params.id);
            if (!user) throw notFound();
            return { status: 200, body: showUser(store, user) };
        },
    },

    core_groups_list: {
        access: 'objects',
        run({ store, query }) {
            const byPk = inList(query.members_by_pk);
            const byUsername = inList(query.members_by_username);
            let groups = store.groups.filter((group) => {
                const members = store.users.filter((user) => group.users.includes(user.pk));
                return (
                    (query.name === undefined || group.name === query.name) &&
                    (query.is_superuser === undefined || group.is_superuser === query.is_superuser) &&
                    (!byPk || members.some((user) => byPk.includes(user.pk))) &&
                    (!byUsername || members.some((user) => byUsername.includes(user.username)))
                );
            });
            groups = searched(groups, query.search, (group) => [group.name]);
            return {
                status: 200,
                body: paginated(
                    groups.map((group) => showGroup(store, group, query)),
                    query,
                    'name',
                ),
            };
        },
    },

    core_groups_retrieve: {
        access: 'objects',
        run({ store, params, query }) {
            const group = store.groups.find((candidate) => candidate.pk === params.group_uuid);
            if (!group) throw notFound();
            return { status: 200, body: showGroup(store, group, query) };
        },
    },
};
