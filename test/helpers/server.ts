import { type ChildProcess, spawn } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Net from 'node:net';
import Os from 'node:os';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';
import knexFactory, { type Knex } from 'knex';

import { type Config, loadConfig } from '../../lib/config.ts';
import { databaseKind, knexConfig } from '../../lib/database.ts';
import { createServer, ROOT_DIR } from '../../server.ts';
import { CRON_TASKS } from '../../plugins/git/domain/cron/tasks.ts';
import { tokens } from '../../plugins/git/domain/identity/token-service.ts';
import { type UserRow, users } from '../../plugins/git/domain/identity/user-service.ts';
import { waitUntil } from './wait.ts';

/** The backend the suite runs on: MariaDB/MySQL when DATABASE_URL is a mysql: URL, else SQLite. */
export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? '';
export const ON_MYSQL = TEST_DATABASE_URL !== '' && databaseKind(TEST_DATABASE_URL) === 'mysql';

export interface TestDatabase {
    databaseUrl: string;
    knex: Knex;
    drop(): Promise<void>;
}

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export async function freePort(): Promise<number> {
    const [port] = await freePorts(1);
    return port as number;
}

/** Whether every port of the block can be bound on 127.0.0.1 now. */
async function blockFree(base: number, count: number): Promise<boolean> {
    for (let port = base; port < base + count; port += 1) {
        const free = await new Promise<boolean>((resolve) => {
            const probe = Net.createServer();
            probe.once('error', () => resolve(false));
            probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
        });
        if (!free) return false;
    }

    return true;
}

/**
 * Ports handed out to the test processes running at once, one claim file each. A port free when a file picks it may
 * be bound only later (an app's, at its deploy), and the file beside it could pick it meanwhile: a claim of a live
 * process is never given out again. A claim whose process is gone is stale and taken over.
 */
export const PORT_CLAIMS_DIR = Path.join(Os.tmpdir(), 'gatehouse-test-port-claims');
const claimed: string[] = [];

function claim(name: string): boolean {
    const file = Path.join(PORT_CLAIMS_DIR, name);
    Fs.mkdirSync(PORT_CLAIMS_DIR, { recursive: true });
    for (let attempt = 0; attempt < 2; attempt += 1) {
        try {
            Fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
            if (claimed.length === 0) process.once('exit', () => claimed.forEach((held) => Fs.rmSync(held, { force: true })));
            claimed.push(file);
            return true;
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || processAlive(Number(Fs.readFileSync(file, 'utf8')))) return false;
            Fs.rmSync(file, { force: true });
        }
    }

    return false;
}

function processAlive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
}

/**
 * Several free ports, distinct from one another, between 10000 and 20000 for a server or service a test starts: below
 * the kernel's ephemeral range, where the local end of any connection (a MariaDB client's, among hundreds) may take a
 * port that listen(0) just gave out before the service binds it, and below the apps' blocks (appHostPorts).
 */
export async function freePorts(count: number): Promise<number[]> {
    const ports = new Set<number>();
    for (let attempt = 0; ports.size < count; attempt += 1) {
        if (attempt >= 1_000) throw new Error(`no ${count} free ports between 10000 and 20000`);
        const port = 10_000 + Crypto.randomInt(0, 10_000);
        if (!ports.has(port) && (await blockFree(port, 1)) && claim(`port-${port}`)) ports.add(port);
    }

    return [...ports];
}

const APP_PORT_BLOCK = 40;

/**
 * The first of a block of free ports for a test file's apps (APPS_FIRST_HOST_PORT, from which each app gets the
 * next): below the kernel's ephemeral range (32768 and up), which the connections and port-0 listeners of the files
 * running beside it draw from, and so would take an app's port between its creation and its deploy. Blocks are
 * aligned and claimed, so two files running at once never share a port.
 */
export async function appHostPorts(): Promise<number> {
    const blocks = (32_000 - 20_000) / APP_PORT_BLOCK;
    for (let attempt = 0; attempt < 100; attempt += 1) {
        const base = 20_000 + Crypto.randomInt(0, blocks) * APP_PORT_BLOCK;
        if ((await blockFree(base, APP_PORT_BLOCK)) && claim(`apps-${base}`)) return base;
    }

    throw new Error(`no block of ${APP_PORT_BLOCK} free ports between 20000 and 32000`);
}

export function temporaryDirectory(prefix = 'gatehouse-test-'): string {
    return Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix));
}

/** A fresh, empty database for one test file: a schema of its own on the MySQL server, or a new SQLite file. */
export async function freshDatabase(dataDir: string): Promise<TestDatabase> {
    if (!ON_MYSQL) {
        const databaseUrl = `sqlite:${Path.join(dataDir, 'test.sqlite')}`;
        const knex = knexFactory(knexConfig(databaseUrl));
        return { databaseUrl, knex, drop: () => knex.destroy() };
    }

    const name = `gatehouse_t${process.pid}_${Crypto.randomBytes(4).toString('hex')}`;
    const adminKnex = knexFactory(knexConfig(TEST_DATABASE_URL));
    try {
        await adminKnex.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    } finally {
        await adminKnex.destroy();
    }

    const url = new URL(TEST_DATABASE_URL);
    url.pathname = `/${name}`;
    const databaseUrl = url.toString();
    const knex = knexFactory(knexConfig(databaseUrl));
    return {
        databaseUrl,
        knex,
        async drop() {
            await knex.destroy();
            const dropper = knexFactory(knexConfig(TEST_DATABASE_URL));
            try {
                await dropper.raw(`DROP DATABASE IF EXISTS \`${name}\``);
            } catch (error) {
                if (!isStrayFileInDatabaseFolder(error)) throw error;
                // The tables are gone; MariaDB left a file of its own in the folder (below), which only it could remove.
                console.warn(`${name}: dropped, but MariaDB left a file in its folder (${(error as Error).message})`);
            } finally {
                await dropper.destroy();
            }
        },
    };
}

