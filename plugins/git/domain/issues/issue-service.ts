import type { Knex } from 'knex';

import { isUniqueViolation, now } from '../../../../lib/database.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { toUserRow, type UserRow, users } from '../identity/user-service.ts';
import { repositoryAccess } from '../repositories/repository-access.ts';
import { repositories, type RepositoryRow } from '../repositories/repository-service.ts';
import { webhooks } from '../webhooks/hook-service.ts';
import { payloadRepository, payloadUser } from '../webhooks/payloads.ts';
import {
    type ApiComment,
    type ApiIssue,
    type CommentRow,
    type IssueContext,
    type IssueRow,
    toApiComment,
    toApiIssue,
    toCommentRow,
    toIssueRow,
} from './format.ts';
import { issueEvents } from './issue-events.ts';
import { Service } from '../../../../lib/service.ts';

export interface CreateIssueInput {
    title: string;
    body?: string;
    ref?: string;
    closed?: boolean;
    milestone?: number;
}

export interface EditIssueInput {
    title?: string;
    body?: string;
    ref?: string;
    state?: string;
    milestone?: number;
}

/** A repository as the caller may use it: who owns it, and what the caller may do with its issues. */
export interface RepositoryAccess {
    repository: RepositoryRow;
    owner: UserRow;
    canRead: boolean;
    canWrite: boolean;
}

const MAX_TITLE_LENGTH = 255;

