import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';
import knexFactory, { type Knex } from 'knex';

import { sha256Hex } from '../lib/crypto.ts';
import { knexConfig } from '../lib/database.ts';

import { freePort } from '../test/helpers/server.ts';

export const ROOT_DIR = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every load run is bounded: this many seconds, this many connections, loopback only. */
export const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = 16;

export interface Process {
    port: number;
    pid: number;
    stop(): Promise<void>;
}

async function waitUntilListening(port: number, path: string, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
        if (child.exitCode !== null) {
            throw new Error(`process exited with ${child.exitCode}`);
        }

        try {
            if ((await fetch(`http://127.0.0.1:${port}${path}`)).ok) {
                return;
            }
        } catch {
            // not yet
        }

        await new Promise((resolve) => setTimeout(resolve, 100));
    }

    throw new Error(`nothing answered on port ${port}`);
}

/** Starts a TypeScript entry point in its own process (its own core), answering on `readyPath`. */
export async function startProcess(entry: string, environment: Record<string, string>, readyPath: string): Promise<Process> {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', entry], {
        cwd: ROOT_DIR,
        env: { PATH: process.env.PATH ?? '', ...environment, PORT: String(port), HOST: '127.0.0.1' },
        stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitUntilListening(port, readyPath, child);
    return {
        port,
        pid: child.pid ?? 0,
        async stop() {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            await exited;
        },
    };
}

/** Gatehouse as `npm start` runs it, on a fresh data directory (SQLite unless a DATABASE_URL is given). */
export async function startGatehouse(environment: Record<string, string> = {}): Promise<Process & { dataDir: string }> {
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-'));
    const process_ = await startProcess(
        Path.join(ROOT_DIR, 'server.ts'),
        { DATA_DIR: dataDir, LOG_LEVEL: 'info', ...environment },
        '/api/health',
    );
    return {
        ...process_,
        dataDir,
        async stop() {
            await process_.stop();
            Fs.rmSync(dataDir, { recursive: true, force: true });
        },
    };
}

/** An administrator and an access token made with the gatehouse command, as a person would make them. */
export function adminToken(dataDir: string, environment: Record<string, string> = {}): string {
    const run = (...args: string[]) => {
        const result = spawnSync(process.execPath, [Path.join(ROOT_DIR, 'bin', 'gatehouse.js'), 'admin', 'user', ...args], {
            cwd: ROOT_DIR,
            env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, ...environment },
            encoding: 'utf8',
        });
        if (result.status !== 0) {
            throw new Error(`gatehouse admin user ${args[0]}: ${result.stderr}`);
        }

        return result.stdout.trim();
    };
    run('create', '--username', 'benchroot', '--password', 'bench-password-1', '--email', 'benchroot@example.com', '--admin');
    return run('generate-access-token', '--username', 'benchroot', '--token-name', 'bench', '--scopes', 'all', '--raw');
}

export interface LoadResult {
    requestsPerSecond: number;
    p50: number;
    p99: number;
    errors: number;
    non2xx: number;
}

interface LoadOptions {
    url: string;
    method?: 'GET' | 'POST';
    body?: string;
    headers?: Record<string, string>;
    connections?: number;
    seconds?: number;
}

export async function load(options: LoadOptions): Promise<LoadResult> {
    const result = await autocannon({
        url: options.url,
        method: options.method ?? 'GET',
        body: options.body,
        headers: options.headers,
        connections: options.connections ?? CONNECTIONS,
        duration: options.seconds ?? LOAD_SECONDS,
    });
    return {
        requestsPerSecond: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.timeouts,
        non2xx: result.non2xx,
    };
}

export function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** The middle of timed rounds, the mean of the two middle ones for an even count; a round not measured (NaN) is left out. */
export function medianOfRounds(values: number[]): number {
    const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
        ? (sorted[middle] ?? Number.NaN)
        : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2;
}

/** Milliseconds as the run benchmarks print them: `1.23 s`. */
export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Rounds as one figure: the median rate and p50, the worst p99, every error counted. */
export function combined(rounds: LoadResult[]): LoadResult {
    return {
        requestsPerSecond: median(rounds.map((round) => round.requestsPerSecond)),
        p50: median(rounds.map((round) => round.p50)),
        p99: Math.max(...rounds.map((round) => round.p99)),
        errors: rounds.reduce((sum, round) => sum + round.errors, 0),
        non2xx: rounds.reduce((sum, round) => sum + round.non2xx, 0),
    };
}

