import { EventEmitter } from 'node:events';

import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { isUniqueViolation, now, toRfc3339 } from '../../../../lib/database.ts';
import { ConflictError, NotFoundError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { audit } from '../accounts/audit-service.ts';
import type { DeployUser } from '../accounts/user-service.ts';

export type RunState = 'running' | 'succeeded' | 'failed' | 'rolled back' | 'interrupted';

export interface RunEvent {
    seq: number;
    step: string;
    level: 'info' | 'warning' | 'error';
    text: string;
}

export interface Run {
    id: number;
    app: string;
    kind: string;
    state: RunState;
    error: string | null;
    startedAt: string;
    endedAt: string | null;
}

/** What a run's worker posts: a log line, or how it ended. */
export type RunMessage =
    { type: 'event'; step: string; level?: RunEvent['level']; text: string } | { type: 'end'; state: RunState; error?: string };

export interface StartRun {
    app: string;
    kind: string;
    actor: DeployUser;
    /** The job file the run executes in a Bree worker. */
    script: string;
    data?: Record<string, unknown>;
    /** Called with the run's final state before the run is marked ended (the app's state follows the run). */
    onEnd?: (state: RunState) => Promise<void>;
}

function toRun(row: Record<string, unknown>): Run {
    return {
        id: Number(row.id),
        app: String(row.app_name),
        kind: String(row.kind),
        state: row.state as RunState,
        error: row.error === null ? null : String(row.error),
        startedAt: toRfc3339(Number(row.started_at)),
        endedAt: row.ended_at === null ? null : toRfc3339(Number(row.ended_at)),
    };
}

/**
 * Runs: one at a time per app, executed by a Bree worker. Every log line is stored (with the next `seq`)
 * before it is published, so a subscriber that comes late or reconnects reads what it missed from the table.
 */
export class RunService {
    readonly #server: Server;
    readonly #live = new EventEmitter();
    /** Serialises event writes per run, so that seq follows arrival order. */
    readonly #writes = new Map<number, Promise<void>>();
    readonly #nextSeq = new Map<number, number>();

    constructor(server: Server) {
        this.#server = server;
        this.#live.setMaxListeners(0);
    }

    get #knex(): Knex {
        return this.#server.app.knex;
    }

    /** Starts a run and answers its id at once; 409 while the app has a run in progress. */
    async start(request: StartRun): Promise<number> {
        const runId = await this.#insertRunning(request);
        await audit(this.#server).record({
            actor: request.actor,
            action: `runs.${request.kind}`,
            target: request.app,
            details: { run: runId },
        });
        void this.#execute(runId, request);
        return runId;
    }

    /**
     * The unique index on `running_app` (the app's name while a run is running, NULL after) makes "no run in
     * progress" and the insert one atomic step, on both databases and across server processes.
     */
    async #insertRunning(request: StartRun): Promise<number> {
        try {
            const [id] = await this.#knex('dp_runs').insert({
                app_name: request.app,
                kind: request.kind,
                state: 'running',
                started_by: request.actor.id,
                started_at: now(),
            });
            return Number(id);
        } catch (error) {
            throw isUniqueViolation(error) ? new ConflictError(`another run is in progress for ${request.app}`) : error;
        }
    }

    async #execute(runId: number, request: StartRun): Promise<void> {
        let ending: { state: RunState; error?: string } = { state: 'failed', error: 'the run ended without saying how' };
        try {
            await this.#server.app.jobs.runOnce(request.script, { ...request.data, runId, app: request.app }, (message) => {
                const posted = message as RunMessage;
                if (posted.type === 'event') {
                    void this.record(runId, { step: posted.step, level: posted.level ?? 'info', text: posted.text });
                } else if (posted.type === 'end') {
                    ending = { state: posted.state, error: posted.error };
                }
            });
        } catch (error) {
            ending = { state: 'failed', error: (error as Error).message };
        }

        try {
            await request.onEnd?.(ending.state);
        } catch (error) {
            await this.record(runId, { step: 'end', level: 'error', text: `Could not record the outcome: ${(error as Error).message}` });
        }

        await this.#finish(runId, ending.state, ending.error ?? null);
        await audit(this.#server).record({
            actor: request.actor,
            action: `runs.${request.kind}.end`,
            target: request.app,
            outcome: ending.state === 'succeeded' ? 'success' : 'failure',
            details: { run: runId, state: ending.state },
        });
    }

    /** Stores a log line with the run's next sequence number, then publishes it. */
    async record(runId: number, event: Omit<RunEvent, 'seq'>): Promise<void> {
        const previous = this.#writes.get(runId) ?? Promise.resolve();
        const write = previous.then(async () => {
            const seq = await this.#takeSeq(runId);
            await this.#knex('dp_run_events').insert({
                run_id: runId,
                seq,
                step: event.step.slice(0, 64),
                level: event.level,
                text: event.text,
                at: now(),
            });
            this.#live.emit(`run:${runId}`, { type: 'event', event: { ...event, seq } });
        });
        this.#writes.set(
            runId,
            write.catch(() => undefined),
        );
        await write;
    }

    async #takeSeq(runId: number): Promise<number> {
        let next = this.#nextSeq.get(runId);
        if (next === undefined) {
            const row = await this.#knex('dp_run_events').where({ run_id: runId }).max({ seq: 'seq' }).first();
            next = Number(row?.seq ?? 0) + 1;
        }

        this.#nextSeq.set(runId, next + 1);
        return next;
    }

    async #finish(runId: number, state: RunState, error: string | null): Promise<void> {
        await (this.#writes.get(runId) ?? Promise.resolve());
        await this.#knex('dp_runs').where({ id: runId }).update({ state, error, ended_at: now() });
        this.#writes.delete(runId);
        this.#nextSeq.delete(runId);
        this.#live.emit(`run:${runId}`, { type: 'end', run: await this.get(runId) });
    }

    /** At start: runs left running by a stopped server are marked interrupted, with an event saying so. */
    async interruptLeftovers(): Promise<void> {
        const leftovers = await this.#knex('dp_runs').where({ state: 'running' }).select('id');
        for (const row of leftovers) {
            const runId = Number(row.id);
            await this.record(runId, {
                step: 'server',
                level: 'error',
                text: 'The server restarted while this run was in progress; the run was interrupted.',
            });
            await this.#finish(runId, 'interrupted', 'interrupted by a server restart');
        }
    }

    async get(runId: number, app?: string): Promise<Run> {
        const query = this.#knex('dp_runs').where({ id: runId });
        if (app !== undefined) {
            query.where({ app_name: app });
        }

        const row = await query.first();
        if (!row) {
            throw new NotFoundError(`run ${runId} not found`);
        }

        return toRun(row);
    }

    /** Whether the app has a run in progress (the start itself checks again, atomically). */
    async inProgress(app: string): Promise<boolean> {
        return Boolean(await this.#knex('dp_runs').where({ app_name: app, state: 'running' }).first('id'));
    }

    /** Forgets the app's past runs and their lines, all but `keep`. */
    async forget(app: string, keep: number): Promise<void> {
        await this.#knex('dp_run_events')
            .whereIn('run_id', this.#knex('dp_runs').where({ app_name: app }).whereNot({ id: keep }).select('id'))
            .delete();
        await this.#knex('dp_runs').where({ app_name: app }).whereNot({ id: keep }).delete();
    }

    async list(app: string): Promise<Run[]> {
        return (await this.#knex('dp_runs').where({ app_name: app }).orderBy('id', 'desc').limit(100)).map(toRun);
    }

    /** The latest runs of every app, newest first. */
    async latest(limit: number): Promise<Run[]> {
        return (await this.#knex('dp_runs').orderBy('id', 'desc').limit(limit)).map(toRun);
    }

    /** How many runs are in progress, across apps. */
    async countInProgress(): Promise<number> {
        const row = await this.#knex('dp_runs').where({ state: 'running' }).count({ count: '*' }).first();
        return Number(row?.count ?? 0);
    }

    async eventsAfter(runId: number, afterSeq: number): Promise<RunEvent[]> {
        const rows = await this.#knex('dp_run_events').where({ run_id: runId }).where('seq', '>', afterSeq).orderBy('seq');
        return rows.map((row) => ({
            seq: Number(row.seq),
            step: String(row.step),
            level: row.level as RunEvent['level'],
            text: String(row.text),
        }));
    }

    /** Live events of a run; returns the function that stops listening. */
    subscribe(runId: number, listener: (message: { type: 'event'; event: RunEvent } | { type: 'end'; run: Run }) => void): () => void {
        this.#live.on(`run:${runId}`, listener);
        return () => this.#live.off(`run:${runId}`, listener);
    }
}

export const runs = defineService<RunService>('runs', (owner) => new RunService(owner));
