import { toRfc3339 } from '../../../../lib/database.ts';
import { type ApiUser, toApiUser } from '../identity/format.ts';
import type { UserRow } from '../identity/user-row.ts';
import type { PackageEntry } from './package-rows.ts';

export interface ApiPackage {
    id: number;
    owner: ApiUser;
    name: string;
    type: string;
    version: string;
    creator: ApiUser;
    created_at: string;
    html_url: string;
}

/** Gitea's Package: one version of a package, linked to its page. */
export function toApiPackage(entry: PackageEntry, viewer: UserRow | undefined, publicUrl: string): ApiPackage {
    const path = [entry.owner.name, '-', 'packages', entry.type, entry.lower_name, entry.lower_version].map(encodeURIComponent).join('/');
    return {
        id: entry.id,
        owner: toApiUser(entry.owner, viewer, publicUrl),
        name: entry.name,
        type: entry.type,
        version: entry.version,
        creator: toApiUser(entry.creator, viewer, publicUrl),
        created_at: toRfc3339(entry.created_at),
        html_url: `${publicUrl}${path}`,
    };
}