/** A round is half a single load's time, so that a comparison takes little longer than two loads did. */
export function roundSeconds(loadSeconds: number): number {
    return Math.max(2, Math.round(loadSeconds / 2));
}

/** Each side of a comparison runs this many rounds, alternating with the other. */
export const ROUNDS = 3;

/**
 * Two measurements taken fairly on a machine whose speed drifts: ROUNDS rounds of each, alternating which goes
 * first; each round is given its length in seconds.
 */
export async function alternatingRounds<A, B>(
    first: (seconds: number) => Promise<A>,
    second: (seconds: number) => Promise<B>,
    seconds = roundSeconds(LOAD_SECONDS),
): Promise<[A[], B[]]> {
    const firstRounds: A[] = [];
    const secondRounds: B[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
        if (round % 2 === 0) {
            firstRounds.push(await first(seconds));
            secondRounds.push(await second(seconds));
        } else {
            secondRounds.push(await second(seconds));
            firstRounds.push(await first(seconds));
        }
    }

    return [firstRounds, secondRounds];
}

/** Two loads, both warmed up, then in alternating rounds; each side's rounds combined. */
export async function alternatingLoads(first: LoadOptions, second: LoadOptions): Promise<[LoadResult, LoadResult]> {
    await load({ ...first, seconds: 2 });
    await load({ ...second, seconds: 2 });
    const [firstRounds, secondRounds] = await alternatingRounds(
        (seconds) => load({ ...first, seconds }),
        (seconds) => load({ ...second, seconds }),
    );
    return [combined(firstRounds), combined(secondRounds)];
}

/** Calls `work` in a loop for the given time in this process: the in-process ceiling. */
export function operationsPerSecond(work: () => void, seconds = LOAD_SECONDS): number {
    for (let warmUp = 0; warmUp < 5; warmUp += 1) {
        work();
    }

    const start = process.hrtime.bigint();
    const deadline = start + BigInt(seconds * 1e9);
    let count = 0;
    let now = start;
    while (now < deadline) {
        work();
        count += 1;
        now = process.hrtime.bigint();
    }

    return count / (Number(now - start) / 1e9);
}

export interface BenchFigure {
    name: string;
    measured: string;
    baseline: string;
    ratio: number;
    target: string;
    met: boolean;
    notes: string;
}

export interface BenchDatabase {
    url: string;
    label: string;
    drop(): Promise<void>;
}

/** A fresh database for one benchmark: a SQLite file, or a schema of its own on the MariaDB/MySQL server. */
export async function benchDatabase(kind: 'sqlite' | 'mysql', tag: string): Promise<BenchDatabase> {
    if (kind === 'sqlite') {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-db-'));
        return {
            url: `sqlite:${Path.join(dir, 'bench.sqlite')}`,
            label: 'SQLite',
            drop: async () => Fs.rmSync(dir, { recursive: true, force: true }),
        };
    }

    const server = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
    const name = `gatehouse_bench_${tag}_${process.pid}`;
    const admin = knexFactory(knexConfig(server));
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    await admin.destroy();
    const url = new URL(server);
    url.pathname = `/${name}`;
    return {
        url: url.toString(),
        label: 'MariaDB',
        async drop() {
            const dropper = knexFactory(knexConfig(server));
            await dropper.raw(`DROP DATABASE IF EXISTS \`${name}\``);
            await dropper.destroy();
        },
    };
}

/** An administrator with a known access token, inserted straight through knex. */
export async function seedAdmin(knex: Knex, createdAt = Date.now()): Promise<{ id: number; token: string }> {
    const token = Crypto.randomBytes(20).toString('hex');
    await knex('users').insert({
        lower_name: 'benchadmin',
        name: 'benchadmin',
        email: 'admin@bench.test',
        type: 0,
        is_admin: true,
        created_at: createdAt,
        updated_at: createdAt,
    });
    const admin = (await knex('users').where({ lower_name: 'benchadmin' }).first('id')) as { id: number };
    await knex('access_tokens').insert({
        uid: admin.id,
        name: 'bench',
        token_hash: sha256Hex(token),
        token_last_eight: token.slice(-8),
        scope: 'all',
        created_at: createdAt,
        updated_at: createdAt,
    });
    return { id: Number(admin.id), token };
}

