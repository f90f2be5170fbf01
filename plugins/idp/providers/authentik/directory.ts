/** authentik's groups and users, as the directory Gatehouse shows and binds apps to. */
import type { DirectoryGroup, DirectoryUser } from '../../idp-types.ts';
import { type AuthentikClient, type Json, PAGE_SIZE, text } from './client.ts';

function directoryUser(user: Json): Omit<DirectoryUser, 'active'> {
    return { pk: Number(user.pk), username: text(user.username), name: text(user.name), email: text(user.email) };
}

export async function groups(client: AuthentikClient): Promise<DirectoryGroup[]> {
    const groups = await client.call('listing groups', () =>
        client.all((page) => client.core.coreGroupsListRaw({ includeUsers: true, page, pageSize: PAGE_SIZE })),
    );
    return groups.map((group) => ({
        pk: text(group.pk),
        name: text(group.name),
        isSuperuser: group.is_superuser === true,
        members: ((group.users_obj as Json[] | undefined) ?? []).map(directoryUser),
    }));
}

export async function users(client: AuthentikClient, query: string): Promise<DirectoryUser[]> {
    const users = await client.call('listing users', () =>
        client.all((page) =>
            client.core.coreUsersListRaw({ includeGroups: false, ...(query ? { search: query } : {}), page, pageSize: PAGE_SIZE }),
        ),
    );
    return users.map((user) => ({ ...directoryUser(user), active: user.is_active === true }));
}
