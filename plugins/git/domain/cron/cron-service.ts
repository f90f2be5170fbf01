import type { Server } from '@hapi/hapi';

import { toRfc3339 } from '../../../../lib/database.ts';
import { NotFoundError } from '../../../../lib/errors.ts';
import type { Paging } from '../../../../lib/paging.ts';
import { defineService } from '../../../../lib/services.ts';
import { jobFile } from '../../../jobs.ts';
import type { CronJobData, CronOutcome, CronRequest } from './lease.ts';
import { nextRunAt, parseSchedule, type Schedule } from './schedule.ts';
import { CRON_TASKS, UNREGISTERED_TASKS } from './tasks.ts';
import { Service } from '../../../../lib/service.ts';

export const CRON_WORKER = jobFile('cron-task');
const ZERO_TIME = '0001-01-01T00:00:00Z';

/** A task as configured: Gitea's defaults, overridden by CRON_<TASK>_ENABLED, _SCHEDULE and _RUN_AT_START. */
export interface CronSetting {
    name: string;
    enabled: boolean;
    spec: string;
    schedule: Schedule;
    runAtStart: boolean;
}

export interface ApiCron {
    name: string;
    schedule: string;
    next: string;
    prev: string;
    exec_times: number;
}

export const cronJobName = (task: string) => `cron-${task}`;

/** Reads the configuration; a task name Gatehouse does not have, or a schedule it cannot parse, stops start-up. */
export function cronSettings(overrides: Server['app']['config']['cron']): CronSetting[] {
    for (const name of Object.keys(overrides)) {
        if (!CRON_TASKS.some((task) => task.name === name)) {
            const why = UNREGISTERED_TASKS[name];
            throw new Error(`CRON_${name.toUpperCase()}_*: there is no cron task ${name}${why ? `: ${why}` : ''}`);
        }
    }

    return CRON_TASKS.map((task) => {
        const override = overrides[task.name] ?? {};
        const spec = override.schedule ?? task.schedule;
        let schedule: Schedule;
        try {
            schedule = parseSchedule(spec);
        } catch (error) {
            throw new Error(`CRON_${task.name.toUpperCase()}_SCHEDULE: ${(error as Error).message}`);
        }

        return {
            name: task.name,
            enabled: override.enabled ?? task.enabled,
            spec,
            schedule,
            runAtStart: override.runAtStart ?? task.runAtStart,
        };
    });
}

/** Gitea's cron tasks as the API shows and starts them; the work itself happens in jobs/cron-task.ts. */
export class CronService extends Service {
    readonly settings: CronSetting[];

    constructor(server: Server) {
        super(server);
        this.settings = cronSettings(server.app.config.cron);
    }

    /** Every task, enabled or not, in Gitea's order, with counters shared by all servers on the database. */
    async list(paging: Paging): Promise<{ rows: ApiCron[]; total: number }> {
        const page = this.settings.slice(paging.offset, paging.offset + paging.limit);
        const stored = await this.server.app
            .knex('cron_tasks')
            .whereIn(
                'name',
                page.map((setting) => setting.name),
            )
            .select('name', 'exec_times', 'last_run_at');
        const byName = new Map(stored.map((row: Record<string, unknown>) => [String(row.name), row]));
        const at = Date.now();
        const rows = page.map((setting) => {
            const row = byName.get(setting.name);
            const lastRun = Number(row?.last_run_at ?? 0);
            const next = setting.enabled ? nextRunAt(setting.schedule, this.server.app.jobs.startedAt, at) : undefined;
            return {
                name: setting.name,
                schedule: setting.enabled ? setting.spec : '-',
                next: next === undefined ? ZERO_TIME : toRfc3339(next),
                prev: lastRun > 0 ? toRfc3339(lastRun) : ZERO_TIME,
                exec_times: Number(row?.exec_times ?? 0),
            };
        });
        return { rows, total: this.settings.length };
    }

    /** Runs a task now in a worker and waits for it, as Gitea does; a task already running is not started again. */
    async run(name: string): Promise<CronOutcome> {
        if (!this.settings.some((setting) => setting.name === name)) {
            throw new NotFoundError();
        }

        const job: CronJobData = { requests: [{ task: name, cause: 'manual' }] };
        let outcome: CronOutcome = { task: name, status: 'failure', message: 'the worker ended without an answer' };
        await this.server.app.jobs.runOnce(CRON_WORKER, { ...job }, (message) => {
            outcome = message as CronOutcome;
        });
        this.report(outcome);
        return outcome;
    }

    /** Gitea runs the enabled tasks marked RUN_AT_START when it starts; here one after the other, in one worker. */
    async runAtStart(): Promise<void> {
        const requests: CronRequest[] = this.settings
            .filter((setting) => setting.enabled && setting.runAtStart)
            .map((setting) => ({ task: setting.name, cause: 'start' }));
        if (requests.length > 0) {
            const job: CronJobData = { requests };
            await this.server.app.jobs.runOnce(CRON_WORKER, { ...job }, (message) => this.report(message as CronOutcome));
        }
    }

    /** A failed run is logged with its reason (it is also recorded in the database as a system notice). */
    report(outcome: CronOutcome): void {
        if (outcome.status === 'failure') {
            this.server.log(['error', 'cron'], `cron task ${outcome.task} failed: ${outcome.message}`);
        } else {
            this.server.log(['info', 'cron'], `cron task ${outcome.task}: ${outcome.status}, ${outcome.message}`);
        }
    }
}

export const cron = defineService<CronService>('cron', (owner) => new CronService(owner));
