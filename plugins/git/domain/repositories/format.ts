import { toRfc3339 } from '../../../../lib/database.ts';
import { type ApiUser, toApiUser } from '../identity/format.ts';
import type { UserRow } from '../identity/user-service.ts';
import type { RepositoryRow } from './repository-service.ts';

const VISIBILITY_PRIVATE = 2;

export interface ApiPermission {
    admin: boolean;
    push: boolean;
    pull: boolean;
}

export interface ApiRepository {
    id: number;
    owner: ApiUser;
    name: string;
    full_name: string;
    description: string;
    empty: boolean;
    private: boolean;
    fork: boolean;
    template: boolean;
    mirror: boolean;
    size: number;
    language: string;
    languages_url: string;
    html_url: string;
    url: string;
    link: string;
    ssh_url: string;
    clone_url: string;
    original_url: string;
    website: string;
    stars_count: number;
    forks_count: number;
    watchers_count: number;
    open_issues_count: number;
    open_pr_counter: number;
    release_counter: number;
    default_branch: string;
    default_target_branch: string;
    branch_count: number;
    archived: boolean;
    created_at: string;
    updated_at: string;
    archived_at: string;
    permissions: ApiPermission;
    has_code: boolean;
    has_issues: boolean;
    internal_tracker: { enable_time_tracker: boolean; allow_only_contributors_to_track_time: boolean; enable_issue_dependencies: boolean };
    has_wiki: boolean;
    has_pull_requests: boolean;
    has_projects: boolean;
    projects_mode: string;
    has_releases: boolean;
    has_packages: boolean;
    has_actions: boolean;
    ignore_whitespace_conflicts: boolean;
    allow_merge_commits: boolean;
    allow_rebase: boolean;
    allow_rebase_explicit: boolean;
    allow_squash_merge: boolean;
    allow_fast_forward_only_merge: boolean;
    allow_rebase_update: boolean;
    allow_manual_merge: boolean;
    autodetect_manual_merge: boolean;
    allow_merge_update: boolean;
    default_delete_branch_after_merge: boolean;
    default_merge_style: string;
    default_update_style: string;
    default_allow_maintainer_edit: boolean;
    avatar_url: string;
    internal: boolean;
    mirror_interval: string;
    object_format_name: string;
    mirror_updated: string;
    mirror_last_sync_at: string;
    topics: string[];
    licenses: string[];
}

/** Site administrators and the owner have every right; anyone else may read a public repository. */
export function permissionsFor(repo: RepositoryRow, viewer: UserRow | undefined): ApiPermission {
    const full = Boolean(viewer && (viewer.is_admin || viewer.id === repo.owner_id));
    return { admin: full, push: full, pull: full || !repo.is_private };
}

function sshUrl(publicUrl: string, fullName: string): string {
    return `git@${new URL(publicUrl).hostname}:${fullName}.git`;
}

function repositoryLinks(fullName: string, publicUrl: string) {
    const apiUrl = `${publicUrl}api/v1/repos/${fullName}`;
    return {
        html_url: `${publicUrl}${fullName}`,
        url: apiUrl,
        languages_url: `${apiUrl}/languages`,
        clone_url: `${publicUrl}${fullName}.git`,
        ssh_url: sshUrl(publicUrl, fullName),
        link: '',
        original_url: '',
    };
}

/** The features and merge settings every new Gitea repository starts with. */
const DEFAULT_UNITS = {
    has_code: true,
    has_issues: true,
    internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true },
    has_wiki: true,
    has_pull_requests: true,
    has_projects: true,
    projects_mode: 'all',
    has_releases: true,
    has_packages: true,
    has_actions: true,
    ignore_whitespace_conflicts: false,
    allow_merge_commits: true,
    allow_rebase: true,
    allow_rebase_explicit: true,
    allow_squash_merge: true,
    allow_fast_forward_only_merge: true,
    allow_rebase_update: true,
    allow_manual_merge: false,
    autodetect_manual_merge: false,
    allow_merge_update: true,
    default_delete_branch_after_merge: false,
    default_merge_style: 'merge',
    default_update_style: 'merge',
    default_allow_maintainer_edit: false,
};

const NO_ACTIVITY = {
    fork: false,
    mirror: false,
    language: '',
    stars_count: 0,
    forks_count: 0,
    watchers_count: 0,
    open_issues_count: 0,
    open_pr_counter: 0,
    release_counter: 0,
    mirror_interval: '',
    mirror_updated: toRfc3339(null),
    mirror_last_sync_at: toRfc3339(null),
    avatar_url: '',
    topics: [],
    licenses: [],
};

/** Gitea's Repository, as the viewer sees it. */
export function toApiRepository(repo: RepositoryRow, owner: UserRow, viewer: UserRow | undefined, publicUrl: string): ApiRepository {
    const fullName = `${owner.name}/${repo.name}`;
    return {
        id: repo.id,
        owner: toApiUser(owner, viewer, publicUrl),
        name: repo.name,
        full_name: fullName,
        description: repo.description,
        empty: repo.is_empty,
        private: repo.is_private,
        template: repo.is_template,
        size: Math.floor(repo.size / 1024),
        ...repositoryLinks(fullName, publicUrl),
        website: repo.website,
        default_branch: repo.default_branch,
        default_target_branch: '',
        // Branches are not recorded yet: a repository made here has one, or none while empty.
        branch_count: repo.is_empty ? 0 : 1,
        archived: repo.is_archived,
        created_at: toRfc3339(repo.created_at),
        updated_at: toRfc3339(repo.updated_at),
        archived_at: toRfc3339(0),
        permissions: permissionsFor(repo, viewer),
        internal: !repo.is_private && owner.visibility === VISIBILITY_PRIVATE,
        object_format_name: repo.object_format_name,
        ...DEFAULT_UNITS,
        ...NO_ACTIVITY,
    };
}
