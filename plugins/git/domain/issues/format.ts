import { toRfc3339 } from '../../../../lib/database.ts';
import { type ApiUser, toApiUser } from '../identity/format.ts';
import { toUserRow, type UserRow } from '../identity/user-service.ts';

export interface IssueRow {
    id: number;
    repo_id: number;
    index: number;
    poster_id: number;
    title: string;
    body: string;
    is_pull: boolean;
    is_closed: boolean;
    is_locked: boolean;
    num_comments: number;
    ref: string;
    content_version: number;
    created_at: number;
    updated_at: number;
    closed_at: number | null;
}

export interface CommentRow {
    id: number;
    issue_id: number;
    poster_id: number;
    body: string;
    created_at: number;
    updated_at: number;
}

export function toIssueRow(raw: Record<string, unknown>): IssueRow {
    const row = { ...raw } as Record<string, unknown>;
    for (const column of ['is_pull', 'is_closed', 'is_locked']) {
        row[column] = Boolean(row[column]);
    }

    for (const column of ['id', 'repo_id', 'index', 'poster_id', 'num_comments', 'content_version', 'created_at', 'updated_at']) {
        row[column] = Number(row[column]);
    }

    row.closed_at = row.closed_at === null || row.closed_at === undefined ? null : Number(row.closed_at);
    return row as unknown as IssueRow;
}

export function toCommentRow(raw: Record<string, unknown>): CommentRow {
    return {
        ...(raw as unknown as CommentRow),
        id: Number(raw.id),
        issue_id: Number(raw.issue_id),
        poster_id: Number(raw.poster_id),
        created_at: Number(raw.created_at),
        updated_at: Number(raw.updated_at),
    };
}

/** Gitea shows the author of something whose account is gone as the Ghost user. */
export const GHOST_USER: UserRow = toUserRow({
    ...{ id: -1, name: 'Ghost', lower_name: 'ghost', full_name: '', email: '', login_name: '', type: 0, visibility: 0 },
    ...{ location: '', website: '', description: '', language: '', login_source: 0, max_repo_creation: -1 },
    ...{ created_at: 0, updated_at: 0, last_login_at: 0 },
});

/** Where an issue lives, by its repository's full name (`owner/name`). */
export interface IssueLinks {
    apiUrl: string;
    htmlUrl: string;
    commentApiUrl(commentId: number): string;
    commentHtmlUrl(commentId: number): string;
}

export function issueLinks(publicUrl: string, fullName: string, issue: Pick<IssueRow, 'index' | 'is_pull'>): IssueLinks {
    const htmlUrl = `${publicUrl}${fullName}/${issue.is_pull ? 'pulls' : 'issues'}/${issue.index}`;
    return {
        apiUrl: `${publicUrl}api/v1/repos/${fullName}/issues/${issue.index}`,
        htmlUrl,
        commentApiUrl: (id) => `${publicUrl}api/v1/repos/${fullName}/issues/comments/${id}`,
        commentHtmlUrl: (id) => `${htmlUrl}#issuecomment-${id}`,
    };
}

export interface IssueContext {
    repositoryId: number;
    ownerName: string;
    repositoryName: string;
    publicUrl: string;
}

/**
 * Gitea's Issue. Labels, milestones, assignees, projects and attachments are not kept yet: the lists are empty,
 * and fields Gitea sends as null (milestone, assignee, closed_at while open, due_date) are left out.
 */
export function toApiIssue(issue: IssueRow, poster: UserRow | undefined, context: IssueContext, viewer: UserRow | undefined) {
    const fullName = `${context.ownerName}/${context.repositoryName}`;
    const links = issueLinks(context.publicUrl, fullName, issue);
    return {
        id: issue.id,
        url: links.apiUrl,
        html_url: links.htmlUrl,
        number: issue.index,
        user: toApiUser(poster ?? GHOST_USER, viewer, context.publicUrl),
        original_author: '',
        original_author_id: 0,
        title: issue.title,
        body: issue.body,
        ref: issue.ref,
        assets: [],
        labels: [],
        assignees: [],
        state: issue.is_closed ? 'closed' : 'open',
        is_locked: issue.is_locked,
        comments: issue.num_comments,
        created_at: toRfc3339(issue.created_at),
        updated_at: toRfc3339(issue.updated_at),
        ...(issue.closed_at !== null ? { closed_at: toRfc3339(issue.closed_at) } : {}),
        ...(issue.is_pull ? { pull_request: { merged: false, draft: false, html_url: links.htmlUrl } } : {}),
        repository: { id: context.repositoryId, name: context.repositoryName, owner: context.ownerName, full_name: fullName },
        pin_order: 0,
        time_estimate: 0,
        content_version: issue.content_version,
    };
}

export type ApiIssue = ReturnType<typeof toApiIssue>;

export interface ApiComment {
    id: number;
    html_url: string;
    pull_request_url: string;
    issue_url: string;
    user: ApiUser;
    original_author: string;
    original_author_id: number;
    body: string;
    assets: never[];
    created_at: string;
    updated_at: string;
}

/** Gitea's Comment: `issue_url` for an issue's comment, `pull_request_url` for a pull request's. */
export function toApiComment(
    comment: CommentRow,
    issue: IssueRow,
    poster: UserRow | undefined,
    context: IssueContext,
    viewer: UserRow | undefined,
): ApiComment {
    const links = issueLinks(context.publicUrl, `${context.ownerName}/${context.repositoryName}`, issue);
    return {
        id: comment.id,
        html_url: links.commentHtmlUrl(comment.id),
        pull_request_url: issue.is_pull ? links.htmlUrl : '',
        issue_url: issue.is_pull ? '' : links.htmlUrl,
        user: toApiUser(poster ?? GHOST_USER, viewer, context.publicUrl),
        original_author: '',
        original_author_id: 0,
        body: comment.body,
        assets: [],
        created_at: toRfc3339(comment.created_at),
        updated_at: toRfc3339(comment.updated_at),
    };
}
