import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { now, toRfc3339 } from '../../../../lib/database.ts';
import { ForbiddenError, NotFoundError } from '../../../../lib/errors.ts';
import type { Page, Paging } from '../../../../lib/paging.ts';
import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { toUserRow, USER_TYPE, type UserRow } from '../identity/user-service.ts';
import type { IssueRow } from '../issues/format.ts';
import { issueLinks } from '../issues/format.ts';
import type { IssueActivity } from '../issues/issue-events.ts';
import { repositoryAccess } from '../repositories/repository-access.ts';
import { type ApiRepository, toApiRepository } from '../repositories/format.ts';
import { toRepositoryRow } from '../repositories/repository-service.ts';
import { Service } from '../../../../lib/service.ts';

/** Gitea's stored values. */
export const STATUS = { unread: 1, read: 2, pinned: 3 } as const;
export const SOURCE = { issue: 1, pull: 2, commit: 3, repository: 4 } as const;
const SUBJECT_TYPES: Record<number, string> = { 1: 'Issue', 2: 'Pull', 3: 'Commit', 4: 'Repository' };

export type StatusName = keyof typeof STATUS;

/** Status and subject-type names are matched as Gitea matches them: trimmed, in any case; unknown ones are dropped. */
export function statusValues(names: string[]): number[] {
    return names.map((name) => STATUS[name.trim().toLowerCase() as StatusName]).filter((value) => value !== undefined);
}

export function sourceValues(names: string[]): number[] {
    return names.map((name) => SOURCE[name.trim().toLowerCase() as keyof typeof SOURCE]).filter((value) => value !== undefined);
}

export interface NotificationRow {
    id: number;
    user_id: number;
    repo_id: number;
    issue_id: number | null;
    comment_id: number | null;
    commit_id: string;
    source: number;
    status: number;
    updated_at: number;
}

const NOTIFICATION_COLUMNS = ['id', 'user_id', 'repo_id', 'issue_id', 'comment_id', 'commit_id', 'source', 'status', 'updated_at'];

function toNotificationRow(raw: Record<string, unknown>): NotificationRow {
    const nullable = (value: unknown) => (value === null || value === undefined ? null : Number(value));
    return {
        id: Number(raw.id),
        user_id: Number(raw.user_id),
        repo_id: Number(raw.repo_id),
        issue_id: nullable(raw.issue_id),
        comment_id: nullable(raw.comment_id),
        commit_id: String(raw.commit_id ?? ''),
        source: Number(raw.source),
        status: Number(raw.status),
        updated_at: Number(raw.updated_at),
    };
}

export interface ThreadFilter {
    /** Undefined: every status. */
    statuses?: number[];
    sources?: number[];
    since?: number;
    before?: number;
}

export interface ApiNotificationThread {
    id: number;
    repository: Omit<ApiRepository, 'permissions'>;
    subject: {
        title: string;
        url: string;
        latest_comment_url: string;
        html_url: string;
        latest_comment_html_url: string;
        type: string;
        state?: string;
    };
    unread: boolean;
    pinned: boolean;
    updated_at: string;
    url: string;
}

/** What a thread's subject shows of its issue. */
type ThreadIssue = Pick<IssueRow, 'id' | 'index' | 'title' | 'is_closed' | 'is_pull'>;

function toThreadIssue(raw: Record<string, unknown>): ThreadIssue {
    return {
        id: Number(raw.id),
        index: Number(raw.index),
        title: String(raw.title),
        is_closed: Boolean(raw.is_closed),
        is_pull: Boolean(raw.is_pull),
    };
}

/** A page's issues, and its repositories as shown (each converted once, however many threads it has). */
interface ThreadSources {
    issues: Map<number, ThreadIssue>;
    repositories: Map<number, Omit<ApiRepository, 'permissions'>>;
}

async function byIds<T>(
    knex: Knex,
    table: string,
    ids: number[],
    convert: (raw: Record<string, unknown>) => T,
    columns: string[] = ['*'],
): Promise<Map<number, T>> {
    const unique = [...new Set(ids)];
    const rows = unique.length === 0 ? [] : await knex(table).whereIn('id', unique).select(columns);
    return new Map(rows.map((raw: Record<string, unknown>) => [Number(raw.id), convert(raw)]));
}

