import Crypto from 'node:crypto';

import { toRfc3339 } from '../../../../lib/database.ts';
import { USER_TYPE, type UserRow, visibilityName } from './user-row.ts';

export interface ApiUser {
    id: number;
    login: string;
    login_name: string;
    source_id: number;
    full_name: string;
    email: string;
    avatar_url: string;
    html_url: string;
    language: string;
    is_admin: boolean;
    last_login: string;
    created: string;
    restricted: boolean;
    active: boolean;
    prohibit_login: boolean;
    location: string;
    website: string;
    description: string;
    visibility: string;
    followers_count: number;
    following_count: number;
    starred_repos_count: number;
}

export function avatarUrl(user: Pick<UserRow, 'email' | 'lower_name'>, publicUrl: string): string {
    const hash = Crypto.createHash('md5')
        .update((user.email || user.lower_name).toLowerCase())
        .digest('hex');
    return `${publicUrl}avatars/${hash}`;
}

/**
 * Gitea's User: administrators and the user themself see the account fields (admin flag, login name,
 * last login, language, active, prohibit login); anonymous callers do not see the e-mail address.
 */
export function toApiUser(user: UserRow, viewer: UserRow | undefined, publicUrl: string): ApiUser {
    const privileged = Boolean(viewer && (viewer.is_admin || viewer.id === user.id));
    return {
        id: user.id,
        login: user.name,
        login_name: privileged ? user.login_name : '',
        source_id: privileged ? user.login_source : 0,
        full_name: user.full_name,
        email: viewer ? user.email : '',
        avatar_url: avatarUrl(user, publicUrl),
        html_url: `${publicUrl}${encodeURIComponent(user.name)}`,
        language: privileged ? user.language : '',
        is_admin: privileged ? user.is_admin : false,
        last_login: privileged ? toRfc3339(user.last_login_at || null) : toRfc3339(null),
        created: toRfc3339(user.created_at),
        restricted: privileged ? user.is_restricted : false,
        active: privileged ? user.is_active : false,
        prohibit_login: privileged ? user.prohibit_login : false,
        location: user.location,
        website: user.website,
        description: user.description,
        visibility: visibilityName(user.visibility),
        followers_count: 0,
        following_count: 0,
        starred_repos_count: 0,
    };
}

export interface ApiOrganization {
    id: number;
    name: string;
    username: string;
    full_name: string;
    email: string;
    avatar_url: string;
    description: string;
    website: string;
    location: string;
    visibility: string;
    repo_admin_change_team_access: boolean;
}

/** Gitea's Organization; anonymous callers get the e-mail blanked. */
export function toApiOrganization(org: UserRow, viewer: UserRow | undefined, publicUrl: string): ApiOrganization {
    if (org.type !== USER_TYPE.organization) {
        throw new Error(`${org.name} is not an organization`);
    }

    return {
        id: org.id,
        name: org.name,
        username: org.name,
        full_name: org.full_name,
        email: viewer ? org.email : '',
        avatar_url: avatarUrl(org, publicUrl),
        description: org.description,
        website: org.website,
        location: org.location,
        visibility: visibilityName(org.visibility),
        repo_admin_change_team_access: org.repo_admin_change_team_access,
    };
}
