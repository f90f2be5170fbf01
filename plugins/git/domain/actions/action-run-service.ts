import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { now, toRfc3339 } from '../../../../lib/database.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import type { Page, Paging } from '../../../../lib/paging.ts';
import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { type ApiUser, toApiUser } from '../identity/format.ts';
import { toUserRow, type UserRow, users } from '../identity/user-service.ts';
import { type ApiRepository, toApiRepository } from '../repositories/format.ts';
import { type RepositoryRow, toRepositoryRow } from '../repositories/repository-service.ts';
import { aggregateStatus, apiStatus, isDone, STATUS } from './status.ts';
import { Service } from '../../../../lib/service.ts';

export interface NewStep {
    name: string;
    status?: number;
    started?: number;
    stopped?: number;
}

export interface NewJob {
    name: string;
    runsOn?: string[];
    status?: number;
    runnerId?: number;
    started?: number;
    stopped?: number;
    steps?: NewStep[];
}

/** What a push (or any other event) hands over to start a workflow run. */
export interface NewRun {
    repo: RepositoryRow;
    workflowId: string;
    title: string;
    event: string;
    ref: string;
    commitSha: string;
    triggerUser: UserRow;
    jobs: NewJob[];
}

/** Which runs an organisation listing may show: all of the organisation's, or only those of public repositories. */
export interface RunScope {
    ownerId: number;
    publicOnly: boolean;
}

export interface RunFilters {
    statuses?: number[];
    event?: string;
    branch?: string;
    actor?: string;
    headSha?: string;
}

export interface JobOrder {
    sort?: string;
    order?: string;
}

interface RunRow {
    id: number;
    title: string;
    repo_id: number;
    workflow_id: string;
    run_index: number;
    trigger_user_id: number;
    ref: string;
    commit_sha: string;
    event: string;
    status: number;
    started: number;
    stopped: number;
}

interface JobRow {
    id: number;
    run_id: number;
    repo_id: number;
    name: string;
    attempt: number;
    runs_on: string;
    runner_id: number;
    runner_name: string | null;
    status: number;
    steps: string;
    started: number;
    stopped: number;
    created_at: number;
    run_ref: string;
    run_commit_sha: string;
    run_index: number;
}

const BRANCH_PREFIX = 'refs/heads/';

function branchOf(ref: string): string {
    return ref.startsWith(BRANCH_PREFIX) ? ref.slice(BRANCH_PREFIX.length) : ref;
}

/** Gitea prints an unset time as the epoch. */
const timeOf = (epochMs: number) => toRfc3339(epochMs);

interface Related {
    repos: Map<number, RepositoryRow>;
    owners: Map<number, UserRow>;
    users: Map<number, UserRow>;
}

/** Workflow runs and their jobs, as Gitea stores them, listed per scope with the API's filters. */
export class ActionRunService extends Service {
    // A page of runs names their repositories, owners and actors: kept until one of those tables is written.
    readonly #runPages: ReadCache<Page<object>>;

    constructor(server: Server) {
        super(server);
        this.#runPages = readCache(server, ['action_runs', 'repositories', 'users']);
    }
    /** Records a run and its jobs; the run takes the repository's next run number, its status follows its jobs. */
    async createRun(input: NewRun): Promise<number> {
        const at = now();
        const status = aggregateStatus(input.jobs.map((job) => job.status ?? STATUS.waiting));
        return await this.knex.transaction(async (trx) => {
            const last = await trx('action_runs').where({ repo_id: input.repo.id }).max({ index: 'run_index' }).first();
            const [runId] = await trx('action_runs').insert({
                title: input.title.slice(0, 255),
                repo_id: input.repo.id,
                owner_id: input.repo.owner_id,
                workflow_id: input.workflowId,
                run_index: Number(last?.index ?? 0) + 1,
                trigger_user_id: input.triggerUser.id,
                ref: input.ref,
                commit_sha: input.commitSha,
                event: input.event,
                status,
                started: Math.min(...input.jobs.map((job) => job.started || Number.MAX_SAFE_INTEGER)) % Number.MAX_SAFE_INTEGER,
                stopped: isDone(status) ? Math.max(0, ...input.jobs.map((job) => job.stopped ?? 0)) : 0,
                created_at: at,
                updated_at: at,
            });
            for (const job of input.jobs) {
                await trx('action_run_jobs').insert(this.#jobRecord(Number(runId), input.repo, job, at));
            }

            return Number(runId);
        });
    }

    #jobRecord(runId: number, repo: RepositoryRow, job: NewJob, at: number): Record<string, unknown> {
        return {
            run_id: runId,
            repo_id: repo.id,
            owner_id: repo.owner_id,
            name: job.name.slice(0, 255),
            runs_on: JSON.stringify(job.runsOn ?? []),
            runner_id: job.runnerId ?? 0,
            status: job.status ?? STATUS.waiting,
            steps: JSON.stringify(job.steps ?? []),
            started: job.started ?? 0,
            stopped: job.stopped ?? 0,
            created_at: at,
            updated_at: at,
        };
    }

