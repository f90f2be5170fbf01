import { createRequire } from 'node:module';

import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import { defineService } from './services.ts';

type Versions = ReadonlyMap<string, string>;
type VersionRow = { name: string; version: number | string | bigint };

interface SqliteStatement {
    all(): unknown[];
    get(): unknown;
}

interface SqliteDatabase {
    prepare(sql: string): SqliteStatement;
    pragma(statement: string): unknown;
    close(): void;
}

type SqliteOpen = new (filename: string, options: { fileMustExist: boolean }) => SqliteDatabase;

const VERSIONS_SQL = 'SELECT name, version FROM data_versions';
const READ_ONLY_SQL = /^\s*(select|with|pragma|show|explain)\b/i;

/**
 * The counters as one read found them, and how many writes this process had issued before that read. A request
 * keeps the snapshot its authentication took and reuses it while the process issues no write: the read started
 * after the request arrived, so it holds every write committed before then, and any write since, the request's
 * own included, forces a new read.
 */
export interface VersionSnapshot {
    readonly versions: Versions;
    readonly localWrites: number;
}

/**
 * On SQLite the counters are read through a connection of their own, synchronously: knex's one connection
 * would queue the read behind other queries and cost more than the read itself. `PRAGMA data_version` on this
 * connection changes whenever another connection (every writer, in this process or another) commits, so the
 * table itself is read again only after a commit. In WAL mode the connection sees every commit.
 */
class SqliteVersionReader {
    readonly #database: SqliteDatabase;
    readonly #counters: SqliteStatement;
    readonly #dataVersion: SqliteStatement;
    #seen: { dataVersion: number; versions: Versions } | undefined;

    constructor(filename: string) {
        const open = createRequire(import.meta.url)('better-sqlite3') as SqliteOpen;
        this.#database = new open(filename, { fileMustExist: true });
        this.#database.pragma('busy_timeout = 5000');
        this.#counters = this.#database.prepare(VERSIONS_SQL);
        this.#dataVersion = this.#database.prepare('PRAGMA data_version');
    }

    read(): Versions {
        const { data_version: dataVersion } = this.#dataVersion.get() as { data_version: number };
        if (this.#seen?.dataVersion !== dataVersion) {
            this.#seen = { dataVersion, versions: toVersions(this.#counters.all() as VersionRow[]) };
        }

        return this.#seen.versions;
    }

    close(): void {
        this.#database.close();
    }
}

function sqliteFile(knex: Knex): string | undefined {
    const { client, connection } = knex.client.config as { client: string; connection?: { filename?: string } };
    const filename = connection?.filename;
    return client === 'better-sqlite3' && filename && filename !== ':memory:' ? filename : undefined;
}

/**
 * The write counters of the watched tables (`data_versions`, bumped by triggers on every insert, update and delete).
 * A caller is answered by a read that starts after it asked, so it sees every write committed before it asked, from
 * this process or any other; callers that ask together share one read.
 */
