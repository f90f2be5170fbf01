import Path from 'node:path';

import type { Plugin, Server } from '@hapi/hapi';
import Bree from 'bree';

import { cronSchedule } from '../lib/cron.ts';
import { CODE_DIR, codeFile, RUNNING_BUILT } from '../lib/paths.ts';

export const JOBS_DIR = Path.join(CODE_DIR, 'jobs');
/** From the sources a worker starts in jobs/boot.mjs, which registers tsx; the build's jobs are plain JavaScript. */
const BOOT_SCRIPT = RUNNING_BUILT ? undefined : Path.join(CODE_DIR, 'jobs', 'boot.mjs');

/** A job's file as it runs: jobs/<name>.ts, or dist/jobs/<name>.js when built. */
export function jobFile(name: string): string {
    return codeFile(JOBS_DIR, name);
}

export interface ScheduledJob {
    /** The job's name, and its file: jobs/<name>.ts, dist/jobs/<name>.js when built (or `script`). */
    name: string;
    script?: string;
    /** A cron expression, or Bree's `interval` (milliseconds or human text like '10m'). */
    cron?: string;
    /** The cron expression has a leading seconds field. */
    hasSeconds?: boolean;
    /** Several cron expressions (each of five fields, or six with seconds first): the job runs at every time of any. */
    crons?: string[];
    interval?: number | string;
    workerData?: Record<string, unknown>;
}

type MessageListener = (message: unknown) => void;

/**
 * Bree, owned by the server: scheduled jobs (Gitea's cron tasks) and one-off runs (webhook deliveries,
 * the deploy manager's runs) each run in a worker thread with their own database connection.
 */
export class JobRunner {
    readonly bree: Bree;
    readonly #server: Server;
    readonly #listeners = new Map<string, MessageListener>();
    readonly #endings = new Map<string, { resolve: () => void; reject: (error: Error) => void }>();
    readonly #scheduled = new Map<string, ScheduledJob>();
    #counter = 0;
    #stopped = false;
    /** When Bree's schedule started (intervals count from here); undefined until the server starts. */
    startedAt: number | undefined;

    constructor(server: Server) {
        this.#server = server;
        this.bree = new Bree({
            root: false,
            jobs: [],
            logger: false,
            doRootCheck: false,
            outputWorkerMetadata: false,
            workerMessageHandler: ({ name, message }: { name: string; message: unknown }) => this.#onMessage(name, message),
            errorHandler: (error: unknown, metadata: { name?: string } | undefined) => this.#onError(error, metadata?.name),
        });
        this.bree.on('worker deleted', (name: string) => this.#onEnd(name));
    }

    #workerData(script: string, data: Record<string, unknown> = {}): Record<string, unknown> {
        return { ...data, script, config: this.#server.app.config };
    }

    /**
     * Schedules the job; a job of that name already scheduled is replaced (once its worker, if one runs, has ended).
     * Once the schedule has started, the job starts at once.
     */
    async schedule(job: ScheduledJob): Promise<void> {
        const script = job.script ?? jobFile(job.name);
        await this.unschedule(job.name);
        await this.bree.add({
            name: job.name,
            path: BOOT_SCRIPT ?? script,
            cron: job.cron,
            hasSeconds: job.hasSeconds,
            interval: job.crons ? cronSchedule(job.crons) : job.interval,
            timeout: false,
            worker: { workerData: this.#workerData(script, job.workerData) },
        });
        this.#scheduled.set(job.name, job);
        if (this.startedAt !== undefined && !this.#stopped) {
            await this.bree.start(job.name);
        }
    }

    /** Takes the job off the schedule (nothing when it is not on it). */
    async unschedule(name: string): Promise<void> {
        if (this.#scheduled.delete(name)) {
            await this.bree.remove(name);
        }
    }

    /** The server stops: jobs scheduled from now on are no longer started. */
    stop(): void {
        this.#stopped = true;
    }

    /** A scheduled job as it was given to `schedule`, for showing its schedule and next run. */
    scheduled(name: string): ScheduledJob | undefined {
        return this.#scheduled.get(name);
    }

    /** Listens to a scheduled job's messages. */
    onMessage(name: string, listener: MessageListener): void {
        this.#listeners.set(name, listener);
    }

    /** Runs a job file once, now, in its own worker; resolves when the worker ends, rejects when it fails. */
    async runOnce(script: string, data: Record<string, unknown> = {}, listener?: MessageListener): Promise<void> {
        this.#counter += 1;
        const name = `${Path.basename(script, Path.extname(script))}-${process.pid}-${this.#counter}`;
        await this.bree.add({ name, path: BOOT_SCRIPT ?? script, timeout: false, worker: { workerData: this.#workerData(script, data) } });
        if (listener) {
            this.#listeners.set(name, listener);
        }

        const ended = new Promise<void>((resolve, reject) => this.#endings.set(name, { resolve, reject }));
        await this.bree.run(name);
        try {
            await ended;
        } finally {
            this.#listeners.delete(name);
            await this.bree.remove(name).catch(() => undefined);
        }
    }

    #onMessage(name: string, message: unknown): void {
        if (message !== 'done') {
            this.#listeners.get(name)?.(message);
        }
    }

    #onError(error: unknown, name: string | undefined): void {
        const ending = name ? this.#endings.get(name) : undefined;
        const failure = error instanceof Error ? error : new Error(String(error));
        if (ending && name) {
            this.#endings.delete(name);
            ending.reject(failure);
            return;
        }

        this.#server.log(['error', 'jobs'], failure);
    }

    #onEnd(name: string): void {
        const ending = this.#endings.get(name);
        if (ending) {
            this.#endings.delete(name);
            ending.resolve();
        }
    }
}

declare module '../lib/context.ts' {
    interface AppState {
        jobs: JobRunner;
    }
}

/** Starts Bree's schedule when the server starts, and stops every worker when it stops. */
export const jobsPlugin: Plugin<undefined> = {
    name: 'jobs',
    register(server) {
        const runner = new JobRunner(server);
        server.app.jobs = runner;
        server.ext('onPostStart', async () => {
            runner.startedAt = Date.now();
            await runner.bree.start();
        });
        server.ext('onPreStop', async () => {
            runner.stop();
            await runner.bree.stop();
        });
    },
};
