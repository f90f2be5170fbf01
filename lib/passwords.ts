import Os from 'node:os';

import argon2 from 'argon2';

import { TooManyRequestsError } from './errors.ts';

/**
 * argon2id with OWASP's minimum profile (19 MiB, 2 passes, 1 lane): about 20 ms a hash on one core,
 * so logins stay cheap for the server and costly for anyone guessing offline.
 */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** `high`: a caller known to be genuine (signed in before from this address, or changing a password it proved). */
export type HashPriority = 'high' | 'normal';

export class HashingBusyError extends TooManyRequestsError {
    constructor() {
        super('too many sign-ins at once; try again shortly', 1);
    }
}

interface Waiter {
    start: () => void;
}

/**
 * At most `limit` password hashes run at once; the rest wait in line, `high` ones ahead of `normal` ones, and a
 * `normal` one finding `maxWaiting` others already waiting is refused at once. argon2 runs on libuv's thread pool,
 * which file system calls and DNS look-ups share, so a flood of sign-ins must not take every thread.
 */
export class HashingPool {
    #active = 0;
    #peak = 0;
    #runs = 0;
    readonly #waiting: Record<HashPriority, Waiter[]> = { high: [], normal: [] };

    constructor(
        readonly limit: number,
        readonly maxWaiting: number,
    ) {}

    /** Hashes running now. */
    get active(): number {
        return this.#active;
    }

    get waiting(): number {
        return this.#waiting.high.length + this.#waiting.normal.length;
    }

    /** The most hashes that ever ran at once, since the last resetStatistics. */
    get peak(): number {
        return this.#peak;
    }

    /** How many hashes have started, since the last resetStatistics. */
    get runs(): number {
        return this.#runs;
    }

    resetStatistics(): void {
        this.#peak = this.#active;
        this.#runs = 0;
    }

    async run<T>(work: () => Promise<T>, priority: HashPriority = 'normal'): Promise<T> {
        await this.#acquire(priority);
        this.#runs += 1;
        this.#peak = Math.max(this.#peak, this.#active);
        try {
            return await work();
        } finally {
            this.#release();
        }
    }

    async #acquire(priority: HashPriority): Promise<void> {
        if (this.#active < this.limit && this.waiting === 0) {
            this.#active += 1;
            return;
        }

        if (priority === 'normal' && this.waiting >= this.maxWaiting) {
            throw new HashingBusyError();
        }

        // The slot is handed over by #release, still counted as active, so that no newcomer slips in between.
        await new Promise<void>((start) => this.#waiting[priority].push({ start }));
    }

    #release(): void {
        const waiter = this.#waiting.high.shift() ?? this.#waiting.normal.shift();
        if (waiter) {
            waiter.start();
        } else {
            this.#active -= 1;
        }
    }
}

/** Leaves at least one of libuv's threads (UV_THREADPOOL_SIZE, 4 by default) to everything else. */
function defaultLimit(): number {
    const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    return Math.max(1, Math.min(Os.availableParallelism(), threads - 1));
}

/** One pool for the process: the thread pool it protects is the process's. */
export const passwordHashing = new HashingPool(defaultLimit(), 256);

export async function hashPassword(password: string): Promise<string> {
    return await passwordHashing.run(() => argon2.hash(password, ARGON2_OPTIONS), 'high');
}

export async function verifyPassword(hash: string, password: string, priority: HashPriority = 'normal'): Promise<boolean> {
    if (!hash) {
        return false;
    }

    try {
        return await passwordHashing.run(() => argon2.verify(hash, password), priority);
    } catch (error) {
        if (error instanceof HashingBusyError) {
            throw error;
        }

        return false;
    }
}