    /** A job's log lines, kept until the `cleanup_actions` cron task removes old ones. */
    async appendLog(jobId: number, content: string): Promise<void> {
        await this.knex('action_logs').insert({ job_id: jobId, content, created_at: now() });
    }

    #scoped(table: string, scope: RunScope | undefined): Knex.QueryBuilder {
        const query = this.knex(table);
        if (scope) {
            query.where(`${table}.owner_id`, scope.ownerId);
            if (scope.publicOnly) {
                query.whereIn(
                    `${table}.repo_id`,
                    this.knex('repositories').where({ owner_id: scope.ownerId, is_private: false }).select('id'),
                );
            }
        }

        return query;
    }

    async #applyRunFilters(query: Knex.QueryBuilder, filters: RunFilters): Promise<void> {
        if (filters.statuses) {
            query.whereIn('status', filters.statuses);
        }

        if (filters.event) {
            query.where('event', filters.event);
        }

        if (filters.branch) {
            query.where('ref', `${BRANCH_PREFIX}${filters.branch}`);
        }

        if (filters.headSha) {
            query.where('commit_sha', filters.headSha);
        }

        if (filters.actor) {
            // Gitea answers 500 for an unknown actor; the caller's mistake is a 422 here.
            const actor = await users(this.server).byName(filters.actor);
            if (!actor) {
                throw new ValidationError(`user does not exist [name: ${filters.actor}]`);
            }

            query.where('trigger_user_id', actor.id);
        }
    }

    /** A page of runs as Gitea shows them, newest first, with how many match in all. */
    async runPage(
        scope: RunScope | undefined,
        filters: RunFilters,
        paging: Paging,
        viewer: UserRow,
        asOf?: VersionSnapshot,
    ): Promise<Page<object>> {
        // What a run shows depends on the viewer only through its id and administrator flag.
        const key = JSON.stringify([scope ?? null, filters, paging.limit, paging.offset, viewer.id, viewer.is_admin]);
        return await this.#runPages.get(
            key,
            async () => {
                const { rows, total } = await this.#listRuns(scope, filters, paging);
                return { items: await this.#toApiRuns(rows, viewer), total };
            },
            asOf,
        );
    }

    async #listRuns(scope: RunScope | undefined, filters: RunFilters, paging: Paging): Promise<{ rows: RunRow[]; total: number }> {
        const query = this.#scoped('action_runs', scope);
        await this.#applyRunFilters(query, filters);
        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = (await query
            .orderBy('id', 'desc')
            .limit(paging.limit)
            .offset(paging.offset)
            .select(
                'id',
                'title',
                'repo_id',
                'workflow_id',
                'run_index',
                'trigger_user_id',
                'ref',
                'commit_sha',
                'event',
                'status',
                'started',
                'stopped',
            )) as RunRow[];
        return { rows, total };
    }

    async listJobs(
        scope: RunScope | undefined,
        statuses: number[] | undefined,
        order: JobOrder,
        paging: Paging,
    ): Promise<{ rows: JobRow[]; total: number }> {
        const direction = jobOrder(order);
        const query = this.#scoped('action_run_jobs', scope);
        if (statuses) {
            query.whereIn('action_run_jobs.status', statuses);
        }

        const total = Number((await query.clone().count({ count: '*' }).first())?.count ?? 0);
        const rows = (await query
            .join('action_runs', 'action_runs.id', 'action_run_jobs.run_id')
            .leftJoin('action_runners', 'action_runners.id', 'action_run_jobs.runner_id')
            .orderBy('action_run_jobs.id', direction)
            .limit(paging.limit)
            .offset(paging.offset)
            .select(
                'action_run_jobs.*',
                'action_runners.name as runner_name',
                'action_runs.ref as run_ref',
                'action_runs.commit_sha as run_commit_sha',
                'action_runs.run_index as run_index',
            )) as JobRow[];
        return { rows, total };
    }

    /** The repositories, owners and users a page of runs or jobs names, each read once. */
    async #related(repoIds: number[], userIds: number[]): Promise<Related> {
        const repoRows = repoIds.length > 0 ? await this.knex('repositories').whereIn('id', [...new Set(repoIds)]) : [];
        const repos = new Map(repoRows.map((raw: Record<string, unknown>) => [Number(raw.id), toRepositoryRow(raw)]));
        const ownerIds = [...repos.values()].map((repo) => repo.owner_id);
        const people = [...new Set([...ownerIds, ...userIds])];
        const userRows = people.length > 0 ? await this.knex('users').whereIn('id', people) : [];
        const byId = new Map(userRows.map((raw: Record<string, unknown>) => [Number(raw.id), toUserRow(raw)]));
        return { repos, owners: byId, users: byId };
    }

    async #toApiRuns(rows: RunRow[], viewer: UserRow): Promise<object[]> {
        const related = await this.#related(
            rows.map((row) => Number(row.repo_id)),
            rows.map((row) => Number(row.trigger_user_id)),
        );
        const { publicUrl } = this.server.app.config;
        // A page names few repositories and users: each is formatted once and the object shared by its runs.
        const shownRepos = new Map<number, ApiRepository | undefined>();
        const shownUsers = new Map<number, ApiUser | undefined>();
        const repositoryOf = (repoId: number) => {
            if (!shownRepos.has(repoId)) {
                const repo = related.repos.get(repoId);
                const owner = repo ? related.owners.get(repo.owner_id) : undefined;
                shownRepos.set(repoId, repo && owner ? toApiRepository(repo, owner, viewer, publicUrl) : undefined);
            }

            return shownRepos.get(repoId);
        };
        const actorOf = (userId: number) => {
            if (!shownUsers.has(userId)) {
                const user = related.users.get(userId);
                shownUsers.set(userId, user ? toApiUser(user, viewer, publicUrl) : undefined);
            }

            return shownUsers.get(userId);
        };
        return rows.map((row) => apiRun(row, repositoryOf(Number(row.repo_id)), actorOf(Number(row.trigger_user_id)), publicUrl));
    }

    async toApiJobs(rows: JobRow[]): Promise<object[]> {
        const related = await this.#related(
            rows.map((row) => Number(row.repo_id)),
            [],
        );
        const { publicUrl } = this.server.app.config;
        return rows.map((row) => {
            const repo = related.repos.get(Number(row.repo_id));
            const owner = repo ? related.owners.get(repo.owner_id) : undefined;
            const fullName = repo && owner ? `${owner.name}/${repo.name}` : '';
            return apiJob(row, fullName, publicUrl);
        });
    }
}