/** Notification threads: one per user and issue, made and refreshed by issue activity, read by their user. */
export class NotificationService extends Service {
    // A page names threads, their issues, repositories and owners, and shows only the repositories its user may
    // read (which organisation memberships decide): kept until one of those tables is written.
    readonly #pages: ReadCache<Page<ApiNotificationThread>>;

    constructor(server: Server) {
        super(server);
        this.#pages = readCache(server, ['notifications', 'issues', 'repositories', 'users', 'org_users']);
    }
    // -----------------------------------------------------------------------------------------------------------
    // Making threads.

    /**
     * One thread per recipient other than the actor: the repository's watchers (its owner, or an organisation's
     * members) and the issue's participants (author and commenters). A read thread becomes unread again; a
     * pinned one stays pinned; every one moves to the top.
     */
    async notifyIssue(trx: Knex.Transaction, activity: IssueActivity): Promise<void> {
        const recipients = await this.#recipients(trx, activity);
        if (recipients.length === 0) {
            return;
        }

        const { issue, actorId, commentId = null } = activity;
        const stamp = now();
        const existing: Array<{ user_id: number; status: number }> = await trx('notifications')
            .where({ issue_id: issue.id })
            .whereIn('user_id', recipients)
            .select('user_id', 'status');
        const known = new Set(existing.map((row) => Number(row.user_id)));
        const wasRead = existing.filter((row) => Number(row.status) === STATUS.read).map((row) => Number(row.user_id));
        await trx('notifications')
            .where({ issue_id: issue.id })
            .whereIn('user_id', [...known])
            .update({ updated_by: actorId, updated_at: stamp });
        if (wasRead.length > 0) {
            await trx('notifications')
                .where({ issue_id: issue.id })
                .whereIn('user_id', wasRead)
                .update({ status: STATUS.unread, comment_id: commentId });
        }

        const fresh = recipients.filter((id) => !known.has(id));
        if (fresh.length > 0) {
            await trx('notifications').insert(
                fresh.map((userId) => ({
                    user_id: userId,
                    repo_id: issue.repo_id,
                    issue_id: issue.id,
                    comment_id: commentId,
                    source: issue.is_pull ? SOURCE.pull : SOURCE.issue,
                    status: STATUS.unread,
                    updated_by: actorId,
                    created_at: stamp,
                    updated_at: stamp,
                })),
            );
        }
    }

    async #recipients(trx: Knex.Transaction, { access, issue, actorId }: IssueActivity): Promise<number[]> {
        const watchers: number[] =
            access.owner.type === USER_TYPE.organization
                ? (await trx('org_users').where({ org_id: access.owner.id }).pluck('uid')).map(Number)
                : [access.owner.id];
        const commenters: number[] = (await trx('issue_comments').where({ issue_id: issue.id }).distinct().pluck('poster_id')).map(Number);
        const candidates = [...new Set([...watchers, issue.poster_id, ...commenters])].filter((id) => id !== actorId);
        if (candidates.length === 0) {
            return [];
        }

