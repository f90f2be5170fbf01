import Crypto from 'node:crypto';
import Net from 'node:net';

import type { Knex } from 'knex';

import { retryingDeadlocks } from './database.ts';

import { TooManyRequestsError } from './errors.ts';
import type { HashPriority } from './passwords.ts';

/** The limits of a FailureThrottle (LOGIN_* in the configuration). */
export interface ThrottleLimits {
    /** Failures older than this are forgotten. */
    windowSeconds: number;
    /** Failures of one account from one address before that pair is refused. */
    maxFailures: number;
    /** Failures of one account from every address before its back-off starts. */
    maxFailuresPerAccount: number;
    /** Failures from one address, whatever the accounts, before the address is refused. */
    maxFailuresPerAddress: number;
    /** The back-off's first wait; each further failure doubles it, up to the window. */
    backoffSeconds: number;
}

export class TooManyAttemptsError extends TooManyRequestsError {
    constructor(retryAfterSeconds: number) {
        super('too many failed attempts; try again later', Math.max(1, Math.ceil(retryAfterSeconds)));
    }
}

/** One password or code check under way: settle it with fail or succeed, or end it without a verdict. */
export interface ThrottledAttempt {
    /** The account has signed in from this address before: the attempt may go ahead of unknown ones. */
    readonly trusted: boolean;
    fail(): void;
    succeed(): void;
    end(): void;
}

/** An address that signed in to an account is remembered as the owner's for this long. */
const KNOWN_ADDRESS_MS = 30 * 24 * 3_600_000;
/** Keys kept per table; past it, forgotten entries go first, then the least recently touched. */
const MAX_KEYS = 100_000;
/** Failures the account back-off remembers beyond its threshold: 2^32 waits are past any window. */
const BACKOFF_STEPS = 32;

interface Tally {
    /** When the recent failures happened, oldest first. */
    failures: number[];
    /** Checks begun and not yet settled: they count as failures until they are, so a burst cannot slip past. */
    pending: number;
}

/** A Map of bounded size that keeps its most recently touched keys. */
class BoundedTable<V> {
    readonly #entries = new Map<string, V>();

    constructor(readonly isStale: (value: V) => boolean) {}

    get(key: string): V | undefined {
        return this.#entries.get(key);
    }

    set(key: string, value: V): void {
        this.#entries.delete(key);
        if (this.#entries.size >= MAX_KEYS) {
            this.#makeRoom();
        }

        this.#entries.set(key, value);
    }

    delete(key: string): void {
        this.#entries.delete(key);
    }

    get size(): number {
        return this.#entries.size;
    }

    #makeRoom(): void {
        for (const [key, value] of this.#entries) {
            if (this.isStale(value)) {
                this.#entries.delete(key);
            }
        }

        const excess = this.#entries.size - Math.floor(MAX_KEYS * 0.9);
        let dropped = 0;
        for (const key of this.#entries.keys()) {
            if (dropped >= excess) {
                break;
            }

            this.#entries.delete(key);
            dropped += 1;
        }
    }
}

