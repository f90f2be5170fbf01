/**
 * What the admin and organisation handlers share (Gitea's routers/api/v1/shared): runner, run and job listings in
 * Gitea's response shapes. Not a Swagger tag: the loader never reads this folder for handlers.
 */
import type { Request, ResponseToolkit } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { readsAsOf, signedInUser } from '../../domain/identity/auth.ts';
import { type RunnerScope, runners, toApiRunner } from '../../domain/actions/runner-service.ts';
import { actionRuns, type RunScope } from '../../domain/actions/action-run-service.ts';
import { statusFilter } from '../../domain/actions/status.ts';
import { resolveSortOrder } from './query.ts';

interface RunQuery {
    status?: string;
    event?: string;
    branch?: string;
    actor?: string;
    head_sha?: string;
    disabled?: boolean;
}

/** Runners come in the body's `total_count` only: no paging headers, as Gitea answers. */
export async function runnerList(request: Request, scope: RunnerScope | undefined): Promise<object> {
    const { disabled } = request.query as RunQuery;
    const { rows, total } = await runners(request.server).list(scope, disabled, parsePaging(request.query));
    return { runners: rows.map((runner) => toApiRunner(runner)), total_count: total };
}

export async function runnerGet(request: Request, scope: RunnerScope | undefined): Promise<object> {
    return toApiRunner(await runners(request.server).get(scope, request.params.runner_id as string));
}

export async function runnerEdit(request: Request, scope: RunnerScope | undefined): Promise<object> {
    const service = runners(request.server);
    const runner = await service.get(scope, request.params.runner_id as string);
    const { disabled } = request.payload as { disabled: boolean };
    return toApiRunner(await service.setDisabled(runner, disabled));
}

export async function runnerDelete(request: Request, h: ResponseToolkit, scope: RunnerScope | undefined): Promise<object> {
    const service = runners(request.server);
    await service.delete(await service.get(scope, request.params.runner_id as string));
    return h.response().code(204);
}

export async function registrationToken(request: Request, scope: RunnerScope): Promise<object> {
    return { token: await runners(request.server).registrationToken(scope) };
}

export async function runList(request: Request, h: ResponseToolkit, scope: RunScope | undefined): Promise<object> {
    const query = request.query as RunQuery;
    const paging = parsePaging(request.query);
    const service = actionRuns(request.server);
    const filters = {
        statuses: statusFilter(query.status),
        event: query.event,
        branch: query.branch,
        actor: query.actor,
        headSha: query.head_sha,
    };
    const page = await service.runPage(scope, filters, paging, signedInUser(request), readsAsOf(request));
    const body = { workflow_runs: page.items, total_count: page.total };
    return setPagingHeaders(request, h.response(body), request.server.app.config.publicUrl, { total: page.total, paging });
}

export async function jobList(request: Request, h: ResponseToolkit, scope: RunScope | undefined): Promise<object> {
    const query = request.query as RunQuery;
    // Gitea's actions_model.JobOrderByMap: by id only, ascending unless told otherwise.
    const order = resolveSortOrder(request.query, ['id']);
    const paging = parsePaging(request.query);
    const service = actionRuns(request.server);
    const { rows, total } = await service.listJobs(scope, statusFilter(query.status), { sort: order?.sort, order: order?.order }, paging);
    const body = { jobs: await service.toApiJobs(rows), total_count: total };
    return setPagingHeaders(request, h.response(body), request.server.app.config.publicUrl, { total, paging });
}
