/** A user or organisation as the users table holds it, and its conversions: read by the service and the formatters. */
import { ValidationError } from '../../../../lib/errors.ts';
import { VISIBILITIES, type Visibility } from './names.ts';

export const USER_TYPE = { individual: 0, organization: 1 } as const;

export interface UserRow {
    id: number;
    lower_name: string;
    name: string;
    full_name: string;
    email: string;
    passwd_hash: string;
    must_change_password: boolean;
    login_source: number;
    login_name: string;
    type: number;
    location: string;
    website: string;
    description: string;
    language: string;
    visibility: number;
    is_active: boolean;
    is_admin: boolean;
    is_restricted: boolean;
    prohibit_login: boolean;
    allow_git_hook: boolean;
    allow_import_local: boolean;
    allow_create_organization: boolean;
    max_repo_creation: number;
    repo_admin_change_team_access: boolean;
    created_at: number;
    updated_at: number;
    last_login_at: number;
}

const BOOLEAN_COLUMNS = [
    'must_change_password',
    'is_active',
    'is_admin',
    'is_restricted',
    'prohibit_login',
    'allow_git_hook',
    'allow_import_local',
    'allow_create_organization',
    'repo_admin_change_team_access',
] as const;

/** Both databases hand back 0/1 for booleans and strings or numbers for big integers; rows leave here typed. */
export function toUserRow(raw: Record<string, unknown>): UserRow {
    const row = { ...raw } as Record<string, unknown>;
    for (const column of BOOLEAN_COLUMNS) {
        row[column] = Boolean(row[column]);
    }

    for (const column of ['id', 'login_source', 'type', 'visibility', 'max_repo_creation', 'created_at', 'updated_at', 'last_login_at']) {
        row[column] = Number(row[column]);
    }

    return row as unknown as UserRow;
}

export function visibilityName(value: number): Visibility {
    return VISIBILITIES[value] ?? 'public';
}

export function visibilityValue(name: string | undefined): number | undefined {
    if (name === undefined || name === '') {
        return undefined;
    }

    const index = VISIBILITIES.indexOf(name as Visibility);
    if (index < 0) {
        throw new ValidationError(`invalid visibility [${name}]`);
    }

    return index;
}