/** The network an address's failures are counted under: an IPv6 client controls its whole /64. */
export function addressNetwork(address: string): string {
    if (Net.isIP(address) !== 6) {
        return address;
    }

    return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

function ipv6Groups(address: string): string[] {
    let text = address.toLowerCase().split('%')[0] ?? '';
    const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
    if (dotted) {
        const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
        text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    }

    const [head = '', tail] = text.split('::');
    const first = head === '' ? [] : head.split(':');
    const last = tail === undefined || tail === '' ? [] : tail.split(':');
    const gap = tail === undefined ? [] : Array<string>(8 - first.length - last.length).fill('0');
    return [...first, ...gap, ...last].map((group) => parseInt(group, 16).toString(16));
}

/**
 * Where the failures and the owners' addresses live so that every process on one database counts the same: rows of
 * `auth_failures` and `auth_known_addresses`, keyed by a digest of the scope (which service), account and address.
 */
export class SharedFailures {
    constructor(
        private readonly knex: Knex,
        private readonly scope: string,
    ) {}

    #hash(key: string): string {
        return Crypto.createHash('sha256').update(`${this.scope}\n${key}`).digest('hex');
    }

    /** Each key's failures after `since`, oldest first. */
    async failuresAfter(keys: readonly string[], since: number): Promise<number[][]> {
        const hashes = keys.map((key) => this.#hash(key));
        const rows = (await this.knex('auth_failures')
            .whereIn('key_hash', hashes)
            .where('at', '>', since)
            .orderBy('at')
            .select('key_hash', 'at')) as Array<{ key_hash: string; at: number | string }>;
        return hashes.map((hash) => rows.filter((row) => row.key_hash === hash).map((row) => Number(row.at)));
    }

    /** A failure of each key at `at`; what is older than `since` goes meanwhile. */
    async addFailure(keys: readonly string[], at: number, since: number): Promise<void> {
        const hashes = keys.map((key) => this.#hash(key));
        // Sign-ins at once on several processes may make MariaDB pick one of these as a deadlock's victim.
        await retryingDeadlocks(() => this.knex('auth_failures').whereIn('key_hash', hashes).where('at', '<=', since).delete());
        await retryingDeadlocks(() => this.knex('auth_failures').insert(hashes.map((hash) => ({ key_hash: hash, at }))));
    }

    async forgetFailures(key: string): Promise<void> {
        await retryingDeadlocks(() =>
            this.knex('auth_failures')
                .where({ key_hash: this.#hash(key) })
                .delete(),
        );
    }

    async knownAt(key: string): Promise<number | undefined> {
        const row = (await this.knex('auth_known_addresses')
            .where({ key_hash: this.#hash(key) })
            .first('at')) as { at: number | string } | undefined;
        return row ? Number(row.at) : undefined;
    }

    async setKnown(key: string, at: number): Promise<void> {
        const hash = this.#hash(key);
        const updated = await this.knex('auth_known_addresses').where({ key_hash: hash }).update({ at });
        if (updated === 0) {
            await this.knex('auth_known_addresses')
                .insert({ key_hash: hash, at })
                .catch(async () => await this.knex('auth_known_addresses').where({ key_hash: hash }).update({ at }));
        }
    }
}

/** The pair's, the account's and the address's keys of an attempt. */
function throttleKeys(account: string, address: string): [string, string, string] {
    const name = account.trim().toLowerCase().slice(0, 320);
    const network = addressNetwork(address);
    return [`pair\n${name}\n${network}`, `account\n${name}`, `address\n${network}`];
}

/**
 * Counts failed password and code checks, and refuses further checks cheaply (before any hashing) with
 * TooManyAttemptsError:
 * - one account from one address (the pair): refused after `maxFailures` failures within the window, until the
 *   oldest of them is older than the window; a success forgets the pair's failures;
 * - one address across accounts: refused after `maxFailuresPerAddress`;
 * - one account across addresses: after `maxFailuresPerAccount`, each further check must wait `backoffSeconds`,
 *   doubled for every failure past the threshold, up to the window: a spread-out guesser gets about one guess a
 *   window, but is never locked out for good.
 * An address that has signed in to an account within 30 days is the owner's: for that pair only its own failures
 * count, so others' failures, from elsewhere or from the same shared address, never keep the owner out.
 * Kept in memory, so a restart forgets (that errs on the side of letting people in); with `shared` (SharedFailures)
 * the failures and owners' addresses are kept in the database, and every process on it counts the same ones: each
 * guarded check reads them first, and a failure is written before its check is settled.
 */
export class FailureThrottle {
    readonly #tallies: BoundedTable<Tally>;
    readonly #knownAddresses: BoundedTable<number>;
    readonly #shared: SharedFailures | undefined;

    constructor(
        readonly limits: ThrottleLimits,
        readonly clock: () => number = Date.now,
        shared?: SharedFailures,
    ) {
        this.#shared = shared;
        this.#tallies = new BoundedTable((tally) => tally.pending === 0 && this.#recent(tally) === 0);
        this.#knownAddresses = new BoundedTable((at) => this.clock() - at >= KNOWN_ADDRESS_MS);
    }

    get #windowMs(): number {
        return this.limits.windowSeconds * 1000;
    }

    /** Starts a check of `account`'s password or code from `address`; throws TooManyAttemptsError when refused. */
    begin(account: string, address: string): ThrottledAttempt {
        const keys = throttleKeys(account, address);
        const tallies = keys.map((key) => this.#tally(key));
        const [pair, perAccount, perAddress] = tallies as [Tally, Tally, Tally];
        const knownAt = this.#knownAddresses.get(keys[0] ?? '');
        const trusted = knownAt !== undefined && this.clock() - knownAt < KNOWN_ADDRESS_MS;
        const wait =
            this.#limitWait(pair, this.limits.maxFailures, true) ??
            (trusted
                ? undefined
                : (this.#limitWait(perAddress, this.limits.maxFailuresPerAddress, false) ?? this.#backoffWait(perAccount)));
        if (wait !== undefined) {
            keys.forEach((key, index) => this.#forgetIfIdle(key, tallies[index]));
            throw new TooManyAttemptsError(wait / 1000);
        }

        return this.#attempt(keys, tallies, trusted);
    }

    /**
     * Runs a password or code check under the limits: refused before it starts when over them, and a falsy result
     * counted as a failure. A truthy one forgets the pair's failures and remembers the address as the owner's,
     * unless `completesSignIn` says it does not (a first factor that a second must follow).
     */
    async guard<T>(
        account: string,
        address: string,
        check: (priority: HashPriority) => Promise<T>,
        completesSignIn: (result: NonNullable<T>) => boolean = () => true,
    ): Promise<T> {
        const keys = throttleKeys(account, address);
        await this.#readShared(keys);
        const attempt = this.begin(account, address);
        try {
            const result = await check(attempt.trusted ? 'high' : 'normal');
            if (!result) {
                // Written before the check is settled: until then it counts here as under way, and elsewhere once written.
                await this.#shared?.addFailure(keys, this.clock(), this.clock() - this.#windowMs);
                attempt.fail();
            } else if (completesSignIn(result)) {
                await this.#shared?.forgetFailures(keys[0]);
                await this.#shared?.setKnown(keys[0], this.clock());
                attempt.succeed();
            }

            return result;
        } finally {
            attempt.end();
        }
    }

    /** With a shared store, the keys' failures and the pair's owner as every process has recorded them. */
    async #readShared(keys: readonly [string, string, string]): Promise<void> {
        const shared = this.#shared;
        if (!shared) {
            return;
        }

        const [failures, knownAt] = await Promise.all([shared.failuresAfter(keys, this.clock() - this.#windowMs), shared.knownAt(keys[0])]);
        keys.forEach((key, index) => {
            const tally = this.#tally(key);
            tally.failures = failures[index] ?? [];
            this.#forgetIfIdle(key, tally);
        });
        if (knownAt === undefined) {
            this.#knownAddresses.delete(keys[0]);
        } else {
            this.#knownAddresses.set(keys[0], knownAt);
        }
    }

    #attempt(keys: readonly string[], tallies: Tally[], trusted: boolean): ThrottledAttempt {
        for (const tally of tallies) {
            tally.pending += 1;
        }

        let settled = false;
        const settle = (record: (tally: Tally, index: number) => void): void => {
            if (settled) {
                return;
            }

            settled = true;
            tallies.forEach((tally, index) => {
                tally.pending -= 1;
                record(tally, index);
                this.#forgetIfIdle(keys[index] ?? '', tally);
            });
        };
        return {
            trusted,
            fail: () =>
                settle((tally, index) => {
                    tally.failures.push(this.clock());
                    tally.failures.splice(0, tally.failures.length - this.#kept());
                    this.#tallies.set(keys[index] ?? '', tally);
                }),
            succeed: () =>
                settle((tally, index) => {
                    if (index === 0) {
                        tally.failures = [];
                        this.#knownAddresses.set(keys[0] ?? '', this.clock());
                    }
                }),
            end: () => settle(() => undefined),
        };
    }

    /**
     * Milliseconds to wait when `tally` is at `limit`. Checks under way count too; for a pair only once it has failed,
     * so that an owner's requests side by side (Basic on every request) are not refused.
     */
    #limitWait(tally: Tally, limit: number, pendingOnlyAfterFailure: boolean): number | undefined {
        const recent = this.#recent(tally);
        if (recent >= limit) {
            const oldestThatCounts = tally.failures[tally.failures.length - limit] ?? this.clock();
            return oldestThatCounts + this.#windowMs - this.clock();
        }

        const pendingCounts = !pendingOnlyAfterFailure || recent > 0;
        return pendingCounts && recent + tally.pending >= limit ? 1000 : undefined;
    }

    #backoffWait(tally: Tally): number | undefined {
        const recent = this.#recent(tally);
        const threshold = this.limits.maxFailuresPerAccount;
        if (recent + tally.pending < threshold) {
            return undefined;
        }

        if (tally.pending > 0) {
            return 1000;
        }

        const delay = Math.min(this.limits.backoffSeconds * 1000 * 2 ** (recent - threshold), this.#windowMs);
        const wait = (tally.failures.at(-1) ?? 0) + delay - this.clock();
        return wait > 0 ? wait : undefined;
    }

    /** How many failures are within the window (older ones are dropped). */
    #recent(tally: Tally): number {
        const since = this.clock() - this.#windowMs;
        const firstRecent = tally.failures.findIndex((at) => at > since);
        tally.failures.splice(0, firstRecent < 0 ? tally.failures.length : firstRecent);
        return tally.failures.length;
    }

    #kept(): number {
        const { maxFailures, maxFailuresPerAccount, maxFailuresPerAddress } = this.limits;
        return Math.max(maxFailures, maxFailuresPerAddress, maxFailuresPerAccount + BACKOFF_STEPS);
    }

    #tally(key: string): Tally {
        let tally = this.#tallies.get(key);
        if (!tally) {
            tally = { failures: [], pending: 0 };
            this.#tallies.set(key, tally);
        }

        return tally;
    }

    #forgetIfIdle(key: string, tally: Tally | undefined): void {
        if (tally && tally.pending === 0 && this.#recent(tally) === 0 && this.#tallies.get(key) === tally) {
            this.#tallies.delete(key);
        }
    }

    /** Keys tracked now (for tests of the memory bound). */
    get trackedKeys(): number {
        return this.#tallies.size;
    }
}
