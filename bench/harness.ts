import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import { freePort } from '../test/helpers.ts';

export const ROOT_DIR = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every load run is bounded: this many seconds, this many connections, loopback only. */
export const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = 16;

export interface Process {
    port: number;
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

export async function load(options: {
    url: string;
    method?: 'GET' | 'POST';
    body?: string;
    headers?: Record<string, string>;
    connections?: number;
}): Promise<LoadResult> {
    const result = await autocannon({
        url: options.url,
        method: options.method ?? 'GET',
        body: options.body,
        headers: options.headers,
        connections: options.connections ?? CONNECTIONS,
        duration: LOAD_SECONDS,
    });
    return {
        requestsPerSecond: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        errors: result.errors + result.timeouts,
        non2xx: result.non2xx,
    };
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
