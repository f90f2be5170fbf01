import Crypto from 'node:crypto';
import { EventEmitter } from 'node:events';

import type { Server } from '@hapi/hapi';

import { isUniqueViolation, now } from '../../../../lib/database.ts';
import { ConflictError, NotFoundError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { audit } from '../accounts/audit-service.ts';
import type { DeployUser } from '../accounts/user-service.ts';
import { Service } from '../../../../lib/service.ts';
import { cell, nullable, rowReader } from '../../../../lib/row-reader.ts';

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
    /** Who started it; null for a run the schedule starts (BACKUP_SCHEDULE). */
    actor: DeployUser | null;
    /** The job file the run executes in a Bree worker. */
    script: string;
    data?: Record<string, unknown>;
    /** Called with the run's final state before the run is marked ended (the app's state follows the run). */
    onEnd?: (state: RunState) => Promise<void>;
    /** Called with the run's id before the run executes (to journal what its undo needs); a failure fails the run. */
    beforeExecute?: (runId: number) => Promise<void>;
}

/** A run as lists show it: without its error, which the run's own page shows. */
export type RunSummary = Omit<Run, 'error'>;

const SUMMARY_COLUMNS = ['id', 'app_name', 'kind', 'state', 'started_at', 'ended_at'];

const toRunSummary = rowReader<RunSummary>({
    id: ['id', cell.number],
    app: ['app_name', cell.string],
    kind: ['kind', cell.string],
    state: ['state', cell.as<RunState>()],
    startedAt: ['started_at', cell.time],
    endedAt: ['ended_at', nullable(cell.time)],
});

function toRun(row: Record<string, unknown>): Run {
    return { ...toRunSummary(row), error: nullable(cell.string)(row.error) };
}

const toRunEvent = rowReader<RunEvent>({
    seq: ['seq', cell.number],
    step: ['step', cell.string],
    level: ['level', cell.as<RunEvent['level']>()],
    text: ['text', cell.string],
});

export type RecoverRun = (run: Run, post: (message: Extract<RunMessage, { type: 'event' }>) => void) => Promise<void>;

/** How often a run another process executes is read again for this process's listeners. */
const FOLLOW_MS = 250;

type LiveMessage = { type: 'event'; event: RunEvent } | { type: 'end'; run: Run };

/** How often an event write retries after another process took the same seq. */
const SEQ_ATTEMPTS = 5;

/**
 * Runs: one at a time per app, executed by a Bree worker. Every log line is stored (with the next `seq`)
 * before it is published, so a subscriber that comes late or reconnects reads what it missed from the table.
 *
 * Each run has one owner, the process that executes it, which renews a lease on it in the database while it goes on;
 * another process (a second server on the same database, a restart that overlaps the old process) takes a running run
 * over, marking it interrupted and freeing its app, only once that lease has lapsed.
 */
export class RunService extends Service {
    readonly #live = new EventEmitter();
    /** Runs of other processes followed from the database for this process's listeners. */
    readonly #followers = new Map<number, { listeners: number; stop: () => void }>();
    /** Serialises event writes per run, so that seq follows arrival order. */
    readonly #writes = new Map<number, Promise<void>>();
    readonly #nextSeq = new Map<number, number>();
    /** This process's id as a runs' owner. */
    readonly #owner = Crypto.randomUUID();
    /** The runs this process is executing. */
    readonly #owned = new Set<number>();
    #renewal: NodeJS.Timeout | undefined;
    #recover: RecoverRun | undefined;
    readonly #endListeners: Array<(run: Run) => Promise<void>> = [];
    #sweep: NodeJS.Timeout | undefined;

    constructor(server: Server) {
        super(server);
        this.#live.setMaxListeners(0);
    }