/**
 * MariaDB 10.11 sometimes leaves the backup of a table's trigger file (`<table>.TRG-`, written while a second trigger
 * is added to a table) when several connections run DDL at once, as the suite's files migrating side by side do.
 * DROP DATABASE drops every table and then cannot remove the folder (ER_DB_DROP_RMDIR, errno 39): the database is
 * empty, and the test that used it is not at fault.
 */
function isStrayFileInDatabaseFolder(error: unknown): boolean {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return code === 'ER_DB_DROP_RMDIR' && typeof message === 'string' && message.includes('errno: 39');
}

export interface TestServer {
    server: Server;
    config: Config;
    database: TestDatabase;
    dataDir: string;
    cleanup(): Promise<void>;
}

/**
 * Gitea runs eight cron tasks in a worker when it starts: on the suite's many servers that started, that worker was
 * 217 of the 499 workers of a run (each 0.6-1 s of CPU, loading its modules through tsx) and checked nothing.
 * A test server runs none at start, unless its test configures cron (any CRON_* variable): then Gitea's defaults hold.
 */
function noCronAtStart(environment: Record<string, string>): Record<string, string> {
    if (Object.keys(environment).some((name) => name.startsWith('CRON_'))) {
        return {};
    }

    const atStart = CRON_TASKS.filter((task) => task.runAtStart);
    return Object.fromEntries(atStart.map((task) => [`CRON_${task.name.toUpperCase()}_RUN_AT_START`, 'false']));
}

/** A server on a fresh database and data directory, initialized but not listening (use inject, or start it). */
export async function createTestServer(
    environment: Record<string, string> = {},
    existing?: { dataDir: string; database: TestDatabase },
): Promise<TestServer> {
    const dataDir = existing?.dataDir ?? temporaryDirectory();
    const database = existing?.database ?? (await freshDatabase(dataDir));
    const config = loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        DATABASE_URL: database.databaseUrl,
        PUBLIC_URL: 'http://127.0.0.1:3000/',
        LOG_LEVEL: 'silent',
        // Every deploy waits this long after its containers are ready, to see them stay up: none here keeps the
        // suite's many deploys quick; the readiness tests, which are about that wait, set their own.
        DEPLOY_SETTLE_SECONDS: '0',
        // Docker Hub is not reachable from the tests (an app's page reads its image's documentation): a closed port.
        HUB_URL: 'http://127.0.0.1:9',
        HUB_REGISTRY_URL: 'http://127.0.0.1:9',
        // A backup before each change would add a restic snapshot to each of the suite's many redeploys and change
        // what a delete leaves; the tests of backups before changes (backups/before-changes.test.ts) turn it on.
        BACKUP_BEFORE_CHANGES: '0',
        // No nightly backups of the tests' apps (a run at 02:30 would back up whatever a test deployed); the schedule's
        // own test sets one.
        BACKUP_SCHEDULE: 'off',
        // Every deploy answer is checked against its spec's response schema (npm test sets it; a file run alone too).
        GATEHOUSE_CHECK_RESPONSES: process.env.GATEHOUSE_CHECK_RESPONSES ?? '1',
        ...noCronAtStart(environment),
        ...environment,
    });
    const server = await createServer(config, { knex: database.knex, logging: process.env.TEST_LOGGING === '1' });
    return {
        server,
        config,
        database,
        dataDir,
        async cleanup() {
            await server.stop();
            await database.drop();
            Fs.rmSync(dataDir, { recursive: true, force: true });
        },
    };
}

export interface TestUser {
    user: UserRow;
    token: string;
    /** `Authorization: token ...` headers for server.inject or fetch. */
    headers: { authorization: string };
}

let userCounter = 0;

/** A user made through the services (no HTTP), with a token of the given scopes (default all). */
export async function createTestUser(
    server: Server,
    options: { name?: string; admin?: boolean; scopes?: string[]; password?: string; email?: string } = {},
): Promise<TestUser> {
    userCounter += 1;
    const name = options.name ?? `user${userCounter}`;
    const user = await users(server).create({
        username: name,
        email: options.email ?? `${name.toLowerCase()}@example.com`,
        password: options.password ?? 'correct-horse-battery',
        must_change_password: false,
        is_admin: options.admin ?? false,
    });
    const { token } = await tokens(server).create(user, `test-${name}`, options.scopes ?? ['all']);
    return { user, token, headers: { authorization: `token ${token}` } };
}

export interface RunningServer {
    child: ChildProcess;
    output: () => string;
    exited: Promise<number | null>;
}

/** `npm start` as a person runs it: a real process, configured only by the environment. */
export function startServerProcess(environment: Record<string, string>): RunningServer {
    let output = '';
    const child = spawn(process.execPath, ['--import', 'tsx', Path.join(ROOT_DIR, 'server.ts')], {
        cwd: ROOT_DIR,
        env: { PATH: process.env.PATH ?? '', ...environment },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
}

/** A new process compiles the whole server through tsx before it listens: on a busy machine that takes a while. */
export async function waitForHealth(port: number, server: RunningServer): Promise<void> {
    const healthy = () =>
        fetch(`http://127.0.0.1:${port}/api/health`).then(
            (response) => response.ok,
            () => false, // not listening yet
        );
    await waitUntil(`the server on port ${port} answers /api/health`, healthy, { timeoutMs: 90_000, intervalMs: 100 }).catch(
        (error: Error) => {
            throw new Error(`${error.message}; its output:\n${server.output()}`);
        },
    );
}
