/** What a Bree job (jobs/*.ts) uses: its input, its own database handle, and messages to the server. */
import { parentPort, workerData } from 'node:worker_threads';

import type { Knex } from 'knex';

import type { Config } from './config.ts';
import { createKnex } from './database.ts';

export interface JobData {
    /** The job's own file, imported by jobs/boot.mjs. */
    script: string;
    config: Config;
    [key: string]: unknown;
}

export function jobData<T extends object = Record<string, never>>(): JobData & T {
    return workerData as JobData & T;
}

/** A worker shares nothing with the server: it opens its own connection, and closes it when done. */
export async function withDatabase<T>(work: (knex: Knex) => Promise<T>): Promise<T> {
    const knex = createKnex(jobData().config.databaseUrl);
    try {
        return await work(knex);
    } finally {
        await knex.destroy();
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
