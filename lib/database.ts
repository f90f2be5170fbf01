import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import knexFactory, { type Knex } from 'knex';

import { CODE_DIR, CODE_EXTENSION } from './paths.ts';

export const MIGRATIONS_DIR = Path.join(CODE_DIR, 'migrations');

export type DatabaseKind = 'sqlite' | 'mysql';

export function databaseKind(databaseUrl: string): DatabaseKind {
    return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'mysql';
}

/**
 * knex options for `sqlite:<file>` (better-sqlite3) or `mysql://user:password@host:port/database` (mysql2). A failed
 * statement's error carries the statement with its placeholders, not with its values inlined (lib/logging.ts).
 */
export function knexConfig(databaseUrl: string): Knex.Config {
    if (databaseKind(databaseUrl) === 'sqlite') {
        const filename = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
        const onDisk = filename !== ':memory:';
        if (onDisk) {
            createPrivateFile(filename);
        }

        return {
            client: 'better-sqlite3',
            connection: { filename },
            useNullAsDefault: true,
            compileSqlOnError: false,
            pool: {
                min: 1,
                max: 1,
                afterCreate(connection: SqliteConnection, done: (error: Error | null) => void) {
                    reuseStatementsAndLockEarly(connection);
                    connection.pragma('journal_mode = WAL');
                    if (onDisk) {
                        narrowSqliteFileModes(filename);
                    }

                    // WAL's recommended durability: a commit never corrupts the database; a power cut may lose the last commits.
                    connection.pragma('synchronous = NORMAL');
                    connection.pragma('foreign_keys = ON');
                    connection.pragma('busy_timeout = 5000');
                    done(null);
                },
            },
        };
    }

    const url = new URL(databaseUrl.replace(/^mariadb:/, 'mysql:'));
    return {
        client: 'mysql2',
        compileSqlOnError: false,
        connection: {
            host: url.hostname,
            port: url.port ? Number(url.port) : 3306,
            user: decodeURIComponent(url.username),
            password: decodeURIComponent(url.password),
            database: url.pathname.replace(/^\//, ''),
            charset: 'utf8mb4',
            timezone: 'Z',
            supportBigNumbers: true,
        },
        pool: { min: 0, max: 10 },
    };
}

/** The database holds every secret the server keeps, sealed or hashed: its folder is 0700, its files 0600. */
const PRIVATE_FOLDER_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

/**
 * Made before better-sqlite3 opens the file, so that it never exists with a wider mode (the umask can only take
 * bits away). SQLite gives the -wal and -shm files the mode of the database file.
 */
function createPrivateFile(filename: string): void {
    Fs.mkdirSync(Path.dirname(Path.resolve(filename)), { recursive: true, mode: PRIVATE_FOLDER_MODE });
    try {
        Fs.closeSync(Fs.openSync(filename, 'wx', PRIVATE_FILE_MODE));
    } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
            throw error;
        }
    }
}

/** Files an earlier version created 0644 are narrowed on open; a file another user owns is left as it is. */
function narrowSqliteFileModes(filename: string): void {
    for (const path of [filename, `${filename}-wal`, `${filename}-shm`]) {
        try {
            Fs.chmodSync(path, PRIVATE_FILE_MODE);
        } catch (error) {
            const code = (error as NodeJS.ErrnoException).code;
            if (code !== 'ENOENT' && code !== 'EPERM') {
                throw error;
            }
        }
    }
}

interface SqliteConnection {
    pragma(statement: string): unknown;
    prepare(sql: string): unknown;
}

const STATEMENT_CACHE_SIZE = 512;

/**
 * knex prepares every query anew; better-sqlite3 statements can be reused, and preparing is a good part
 * of a small query's cost. The cache keeps the most recent statements of this connection by their SQL.
 *
 * knex opens transactions with a deferred BEGIN. Workers have connections of their own, and a deferred
 * transaction that reads, then writes after another connection wrote, fails at once with "database is
 * locked" (SQLite cannot wait there without risking a deadlock). BEGIN IMMEDIATE takes the write lock
 * first, so the busy timeout applies instead.
 */
