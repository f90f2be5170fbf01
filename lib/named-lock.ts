/**
 * A lock shared by every process and worker on one database: a row in `named_locks`, inserted to take it (the
 * primary key lets one insert win) and deleted to give it back. A holder that died leaves a row whose expiry
 * lets the next one in.
 */
import Crypto from 'node:crypto';

import type { Knex } from 'knex';

import { isDeadlock, isUniqueViolation } from './database.ts';

export interface NamedLockOptions {
    /** How long a holder may keep the lock before others may take it. */
    leaseMs?: number;
    /** How long to wait for it before giving up. */
    waitMs?: number;
}

const POLL_MS = 25;

async function tryTake(knex: Knex, name: string, holder: string, leaseMs: number): Promise<boolean> {
    const moment = Date.now();
    try {
        await knex('named_locks').where({ name }).andWhere('expires_at', '<', moment).delete();
        await knex('named_locks').insert({ name, holder, expires_at: moment + leaseMs });
        return true;
    } catch (error) {
        // Another taker's insert won, or MariaDB rolled this one back as a deadlock's victim: not taken, try again.
        if (isUniqueViolation(error) || isDeadlock(error)) {
            return false;
        }

        throw error;
    }
}

export async function withNamedLock<T>(knex: Knex, name: string, work: () => Promise<T>, options: NamedLockOptions = {}): Promise<T> {
    const leaseMs = options.leaseMs ?? 60_000;
    const deadline = Date.now() + (options.waitMs ?? 120_000);
    const holder = Crypto.randomUUID();
    while (!(await tryTake(knex, name, holder, leaseMs))) {
        if (Date.now() > deadline) {
            throw new Error(`waited too long for the lock ${name}`);
        }

        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }

    try {
        return await work();
    } finally {
        await knex('named_locks').where({ name, holder }).delete();
    }
}