        const rows = await trx('users').whereIn('id', candidates).where({ type: USER_TYPE.individual, is_active: true });
        // Participants who can no longer see the repository (or its owner) hear nothing of it.
        const readers = await repositoryAccess(this.server).readers(rows.map(toUserRow), access.repository, access.owner, trx);
        return readers.map((user) => user.id);
    }

    // -----------------------------------------------------------------------------------------------------------
    // Reading threads.

    /**
     * The repositories among `repositoryIds` (by default, those of the user's threads) that the user may not read:
     * their threads are hidden from the user as if they did not exist, and come back if the user may read again.
     */
    async #hiddenRepositories(user: UserRow, repositoryIds?: number[]): Promise<number[]> {
        if (user.is_admin) {
            return [];
        }

        const ids = repositoryIds ?? (await this.knex('notifications').where({ user_id: user.id }).distinct().pluck('repo_id')).map(Number);
        const repos = await byIds(this.knex, 'repositories', ids, toRepositoryRow);
        const owners = await byIds(
            this.knex,
            'users',
            [...repos.values()].map((repo) => repo.owner_id),
            toUserRow,
        );
        const known = [...repos.values()].map((repository) => ({ repository, owner: owners.get(repository.owner_id) as UserRow }));
        return await repositoryAccess(this.server).unreadable(user, known);
    }

    /** The user's threads that match the filter, but those of the `hidden` repositories. */
    #filtered(user: UserRow, filter: ThreadFilter, hidden: number[]): Knex.QueryBuilder {
        const query = this.knex('notifications').where({ user_id: user.id });
        if (hidden.length > 0) {
            query.whereNotIn('repo_id', hidden);
        }

        if (filter.statuses) {
            query.whereIn('status', filter.statuses);
        }

        if (filter.sources && filter.sources.length > 0) {
            query.whereIn('source', filter.sources);
        }

        if (filter.since !== undefined) {
            query.where('updated_at', '>=', filter.since);
        }

        if (filter.before !== undefined) {
            query.where('updated_at', '<=', filter.before);
        }

        return query;
    }

    /** A page of the caller's threads as Gitea shows them, with how many match in all. */
    async page(user: UserRow, filter: ThreadFilter, paging: Paging, asOf?: VersionSnapshot): Promise<Page<ApiNotificationThread>> {
        // What a page shows depends on the viewer only through its id and its administrator and restricted flags.
        const key = JSON.stringify([user.id, user.is_admin, user.is_restricted, filter, paging.limit, paging.offset]);
        return await this.#pages.get(
            key,
            async () => {
                const { rows, total } = await this.#list(user, filter, paging);
                return { items: await this.toApiThreads(rows, user), total };
            },
            asOf,
        );
    }

    /** The caller's threads, newest first. */
    async #list(user: UserRow, filter: ThreadFilter, paging: Paging): Promise<{ rows: NotificationRow[]; total: number }> {
        const query = this.#filtered(user, filter, await this.#hiddenRepositories(user));
        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = await query
            .orderBy('updated_at', 'desc')
            .orderBy('id', 'desc')
            .limit(paging.limit)
            .offset(paging.offset)
            .select(NOTIFICATION_COLUMNS);
        return { rows: rows.map(toNotificationRow), total };
    }

    async unreadCount(user: UserRow): Promise<number> {
        const query = this.#filtered(user, { statuses: [STATUS.unread] }, await this.#hiddenRepositories(user));
        const row = await query.count({ count: '*' }).first();
        return Number(row?.count ?? 0);
    }

    /** Changes the caller's threads in the given statuses, updated no later than `lastReadAt`; returns them changed. */
    async markMany(user: UserRow, statuses: number[] | undefined, toStatus: number, lastReadAt: number): Promise<NotificationRow[]> {
        const query = this.#filtered(user, { statuses, before: lastReadAt }, await this.#hiddenRepositories(user));
        const ids: number[] = (await query.pluck('id')).map(Number);
        if (ids.length === 0) {
            return [];
        }

        await this.knex('notifications').whereIn('id', ids).update({ status: toStatus, updated_at: now() });
        const rows = await this.knex('notifications').whereIn('id', ids).orderBy('updated_at', 'desc').orderBy('id', 'desc');
        return rows.map(toNotificationRow);
    }

    /** A thread the viewer may read: their own in a repository they may read, or any for a site administrator. */
    async thread(id: number, viewer: UserRow): Promise<NotificationRow> {
        const raw = Number.isSafeInteger(id) && id > 0 ? await this.knex('notifications').where({ id }).first() : undefined;
        if (!raw) {
            throw new NotFoundError(`notification does not exist [id: ${id}]`);
        }

        const row = toNotificationRow(raw);
        if (row.user_id !== viewer.id && !viewer.is_admin) {
            throw new ForbiddenError(`only user itself and admin are allowed to read/change this thread ${id}`);
        }

        if ((await this.#hiddenRepositories(viewer, [row.repo_id])).length > 0) {
            throw new NotFoundError(`notification does not exist [id: ${id}]`);
        }

        return row;
    }

    /** Only the thread's own user changes it (Gitea lets an administrator through, then fails with a 500). */
    async setStatus(id: number, viewer: UserRow, toStatus: number): Promise<NotificationRow> {
        const row = await this.thread(id, viewer);
        if (row.user_id !== viewer.id) {
            throw new ForbiddenError(`only user itself is allowed to change this thread ${id}`);
        }

        const updatedAt = now();
        await this.knex('notifications').where({ id }).update({ status: toStatus, updated_at: updatedAt });
        return { ...row, status: toStatus, updated_at: updatedAt };
    }

    // -----------------------------------------------------------------------------------------------------------
    // Gitea's NotificationThread, for a page at a time: issues, repositories and owners in one query each.

    async toApiThreads(rows: NotificationRow[], viewer: UserRow): Promise<ApiNotificationThread[]> {
        const issues = await byIds(
            this.knex,
            'issues',
            rows.flatMap((row) => (row.issue_id === null ? [] : [row.issue_id])),
            toThreadIssue,
            ['id', 'index', 'title', 'is_closed', 'is_pull'],
        );
        const repos = await byIds(
            this.knex,
            'repositories',
            rows.map((row) => row.repo_id),
            toRepositoryRow,
        );
        const owners = await byIds(
            this.knex,
            'users',
            [...repos.values()].map((repo) => repo.owner_id),
            toUserRow,
        );
        const publicUrl = this.server.app.config.publicUrl;
        const shown = new Map<number, Omit<ApiRepository, 'permissions'>>();
        for (const repository of repos.values()) {
            const owner = owners.get(repository.owner_id) as UserRow;
            const { permissions: _permissions, ...api } = toApiRepository(repository, owner, viewer, publicUrl);
            shown.set(repository.id, api);
        }

        const sources: ThreadSources = { issues, repositories: shown };
        return rows.map((row) => this.#toApiThread(row, sources));
    }

    #toApiThread(row: NotificationRow, sources: ThreadSources): ApiNotificationThread {
        const publicUrl = this.server.app.config.publicUrl;
        const apiRepository = sources.repositories.get(row.repo_id) as Omit<ApiRepository, 'permissions'>;
        return {
            id: row.id,
            repository: apiRepository,
            subject: this.#subject(row, sources, apiRepository),
            unread: row.status === STATUS.unread,
            pinned: row.status === STATUS.pinned,
            updated_at: toRfc3339(row.updated_at),
            url: `${publicUrl}api/v1/notifications/threads/${row.id}`,
        };
    }

    #subject(
        row: NotificationRow,
        sources: ThreadSources,
        repository: Omit<ApiRepository, 'permissions'>,
    ): ApiNotificationThread['subject'] {
        const type = SUBJECT_TYPES[row.source] ?? 'Issue';
        const issue = row.issue_id === null ? undefined : sources.issues.get(row.issue_id);
        if (issue) {
            const links = issueLinks(this.server.app.config.publicUrl, repository.full_name, issue);
            const comment = row.comment_id;
            return {
                title: issue.title,
                url: links.apiUrl,
                latest_comment_url: comment ? links.commentApiUrl(comment) : '',
                html_url: links.htmlUrl,
                latest_comment_html_url: comment ? links.commentHtmlUrl(comment) : '',
                type,
                state: issue.is_closed ? 'closed' : 'open',
            };
        }

        if (row.source === SOURCE.commit) {
            const url = `${repository.html_url}/commit/${row.commit_id}`;
            return { title: row.commit_id, url, latest_comment_url: '', html_url: url, latest_comment_html_url: '', type };
        }

        const relative = new URL(repository.html_url).pathname;
        return {
            title: repository.full_name,
            url: relative,
            latest_comment_url: '',
            html_url: repository.html_url,
            latest_comment_html_url: '',
            type,
        };
    }
}

export const notifications = defineService<NotificationService>('notifications', (owner) => new NotificationService(owner));
