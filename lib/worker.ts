/** What a Bree job (jobs/*.ts) uses: its input, its own database handle, and messages to the server. */
import { parentPort, workerData } from 'node:worker_threads';

import type { Knex } from 'knex';

import type { Config } from './config.ts';

export interface JobData {
    /** The job's own file, imported by jobs/boot.mjs. */
    script: string;
    config: Config;
    [key: string]: unknown;
}

export function jobData<T extends object = Record<string, never>>(): JobData & T {
    return workerData as JobData & T;
}

async function openDatabase(): Promise<Knex> {
    // Imported when needed: knex takes a sixth of a second to load, which a run's first step need not wait for.
    const { createKnex } = await import('./database.ts');
    return createKnex(jobData().config.databaseUrl);
}

/** A worker shares nothing with the server: it opens its own connection, and closes it when done. */
export async function withDatabase<T>(work: (knex: Knex) => Promise<T>): Promise<T> {
    const knex = await openDatabase();
    try {
        return await work(knex);
    } finally {
        await knex.destroy();
    }
}

/** Like withDatabase, but the connection is opened on first use only. */
export async function withLazyDatabase<T>(work: (database: () => Promise<Knex>) => Promise<T>): Promise<T> {
    let opened: Promise<Knex> | undefined;
    try {
        return await work(() => (opened ??= openDatabase()));
    } finally {
        if (opened) {
            await (await opened).destroy();
        }
    }
}

export function post(message: unknown): void {
    parentPort?.postMessage(message);
}

/** Tells Bree the job ended well; a thrown error or a non-zero exit tells it otherwise. */
export function done(): void {
    if (parentPort) {
        parentPort.postMessage('done');
    } else {
        process.exit(0);
    }
}