export interface BareComparison {
    served: LoadResult;
    baseline: LoadResult;
    ratio: number;
    bytes: number;
}

/**
 * Loads a Gatehouse URL and a bare hapi route answering the very same body (fetched once from that URL),
 * in the same run and under the same load; fails when Gatehouse answers anything but 2xx. With `rawBody` the bare
 * route answers the body's bytes as they are, for a Gatehouse route that serialises its JSON once and not per request.
 */
export async function compareWithBareRoute(
    url: string,
    headers: Record<string, string> = {},
    connections = CONNECTIONS,
    { rawBody = false }: { rawBody?: boolean } = {},
): Promise<BareComparison> {
    const page = await fetch(url, { headers });
    if (!page.ok) {
        throw new Error(`${url}: ${page.status}`);
    }

    const bodyFile = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-')), 'page.json');
    Fs.writeFileSync(bodyFile, await page.text());
    const bare = await startProcess(
        Path.join(ROOT_DIR, 'bench', 'fixtures', 'bare-server.ts'),
        { BARE_JSON_FILE: bodyFile, BARE_JSON_RAW: rawBody ? '1' : '0' },
        '/bare',
    );
    try {
        const [baseline, served] = await alternatingLoads(
            { url: `http://127.0.0.1:${bare.port}/bare`, connections },
            { url, headers, connections },
        );
        if (served.errors > 0 || served.non2xx > 0) {
            throw new Error(`${url}: ${served.errors} errors, ${served.non2xx} non-2xx answers`);
        }

        return { served, baseline, ratio: served.requestsPerSecond / baseline.requestsPerSecond, bytes: Fs.statSync(bodyFile).size };
    } finally {
        await bare.stop();
        Fs.rmSync(Path.dirname(bodyFile), { recursive: true, force: true });
    }
}

/**
 * The same request against a second Gatehouse on the same database with its read caches off, so that every request
 * does all its database work: the figure a cache miss costs, reported beside the warm one.
 */
export async function uncachedLoad(
    databaseUrl: string,
    path: string,
    headers: Record<string, string>,
    connections = CONNECTIONS,
): Promise<LoadResult> {
    const uncached = await startGatehouse({ DATABASE_URL: databaseUrl, READ_CACHE_ENTRIES: '0' });
    try {
        const url = `http://127.0.0.1:${uncached.port}${path}`;
        await load({ url, headers, connections, seconds: 2 });
        const result = await load({ url, headers, connections });
        if (result.errors > 0 || result.non2xx > 0) {
            throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
        }

        return result;
    } finally {
        await uncached.stop();
    }
}

/** The note that says what the warm figure is, and what the same request costs with the caches off. */
export function cacheNote(comparison: BareComparison, uncached: LoadResult): string {
    const ratio = uncached.requestsPerSecond / comparison.baseline.requestsPerSecond;
    return (
        'warm: after the first request the page comes from the read cache, the write counters checked on every request; ' +
        `with READ_CACHE_ENTRIES=0 (every request reads the database): ${describeLoad(uncached)}, ratio ${ratio.toFixed(2)}`
    );
}

/** How a load reads in RESULTS.md. */
export function describeLoad(result: LoadResult): string {
    return `${result.requestsPerSecond.toFixed(0)} req/s (p50 ${result.p50} ms, p99 ${result.p99} ms)`;
}

/** A bare-route comparison as a figure: measured, baseline and ratio filled in, the rest given by the benchmark. */
export function comparisonFigure(
    name: string,
    comparison: BareComparison,
    figure: { target: string; met: boolean; notes: string },
): BenchFigure {
    return {
        name,
        measured: describeLoad(comparison.served),
        baseline: `${comparison.baseline.requestsPerSecond.toFixed(0)} req/s from a bare hapi route with the same body`,
        ratio: comparison.ratio,
        ...figure,
    };
}