function apiRun(row: RunRow, repository: ApiRepository | undefined, actor: ApiUser | undefined, publicUrl: string): object {
    const fullName = repository?.full_name ?? '';
    return {
        id: Number(row.id),
        url: `${publicUrl}api/v1/repos/${fullName}/actions/runs/${row.id}`,
        html_url: `${publicUrl}${fullName}/actions/runs/${row.run_index}`,
        run_number: Number(row.run_index),
        started_at: timeOf(Number(row.started)),
        completed_at: timeOf(Number(row.stopped)),
        event: row.event,
        display_title: row.title,
        head_branch: branchOf(row.ref),
        head_sha: row.commit_sha,
        ...apiStatus(Number(row.status)),
        path: `${row.workflow_id}@${row.ref}`,
        repository_id: Number(row.repo_id),
        repository,
        trigger_actor: actor,
        actor,
    };
}

function jobOrder({ sort, order }: JobOrder): 'asc' | 'desc' {
    if (sort !== undefined && sort !== '' && sort !== 'id') {
        throw new ValidationError('Invalid sort mode');
    }

    if (order !== undefined && order !== '' && order !== 'asc' && order !== 'desc') {
        throw new ValidationError('Invalid sort order');
    }

    return order === 'desc' ? 'desc' : 'asc';
}

function apiJob(row: JobRow, fullName: string, publicUrl: string): object {
    const apiUrl = `${publicUrl}api/v1/repos/${fullName}/actions`;
    const steps = JSON.parse(row.steps) as NewStep[];
    return {
        id: Number(row.id),
        url: `${apiUrl}/jobs/${row.id}`,
        html_url: `${publicUrl}${fullName}/actions/runs/${row.run_index}/jobs/${row.id}`,
        run_id: Number(row.run_id),
        run_url: `${apiUrl}/runs/${row.run_id}`,
        head_branch: branchOf(row.run_ref),
        head_sha: row.run_commit_sha,
        run_attempt: Number(row.attempt),
        ...apiStatus(Number(row.status)),
        name: row.name,
        labels: JSON.parse(row.runs_on) as string[],
        steps: steps.map((step, index) => ({
            name: step.name,
            number: index,
            ...apiStatus(step.status ?? STATUS.waiting),
            started_at: timeOf(step.started ?? 0),
            completed_at: timeOf(step.stopped ?? 0),
        })),
        created_at: timeOf(Number(row.created_at)),
        started_at: timeOf(Number(row.started)),
        completed_at: timeOf(Number(row.stopped)),
        runner_id: Number(row.runner_id),
        runner_name: row.runner_name ?? '',
    };
}

export const actionRuns = defineService<ActionRunService>('actionRuns', (owner) => new ActionRunService(owner));
