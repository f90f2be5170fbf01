/**
 * Running a cron task exactly once across servers sharing a database: the task's row is claimed with one
 * conditional UPDATE (the lease, and for scheduled runs the tick's slot), renewed while the task works,
 * and released at the end. Executions (the newest of each task) and failures are recorded in the database.
 */
import Crypto from 'node:crypto';
import Os from 'node:os';

import type { Knex } from 'knex';

import type { Config } from '../../../../lib/config.ts';
import { type Schedule, slotOf } from './schedule.ts';
import { NOTICE, type TaskContext } from './task-context.ts';
import { cronTask } from './tasks.ts';

export const LEASE_MS = 5 * 60_000;
const RENEW_MS = 60_000;
/** Executions kept per task: a task on `@every 1m` would otherwise add 1,440 rows a day. */
export const EXECUTIONS_KEPT = 100;

export type CronCause = 'schedule' | 'manual' | 'start';

export interface CronRequest {
    task: string;
    cause: CronCause;
    /** Scheduled runs claim their tick; manual runs and runs at start only need the lease. */
    schedule?: Schedule;
}

/** What jobs/cron-task.ts is given: one task, or (at start) several run one after the other. */
export interface CronJobData {
    requests: CronRequest[];
}

export interface CronOutcome {
    task: string;
    status: 'success' | 'failure' | 'skipped';
    message: string;
}

interface Claim {
    holder: string;
    slot: number;
    startedAt: number;
}

async function claim(knex: Knex, request: CronRequest): Promise<Claim | undefined> {
    await knex('cron_tasks').insert({ name: request.task }).onConflict('name').ignore();
    const startedAt = Date.now();
    const holder = `${Os.hostname()}:${process.pid}:${Crypto.randomBytes(4).toString('hex')}`.slice(0, 64);
    const slot = request.cause === 'schedule' && request.schedule ? slotOf(request.schedule, startedAt) : 0;
    const query = knex('cron_tasks').where({ name: request.task }).where('lease_expires_at', '<', startedAt);
    if (slot > 0) {
        query.where('last_slot', '<', slot);
    }

    const claimed = await query.update({
        lease_holder: holder,
        lease_expires_at: startedAt + LEASE_MS,
        exec_times: knex.raw('exec_times + 1'),
        last_run_at: startedAt,
        ...(slot > 0 ? { last_slot: slot } : {}),
    });
    return claimed === 1 ? { holder, slot, startedAt } : undefined;
}

function contextFor(knex: Knex, config: Config): TaskContext {
    return {
        knex,
        config,
        async notice(type, description) {
            await knex('system_notices').insert({ type, description, created_at: Date.now() });
        },
    };
}

/** Runs the task if this caller wins the claim; otherwise it is already running, or this tick ran elsewhere. */
export async function executeCronTask(knex: Knex, config: Config, request: CronRequest): Promise<CronOutcome> {
    const definition = cronTask(request.task);
    if (!definition) {
        return { task: request.task, status: 'failure', message: `unknown cron task ${request.task}` };
    }

    const won = await claim(knex, request);
    if (!won) {
        return { task: request.task, status: 'skipped', message: 'already running, or this tick ran on another server' };
    }

    const [executionId] = await knex('cron_executions').insert({
        task: request.task,
        cause: request.cause,
        holder: won.holder,
        slot: won.slot,
        status: 'running',
        message: '',
        started_at: won.startedAt,
    });
    const renewal = setInterval(() => {
        void knex('cron_tasks')
            .where({ name: request.task, lease_holder: won.holder })
            .update({ lease_expires_at: Date.now() + LEASE_MS })
            .catch(() => undefined);
    }, RENEW_MS);
    const context = contextFor(knex, config);
    let outcome: CronOutcome;
    try {
        outcome = { task: request.task, status: 'success', message: await definition.run(context) };
    } catch (error) {
        outcome = { task: request.task, status: 'failure', message: error instanceof Error ? error.message : String(error) };
        await context.notice(NOTICE.task, `Cron task ${request.task} failed: ${outcome.message}`);
    } finally {
        clearInterval(renewal);
    }

    await knex('cron_executions')
        .where({ id: executionId })
        .update({ status: outcome.status, message: outcome.message, finished_at: Date.now() });
    await knex('cron_tasks').where({ name: request.task, lease_holder: won.holder }).update({ lease_expires_at: 0 });
    await forgetOldExecutions(knex, request.task);
    return outcome;
}

async function forgetOldExecutions(knex: Knex, task: string): Promise<void> {
    const oldestKept = await knex('cron_executions')
        .where({ task })
        .orderBy('id', 'desc')
        .offset(EXECUTIONS_KEPT - 1)
        .first('id');
    if (oldestKept) {
        await knex('cron_executions').where({ task }).where('id', '<', oldestKept.id).delete();
    }
}