function reuseStatementsAndLockEarly(connection: SqliteConnection): void {
    const prepare = connection.prepare.bind(connection);
    const statements = new Map<string, unknown>();
    connection.prepare = (text: string) => {
        const sql = text === 'BEGIN;' ? 'BEGIN IMMEDIATE;' : text;
        let statement = statements.get(sql);
        if (statement === undefined) {
            statement = prepare(sql);
            if (statements.size >= STATEMENT_CACHE_SIZE) {
                statements.delete(statements.keys().next().value as string);
            }

            statements.set(sql, statement);
        }

        return statement;
    };
}

interface MigrationModule {
    up(knex: Knex): Promise<void>;
    down(knex: Knex): Promise<void>;
}

/** Migrations are modules named `<timestamp>_<what>.ts` (`.js` in the build), imported as ES modules. */
export class FolderMigrationSource implements Knex.MigrationSource<string> {
    constructor(private readonly folder: string = MIGRATIONS_DIR) {}

    async getMigrations(): Promise<string[]> {
        return Fs.readdirSync(this.folder)
            .filter((file) => /^\d+_[\w-]+\.[jt]s$/.test(file) && file.endsWith(CODE_EXTENSION))
            .sort();
    }

    /** The name knex records is the source's (`.ts`), whether the build or the sources ran the migration. */
    getMigrationName(migration: string): string {
        return migration.replace(/\.js$/, '.ts');
    }

    async getMigration(migration: string): Promise<MigrationModule> {
        return (await import(pathToFileURL(Path.join(this.folder, migration)).href)) as MigrationModule;
    }
}

export function createKnex(databaseUrl: string): Knex {
    return knexFactory(knexConfig(databaseUrl));
}

export async function migrate(knex: Knex): Promise<void> {
    await knex.migrate.latest({ migrationSource: new FolderMigrationSource() });
}

/** Whether a write failed on a unique index or key, on either database. */
export function isUniqueViolation(error: unknown): boolean {
    const code = (error as { code?: unknown } | null)?.code;
    return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** MariaDB chose this statement's transaction as a deadlock's victim and rolled it back: trying again is the answer. */
export function isDeadlock(error: unknown): boolean {
    return (error as { code?: unknown } | null)?.code === 'ER_LOCK_DEADLOCK';
}

/** Runs `work`, again when MariaDB makes it a deadlock's victim (at most `attempts` times in all). */
export async function retryingDeadlocks<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
        try {
            return await work();
        } catch (error) {
            if (!isDeadlock(error) || attempt >= attempts) throw error;
        }
    }
}

/** Milliseconds since the epoch (UTC): the one way times are stored, on both databases. */
export function now(): number {
    return Date.now();
}

/** RFC 3339 in UTC, without fractions of a second, as Gitea writes times. */
export function toRfc3339(epochMs: number | null | undefined): string {
    if (epochMs === null || epochMs === undefined) {
        return '0001-01-01T00:00:00Z';
    }

    const iso = new Date(Number(epochMs)).toISOString();
    // 2026-11-22T05:09:09.123Z; years past 9999 have a longer form, which keeps its milliseconds off the same way.
    return `${iso.slice(0, -5)}Z`;
}

/**
 * Case-insensitive substring match over columns, the same on SQLite and MySQL: the text in lower case, LOWER on
 * the column where it matters, and `!` as the LIKE escape character (a backslash would need different quoting on
 * each). SQLite's LIKE already ignores ASCII case and its LOWER folds nothing else, so there LOWER would only cost
 * a call per row; MySQL's LIKE follows the column's collation, which may be binary.
 */
export function whereContains(query: Knex.QueryBuilder, columns: string[], text: string): Knex.QueryBuilder {
    const pattern = `%${text.toLowerCase().replace(/[!%_]/g, (match) => `!${match}`)}%`;
    const condition = isSqlite(query) ? `?? LIKE ? ESCAPE '!'` : `LOWER(??) LIKE ? ESCAPE '!'`;
    return query.where((where) => {
        for (const column of columns) {
            where.orWhereRaw(condition, [column, pattern]);
        }
    });
}

function isSqlite(query: Knex.QueryBuilder): boolean {
    // The builder's client is not in knex's public types.
    return (query as unknown as { client: { config: Knex.Config } }).client.config.client === 'better-sqlite3';
}