/** The minimum of Gitea's issue API that produces notifications and webhook events: issues and their comments. */
export class IssueService extends Service {
    #context(access: RepositoryAccess): IssueContext {
        return {
            repositoryId: access.repository.id,
            ownerName: access.owner.name,
            repositoryName: access.repository.name,
            publicUrl: this.server.app.config.publicUrl,
        };
    }

    /**
     * The repository behind `{owner}/{repo}` as the viewer may see it: one whose owner or whose privacy hides it
     * from the viewer is a 404, for reads and writes alike.
     */
    async access(ownerName: string, repositoryName: string, viewer: UserRow | undefined): Promise<RepositoryAccess> {
        const owner = await users(this.server).resolve(ownerName);
        const repository = await repositories(this.server).byName(owner, repositoryName);
        if (!repository) {
            throw new NotFoundError();
        }

        const rights = await repositoryAccess(this.server).rights(viewer, repository, owner);
        if (!rights.canRead) {
            throw new NotFoundError();
        }

        return { repository, owner, ...rights };
    }

    /** Inside a transaction, pass it: SQLite has one connection, which the transaction holds. */
    async #posters(ids: number[], knex: Knex = this.knex): Promise<Map<number, UserRow>> {
        const rows = await knex('users').whereIn('id', [...new Set(ids)]);
        return new Map(rows.map((raw: Record<string, unknown>) => [Number(raw.id), toUserRow(raw)]));
    }

    async #issue(access: RepositoryAccess, index: number, knex: Knex = this.knex): Promise<IssueRow> {
        const raw = await knex('issues').where({ repo_id: access.repository.id, index }).first();
        if (!raw) {
            throw new NotFoundError(`issue does not exist [id: 0, repo_id: ${access.repository.id}, index: ${index}]`);
        }

        return toIssueRow(raw);
    }

    async apiIssue(access: RepositoryAccess, issue: IssueRow, viewer: UserRow | undefined): Promise<ApiIssue> {
        const posters = await this.#posters([issue.poster_id]);
        return toApiIssue(issue, posters.get(issue.poster_id), this.#context(access), viewer);
    }

    async get(access: RepositoryAccess, index: number): Promise<IssueRow> {
        return await this.#issue(access, index);
    }

    async create(access: RepositoryAccess, input: CreateIssueInput, doer: UserRow): Promise<IssueRow> {
        checkTitle(input.title);
        if (input.milestone) {
            throw new NotFoundError(`milestone does not exist [id: ${input.milestone}, repo_id: ${access.repository.id}]`);
        }

        for (let attempt = 1; ; attempt += 1) {
            try {
                return await this.#insertIssue(access, input, doer);
            } catch (error) {
                // Two issues numbered at once on MariaDB: the loser takes the next number.
                if (!isUniqueViolation(error) || attempt >= 3) {
                    throw error;
                }
            }
        }
    }

    async #insertIssue(access: RepositoryAccess, input: CreateIssueInput, doer: UserRow): Promise<IssueRow> {
        const issue = await this.knex.transaction(async (trx) => {
            const last = await trx('issues').where({ repo_id: access.repository.id }).max({ index: 'index' }).first();
            const created = now();
            const closed = input.closed === true;
            const [id] = await trx('issues').insert({
                repo_id: access.repository.id,
                index: Number(last?.index ?? 0) + 1,
                poster_id: doer.id,
                title: input.title,
                body: input.body ?? '',
                ref: input.ref ?? '',
                is_closed: closed,
                closed_at: closed ? created : null,
                created_at: created,
                updated_at: created,
            });
            const row = toIssueRow(await trx('issues').where({ id }).first());
            await this.#announceIssue(trx, access, row, doer, 'opened');
            if (closed) {
                await this.#announceIssue(trx, access, row, doer, 'closed');
            }

            return row;
        });
        webhooks(this.server).deliverSoon();
        return issue;
    }

    /** Title and body by the author or a writer; the state by the same. */
    async edit(access: RepositoryAccess, index: number, input: EditIssueInput, doer: UserRow): Promise<IssueRow> {
        const issue = await this.#issue(access, index);
        if (doer.id !== issue.poster_id && !access.canWrite) {
            throw new ForbiddenError('user is not allowed to edit this issue');
        }

        if (input.title !== undefined) {
            checkTitle(input.title);
        }

        if (input.state !== undefined && input.state !== 'open' && input.state !== 'closed') {
            throw new ValidationError(`[State]: In`);
        }

        if (input.milestone) {
            throw new NotFoundError(`milestone does not exist [id: ${input.milestone}, repo_id: ${access.repository.id}]`);
        }

        const edited = await this.knex.transaction(async (trx) => await this.#applyEdit(trx, access, issue, input, doer));
        webhooks(this.server).deliverSoon();
        return edited;
    }

    async #applyEdit(trx: Knex.Transaction, access: RepositoryAccess, issue: IssueRow, input: EditIssueInput, doer: UserRow) {
        const changes: Record<string, unknown> = {};
        const changed: Record<string, { from: string }> = {};
        for (const field of ['title', 'body', 'ref'] as const) {
            if (input[field] !== undefined && input[field] !== issue[field]) {
                changes[field] = input[field];
                changed[field] = { from: issue[field] };
            }
        }

        if (changes.body !== undefined) {
            changes.content_version = issue.content_version + 1;
        }

        const closing = input.state !== undefined && (input.state === 'closed') !== issue.is_closed;
        const stamp = now();
        if (closing) {
            changes.is_closed = input.state === 'closed';
            changes.closed_at = input.state === 'closed' ? stamp : null;
        }

        if (Object.keys(changes).length === 0) {
            return issue;
        }

        await trx('issues')
            .where({ id: issue.id })
            .update({ ...changes, updated_at: stamp });
        const row = await this.#issue(access, issue.index, trx);
        if (Object.keys(changed).length > 0) {
            await this.#announceIssue(trx, access, row, doer, 'edited', changed);
        }

        if (closing) {
            await this.#announceIssue(trx, access, row, doer, row.is_closed ? 'closed' : 'reopened');
        }

        return row;
    }

    async comment(access: RepositoryAccess, index: number, body: string, doer: UserRow): Promise<{ comment: CommentRow; issue: IssueRow }> {
        const issue = await this.#issue(access, index);
        if (issue.is_locked && !access.canWrite) {
            throw new ForbiddenError('user is not allowed to comment on a locked issue');
        }

        const result = await this.knex.transaction(async (trx) => {
            const created = now();
            const [id] = await trx('issue_comments').insert({
                issue_id: issue.id,
                poster_id: doer.id,
                body,
                created_at: created,
                updated_at: created,
            });
            await trx('issues')
                .where({ id: issue.id })
                .update({ num_comments: issue.num_comments + 1, updated_at: created });
            const comment = toCommentRow(await trx('issue_comments').where({ id }).first());
            const updated = await this.#issue(access, index, trx);
            await this.#announceComment(trx, access, updated, comment, doer);
            return { comment, issue: updated };
        });
        webhooks(this.server).deliverSoon();
        return result;
    }

    async apiComment(access: RepositoryAccess, issue: IssueRow, comment: CommentRow, viewer: UserRow): Promise<ApiComment> {
        const posters = await this.#posters([comment.poster_id]);
        return toApiComment(comment, issue, posters.get(comment.poster_id), this.#context(access), viewer);
    }

    // -----------------------------------------------------------------------------------------------------------
    // What an event sets off: its listeners (notification threads for the watchers and participants), and webhook
    // deliveries.

    async #announceIssue(
        trx: Knex.Transaction,
        access: RepositoryAccess,
        issue: IssueRow,
        doer: UserRow,
        action: string,
        changes?: Record<string, { from: string }>,
    ): Promise<void> {
        if (action !== 'edited') {
            await issueEvents(this.server).activity(trx, { access, issue, actorId: doer.id });
        }

        const payload = {
            action,
            number: issue.index,
            ...(changes ? { changes } : {}),
            ...(await this.#eventSubjects(trx, access, issue, doer)),
            commit_id: '',
        };
        const event = issue.is_pull ? 'pull_request' : 'issues';
        await webhooks(this.server).enqueue(
            trx,
            access.repository.id,
            event,
            event,
            issue.is_pull ? { ...payload, pull_request: payload.issue } : payload,
        );
    }

    async #announceComment(trx: Knex.Transaction, access: RepositoryAccess, issue: IssueRow, comment: CommentRow, doer: UserRow) {
        await issueEvents(this.server).activity(trx, { access, issue, actorId: doer.id, commentId: comment.id });
        const subjects = await this.#eventSubjects(trx, access, issue, doer);
        const posters = await this.#posters([comment.poster_id], trx);
        const payload = {
            action: 'created',
            issue: subjects.issue,
            comment: toApiComment(comment, issue, posters.get(comment.poster_id), this.#context(access), undefined),
            repository: subjects.repository,
            sender: subjects.sender,
            is_pull: issue.is_pull,
        };
        const event = issue.is_pull ? 'pull_request_comment' : 'issue_comment';
        await webhooks(this.server).enqueue(trx, access.repository.id, event, event, payload);
    }

    async #eventSubjects(trx: Knex.Transaction, access: RepositoryAccess, issue: IssueRow, doer: UserRow) {
        const posters = await this.#posters([issue.poster_id], trx);
        return {
            issue: toApiIssue(issue, posters.get(issue.poster_id), this.#context(access), undefined),
            repository: payloadRepository(this.server, access.repository, access.owner),
            sender: payloadUser(this.server, doer),
        };
    }
}

function checkTitle(title: string): void {
    if (title.trim() === '') {
        throw new ValidationError('[Title]: Required');
    }

    if (title.length > MAX_TITLE_LENGTH) {
        throw new ValidationError('[Title]: MaxSize');
    }
}

export const issues = defineService<IssueService>('issues', (owner) => new IssueService(owner));