export class DataVersions {
    readonly #knex: Knex;
    readonly #sqliteFile: string | undefined;
    #sqlite: SqliteVersionReader | undefined;
    #nextSqliteRead: Promise<Versions> | undefined;
    #inFlight: Promise<Versions> | undefined;
    #next: Promise<Versions> | undefined;
    #localWrites = 0;
    #counting = false;
    // Every statement this process sends that may write (BEGIN and COMMIT included) makes snapshots stale.
    readonly #countWrite = (query: { sql?: string }) => {
        if (!READ_ONLY_SQL.test(query.sql ?? '')) {
            this.#localWrites += 1;
        }
    };

    constructor(knex: Knex) {
        this.#knex = knex;
        this.#sqliteFile = sqliteFile(knex);
    }

    async snapshot(): Promise<VersionSnapshot> {
        if (!this.#counting) {
            this.#knex.on('query', this.#countWrite);
            this.#counting = true;
        }

        const localWrites = this.#localWrites;
        return { versions: await this.current(), localWrites };
    }

    /** The snapshot's counters while this process has issued no write since it was taken; otherwise a new read. */
    async since(snapshot: VersionSnapshot | undefined): Promise<Versions> {
        return snapshot && this.#counting && snapshot.localWrites === this.#localWrites ? snapshot.versions : await this.current();
    }

    current(): Promise<Versions> {
        return this.#sqliteFile === undefined ? this.#currentThroughKnex() : this.#currentOnSqlite(this.#sqliteFile);
    }

    /** The read runs once the event loop has taken in the requests that arrived with this call, for all of them. */
    #currentOnSqlite(filename: string): Promise<Versions> {
        this.#nextSqliteRead ??= new Promise((resolve, reject) => {
            setImmediate(() => {
                this.#nextSqliteRead = undefined;
                try {
                    this.#sqlite ??= new SqliteVersionReader(filename);
                    resolve(this.#sqlite.read());
                } catch (error) {
                    reject(error as Error);
                }
            });
        });
        return this.#nextSqliteRead;
    }

    /** One read in flight at a time; a caller arriving while one runs waits for the next, which starts after it arrived. */
    #currentThroughKnex(): Promise<Versions> {
        if (!this.#inFlight) {
            this.#inFlight = this.#read().finally(() => {
                this.#inFlight = undefined;
            });
            return this.#inFlight;
        }

        this.#next ??= this.#inFlight
            .catch(() => undefined)
            .then(() => {
                this.#next = undefined;
                return this.#currentThroughKnex();
            });
        return this.#next;
    }

    async #read(): Promise<Versions> {
        return toVersions(await this.#knex('data_versions').select<VersionRow[]>('name', 'version'));
    }

    /** Closes SQLite's own connection; a server started again opens it again. */
    close(): void {
        this.#knex.off('query', this.#countWrite);
        this.#counting = false;
        // Snapshots taken before a stop are never reused after a start.
        this.#localWrites += 1;
        this.#sqlite?.close();
        this.#sqlite = undefined;
    }
}

function toVersions(rows: VersionRow[]): Versions {
    return new Map(rows.map((row) => [row.name, String(row.version)]));
}

export const dataVersions = defineService<DataVersions>('data-versions', (owner) => {
    const versions = new DataVersions(owner.app.knex);
    owner.events.on('stop', () => versions.close());
    return versions;
});

interface Entry<T> {
    stamp: string;
    value: T;
}

/**
 * Results of reads that depend only on the named tables, kept while none of them has been written.
 * The versions are read before the data, so an entry is never newer than its stamp says: a write that lands
 * during a load leaves an entry the next caller reloads. Least recently used entries go first.
 */
export class ReadCache<T> {
    readonly #versions: DataVersions;
    readonly #tables: readonly string[];
    readonly #capacity: number;
    readonly #entries = new Map<string, Entry<T>>();

    constructor(versions: DataVersions, tables: readonly string[], capacity: number) {
        this.#versions = versions;
        this.#tables = tables;
        this.#capacity = capacity;
    }

    /** The counters for a request to carry to its later cached reads; none while the caches are off. */
    async snapshot(): Promise<VersionSnapshot | undefined> {
        return this.#capacity === 0 ? undefined : await this.#versions.snapshot();
    }

    /** `asOf`: the snapshot of the request asking, reused while this process has written nothing since. */
    async get(key: string, load: () => Promise<T>, asOf?: VersionSnapshot): Promise<T> {
        if (this.#capacity === 0) {
            return await load();
        }

        const stamp = this.#stamp(await this.#versions.since(asOf));
        const cached = this.#entries.get(key);
        if (cached) {
            this.#entries.delete(key);
            if (cached.stamp === stamp) {
                this.#entries.set(key, cached);
                return cached.value;
            }
        }

        const value = deepFreeze(await load());
        this.#entries.set(key, { stamp, value });
        if (this.#entries.size > this.#capacity) {
            this.#entries.delete(this.#entries.keys().next().value as string);
        }

        return value;
    }

    #stamp(versions: Versions): string {
        return this.#tables
            .map((table) => {
                const version = versions.get(table);
                if (version === undefined) {
                    throw new Error(`table ${table} has no write counter in data_versions`);
                }

                return version;
            })
            .join('.');
    }
}

/** Cached values are shared by every caller, so none may change one: a write to a frozen object throws (ESM is strict). */
function deepFreeze<T>(value: T): T {
    if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
        Object.freeze(value);
        for (const child of Object.values(value)) {
            deepFreeze(child);
        }
    }

    return value;
}

/** A cache for one service of one server, over the given tables. */
export function readCache<T>(server: Server, tables: readonly string[]): ReadCache<T> {
    return new ReadCache<T>(dataVersions(server), tables, server.app.config.readCacheEntries);
}
