import { toUserRow, type UserRow } from '../identity/user-row.ts';

export interface PackageVersionRow {
    id: number;
    package_id: number;
    creator_id: number;
    version: string;
    lower_version: string;
    created_at: number;
}

export interface PackageBlobRow {
    id: number;
    size: number;
    hash_md5: string;
    hash_sha1: string;
    hash_sha256: string;
    hash_sha512: string;
    created_at: number;
}

export interface PackageFileRow {
    id: number;
    version_id: number;
    blob_id: number;
    name: string;
    lower_name: string;
    size: number;
    created_at: number;
}

export interface StoredPackageFile {
    file: PackageFileRow;
    blob: PackageBlobRow;
    /** Where the content lies on disk. */
    path: string;
}

/** A package version as the admin list shows it, with its owner and creator loaded. */
export interface PackageEntry {
    id: number;
    type: string;
    name: string;
    lower_name: string;
    version: string;
    lower_version: string;
    created_at: number;
    owner: UserRow;
    creator: UserRow;
}

function numeric<T>(raw: Record<string, unknown>, columns: string[]): T {
    const row = { ...raw };
    for (const column of columns) {
        row[column] = Number(row[column]);
    }

    return row as T;
}

export const toVersionRow = (raw: Record<string, unknown>) =>
    numeric<PackageVersionRow>(raw, ['id', 'package_id', 'creator_id', 'created_at']);
export const toBlobRow = (raw: Record<string, unknown>) => numeric<PackageBlobRow>(raw, ['id', 'size', 'created_at']);
export const toFileRow = (raw: Record<string, unknown>) =>
    numeric<PackageFileRow>(raw, ['id', 'version_id', 'blob_id', 'size', 'created_at']);

/** A row of versions joined with their packages, its owner and creator taken from `usersById`. */
export function toPackageEntry(row: Record<string, unknown>, usersById: Map<number, UserRow>): PackageEntry {
    return {
        id: Number(row.id),
        type: String(row.type),
        name: String(row.name),
        lower_name: String(row.lower_name),
        version: String(row.version),
        lower_version: String(row.lower_version),
        created_at: Number(row.created_at),
        owner: usersById.get(Number(row.owner_id)) ?? ghostUser(),
        creator: usersById.get(Number(row.creator_id)) ?? ghostUser(),
    };
}

/** Gitea's stand-in for a user who no longer exists. */
function ghostUser(): UserRow {
    return toUserRow({
        id: -1,
        lower_name: 'ghost',
        name: 'Ghost',
        full_name: 'Ghost',
        email: '',
        passwd_hash: '',
        must_change_password: false,
        login_source: 0,
        login_name: '',
        type: 0,
        location: '',
        website: '',
        description: '',
        language: '',
        visibility: 0,
        is_active: false,
        is_admin: false,
        is_restricted: false,
        prohibit_login: true,
        allow_git_hook: false,
        allow_import_local: false,
        allow_create_organization: false,
        max_repo_creation: 0,
        repo_admin_change_team_access: false,
        created_at: 0,
        updated_at: 0,
        last_login_at: 0,
    });
}