    get #leaseMs(): number {
        return this.server.app.config.deploy.runLeaseSeconds * 1000;
    }
    /** Starts a run and answers its id at once; 409 while the app has a run in progress. */
    async start(request: StartRun): Promise<number> {
        const runId = await this.#insertRunning(request);
        await audit(this.server).record({
            actor: request.actor ?? undefined,
            action: `runs.${request.kind}`,
            target: request.app,
            details: { run: runId },
        });
        try {
            await request.beforeExecute?.(runId);
        } catch (error) {
            await this.#finish(runId, 'failed', `the run could not start: ${(error as Error).message}`);
            throw error;
        }

        void this.#execute(runId, request);
        return runId;
    }

    /**
     * The unique index on `running_app` (the app's name while a run is running, NULL after) makes "no run in
     * progress" and the insert one atomic step, on both databases and across server processes.
     */
    async #insertRunning(request: StartRun): Promise<number> {
        try {
            const [id] = await this.knex('dp_runs').insert({
                app_name: request.app,
                kind: request.kind,
                state: 'running',
                started_by: request.actor?.id ?? null,
                started_at: now(),
                owner: this.#owner,
                lease_until: now() + this.#leaseMs,
            });
            this.#own(Number(id));
            return Number(id);
        } catch (error) {
            throw isUniqueViolation(error) ? new ConflictError(`another run is in progress for ${request.app}`) : error;
        }
    }

    async #execute(runId: number, request: StartRun): Promise<void> {
        let ending: { state: RunState; error?: string } = { state: 'failed', error: 'the run ended without saying how' };
        try {
            await this.server.app.jobs.runOnce(request.script, { ...request.data, runId, app: request.app }, (message) => {
                const posted = message as RunMessage;
                if (posted.type === 'event') {
                    this.#recordPosted(runId, posted);
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

        await this.#finish(runId, ending.state, ending.error ?? null, async () => {
            await audit(this.server).record({
                actor: request.actor ?? undefined,
                action: `runs.${request.kind}.end`,
                target: request.app,
                outcome: ending.state === 'succeeded' ? 'success' : 'failure',
                details: { run: runId, state: ending.state },
            });
        });
    }

    /** A line a run posted, stored in arrival order without being waited for (#finish waits for it). */
    #recordPosted(runId: number, posted: Extract<RunMessage, { type: 'event' }>): void {
        void this.record(runId, { step: posted.step, level: posted.level ?? 'info', text: posted.text }).catch((error: unknown) =>
            this.server.log(['error', 'deploy', 'runs'], `run ${runId}: a log line could not be stored: ${(error as Error).message}`),
        );
    }

    /** What undoes an interrupted run's changes when it is taken over (the app runs' journal), logging to the run. */
    recoverWith(recover: RecoverRun): void {
        this.#recover = recover;
    }

    /** Stores a log line with the run's next sequence number, then publishes it. */
    async record(runId: number, event: Omit<RunEvent, 'seq'>): Promise<void> {
        const previous = this.#writes.get(runId) ?? Promise.resolve();
        const write = previous.then(async () => {
            const seq = await this.#insertEvent(runId, event);
            this.#live.emit(`run:${runId}`, { type: 'event', event: { ...event, seq } });
        });
        this.#writes.set(
            runId,
            write.catch(() => undefined),
        );
        await write;
    }

    /**
     * Inserts the line with the run's next seq. Another process may write lines of the same run (the one that takes
     * it over): when it took the seq first, the next is read from the table again.
     */
    async #insertEvent(runId: number, event: Omit<RunEvent, 'seq'>): Promise<number> {
        for (let attempt = 1; ; attempt += 1) {
            const seq = await this.#takeSeq(runId);
            try {
                await this.knex('dp_run_events').insert({
                    run_id: runId,
                    seq,
                    step: event.step.slice(0, 64),
                    level: event.level,
                    text: event.text,
                    at: now(),
                });
                return seq;
            } catch (error) {
                if (!isUniqueViolation(error) || attempt >= SEQ_ATTEMPTS) {
                    throw error;
                }

                this.#nextSeq.delete(runId);
            }
        }
    }

    async #takeSeq(runId: number): Promise<number> {
        let next = this.#nextSeq.get(runId);
        if (next === undefined) {
            const row = await this.knex('dp_run_events').where({ run_id: runId }).max({ seq: 'seq' }).first();
            next = Number(row?.seq ?? 0) + 1;
        }

        this.#nextSeq.set(runId, next + 1);
        return next;
    }

    /**
     * Marks the run ended, then lets the end's listeners (and `audited`, the run's audit entry) do their part before
     * this process's watchers hear of the end: whoever sees a run end here finds what its end changed already done.
     */
    async #finish(runId: number, state: RunState, error: string | null, audited?: () => Promise<void>): Promise<void> {
        await (this.#writes.get(runId) ?? Promise.resolve()).catch(() => undefined);
        // Only a run still running ends here: one another process took over (its lease lapsed) keeps that ending.
        const ended = await this.knex('dp_runs').where({ id: runId, state: 'running' }).update({ state, error, ended_at: now() });
        this.#writes.delete(runId);
        this.#nextSeq.delete(runId);
        this.#disown(runId);
        const run = await this.get(runId);
        try {
            for (const listener of ended === 1 ? this.#endListeners : []) {
                await listener(run).catch((failure: unknown) =>
                    this.server.log(['error', 'deploy', 'runs'], `a listener of run ${runId}'s end failed: ${(failure as Error).message}`),
                );
            }

            await audited?.();
        } finally {
            this.#live.emit(`run:${runId}`, { type: 'end', run });
        }
    }

    /** The run once it has ended, whichever process runs it. */
    async untilEnded(runId: number): Promise<Run> {
        return await new Promise<Run>((resolve, reject) => {
            const unsubscribe = this.subscribe(runId, (message) => {
                if (message.type === 'end') {
                    unsubscribe();
                    resolve(message.run);
                }
            });
            // Ended before the subscription: its end was published already.
            this.get(runId).then((run) => {
                if (run.state !== 'running') {
                    unsubscribe();
                    resolve(run);
                }
            }, reject);
        });
    }

    /** Hears of every run this process ends, once, after it is marked ended (a higher concept registers in its setup). */
    onEnded(listener: (run: Run) => Promise<void>): void {
        this.#endListeners.push(listener);
    }

    #own(runId: number): void {
        this.#owned.add(runId);
        this.#renewal ??= setInterval(() => void this.#renewLeases(), Math.max(500, this.#leaseMs / 3)).unref();
    }

    #disown(runId: number): void {
        this.#owned.delete(runId);
        if (this.#owned.size === 0 && this.#renewal !== undefined) {
            clearInterval(this.#renewal);
            this.#renewal = undefined;
        }
    }

    async #renewLeases(): Promise<void> {
        try {
            await this.knex('dp_runs')
                .where({ owner: this.#owner, state: 'running' })
                .update({ lease_until: now() + this.#leaseMs });
        } catch (error) {
            this.server.log(['error', 'deploy', 'runs'], `renewing the runs' leases failed: ${(error as Error).message}`);
        }
    }

    /**
     * Runs whose owner stopped renewing their lease (a killed or stopped server, or one from before leases) are marked
     * interrupted, with an event saying so, which frees their apps. A run whose owner is alive is left alone.
     */
    async takeOverLapsed(): Promise<void> {
        const lapsed = await this.knex('dp_runs')
            .where({ state: 'running' })
            .where((query) => query.whereNull('lease_until').orWhere('lease_until', '<', now()))
            .select('id');
        for (const row of lapsed) {
            const runId = Number(row.id);
            if (this.#owned.has(runId)) {
                continue;
            }

            const claimed = await this.knex('dp_runs')
                .where({ id: runId, state: 'running' })
                .where((query) => query.whereNull('lease_until').orWhere('lease_until', '<', now()))
                .update({ owner: this.#owner, lease_until: now() + this.#leaseMs });
            if (claimed !== 1) {
                continue;
            }

            this.#own(runId);
            await this.record(runId, {
                step: 'server',
                level: 'error',
                text: 'The server running this run stopped while it was in progress; the run was interrupted.',
            });
            await this.#recoverInterrupted(runId);
            await this.#finish(runId, 'interrupted', 'interrupted: the server running it stopped');
        }
    }

    async #recoverInterrupted(runId: number): Promise<void> {
        try {
            await this.#recover?.(await this.get(runId), (posted) => this.#recordPosted(runId, posted));
        } catch (error) {
            await this.record(runId, { step: 'recovery', level: 'error', text: `The recovery failed: ${(error as Error).message}` });
        }
    }

    /** Takes lapsed runs over now and then every lease period, until stopSweeping. */
    async startSweeping(): Promise<void> {
        await this.takeOverLapsed();
        this.#sweep ??= setInterval(
            () =>
                void this.takeOverLapsed().catch((error: unknown) =>
                    this.server.log(['error', 'deploy', 'runs'], `taking over lapsed runs failed: ${(error as Error).message}`),
                ),
            this.#leaseMs,
        ).unref();
    }

    stopSweeping(): void {
        clearInterval(this.#sweep);
        this.#sweep = undefined;
        clearInterval(this.#renewal);
        this.#renewal = undefined;
    }

    async get(runId: number, app?: string): Promise<Run> {
        const query = this.knex('dp_runs').where({ id: runId });
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
        return Boolean(await this.knex('dp_runs').where({ app_name: app, state: 'running' }).first('id'));
    }

    /** Forgets the app's past runs and their lines, all but `keep`. */
    async forget(app: string, keep: number): Promise<void> {
        await this.knex('dp_run_events')
            .whereIn('run_id', this.knex('dp_runs').where({ app_name: app }).whereNot({ id: keep }).select('id'))
            .delete();
        await this.knex('dp_runs').where({ app_name: app }).whereNot({ id: keep }).delete();
    }

    async list(app: string): Promise<Run[]> {
        return (await this.knex('dp_runs').where({ app_name: app }).orderBy('id', 'desc').limit(100)).map(toRun);
    }

    /** The latest runs of every app, newest first. */
    async latest(limit: number): Promise<RunSummary[]> {
        return (await this.knex('dp_runs').orderBy('id', 'desc').limit(limit).select(SUMMARY_COLUMNS)).map(toRunSummary);
    }

    /** The latest run of each of these apps, by app name (an app without runs is left out). */
    async lastOfApps(names: string[]): Promise<Map<string, RunSummary>> {
        if (names.length === 0) {
            return new Map();
        }

        const latestIds = this.knex('dp_runs').whereIn('app_name', names).groupBy('app_name').max('id');
        const rows = await this.knex('dp_runs').whereIn('id', latestIds).select(SUMMARY_COLUMNS);
        return new Map(rows.map((row) => [String(row.app_name), toRunSummary(row)]));
    }

    /** How many runs are in progress, across apps. */
    async countInProgress(): Promise<number> {
        const row = await this.knex('dp_runs').where({ state: 'running' }).count({ count: '*' }).first();
        return Number(row?.count ?? 0);
    }

    async eventsAfter(runId: number, afterSeq: number): Promise<RunEvent[]> {
        const rows = await this.knex('dp_run_events').where({ run_id: runId }).where('seq', '>', afterSeq).orderBy('seq');
        return rows.map(toRunEvent);
    }

    /**
     * Live events of a run; returns the function that stops listening. A run another process executes (another
     * Gatehouse on the database) publishes there, not here: it is followed from the database meanwhile.
     */
    subscribe(runId: number, listener: (message: LiveMessage) => void): () => void {
        this.#live.on(`run:${runId}`, listener);
        const unfollow = this.#owned.has(runId) ? undefined : this.#follow(runId);
        return () => {
            this.#live.off(`run:${runId}`, listener);
            unfollow?.();
        };
    }

    /**
     * Publishes here what another process writes of the run: its new events, every FOLLOW_MS, then its end. One
     * follower per run, however many listen; listeners drop what they have by seq.
     */
    #follow(runId: number): () => void {
        let follower = this.#followers.get(runId);
        if (!follower) {
            const state = { lastSeq: 0, busy: false, done: false };
            const tick = async () => {
                if (state.busy || state.done) return;
                state.busy = true;
                try {
                    for (const event of await this.eventsAfter(runId, state.lastSeq)) {
                        state.lastSeq = event.seq;
                        this.#live.emit(`run:${runId}`, { type: 'event', event });
                    }

                    const run = await this.get(runId);
                    if (run.state !== 'running' && !this.#owned.has(runId)) {
                        // Lines stored before the state changed were read above.
                        state.done = true;
                        this.#live.emit(`run:${runId}`, { type: 'end', run });
                    }
                } catch (error) {
                    this.server.log(['error', 'deploy', 'runs'], `following run ${runId}: ${(error as Error).message}`);
                } finally {
                    state.busy = false;
                }
            };
            const timer = setInterval(() => void tick(), FOLLOW_MS).unref();
            follower = { listeners: 0, stop: () => clearInterval(timer) };
            this.#followers.set(runId, follower);
        }

        const following = follower;
        following.listeners += 1;
        return () => {
            following.listeners -= 1;
            if (following.listeners === 0) {
                following.stop();
                this.#followers.delete(runId);
            }
        };
    }
}

export const runs = defineService<RunService>('runs', (owner) => new RunService(owner));
