import { type ChildProcess, spawn } from 'node:child_process';
import Fs from 'node:fs';
import Http from 'node:http';
import Os from 'node:os';
import Path from 'node:path';

import { Browser } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/server.ts';
import type { StartLines } from './fixtures/sse-gatehouse.ts';
import { type BenchFigure, benchDatabase, ROOT_DIR } from './harness.ts';

const SUBSCRIBERS = 100;
const LINES = 500;
const INTERVAL_MS = 10;
/** Time the run waits before its first line, so that every subscriber is listening by then (checked). */
const START_DELAY_MS = 3_000;
/** Each fan-out (start, subscribe, every line, end) must finish within this. */
const PHASE_CAP_MS = 60_000;
const TARGET_P99_MS = 50;

/** Wall-clock milliseconds with sub-millisecond precision, as the run's worker stamps its lines. */
const wallClock = () => performance.timeOrigin + performance.now();

interface IpcProcess {
    port: number;
    /** Asks the process to start the run; answers the run's id. */
    startRun(lines: StartLines): Promise<number>;
    stop(): Promise<void>;
}

/** A TypeScript entry point in its own process with an IPC channel, answering 200 on `readyPath` when up. */
async function startIpcProcess(entry: string, environment: Record<string, string>, readyPath: string): Promise<IpcProcess> {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', entry], {
        cwd: ROOT_DIR,
        env: { PATH: process.env.PATH ?? '', ...environment, PORT: String(port), HOST: '127.0.0.1' },
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const stop = async () => {
        if (child.exitCode === null) {
            child.kill('SIGTERM');
            await exited;
        }
    };
    try {
        await waitForReady(`http://127.0.0.1:${port}${readyPath}`, child);
    } catch (error) {
        await stop();
        throw error;
    }

    const startRun = async (lines: StartLines) =>
        await new Promise<number>((resolve, reject) => {
            child.once('message', (answer: { runId?: number; error?: string }) =>
                answer.runId === undefined ? reject(new Error(answer.error)) : resolve(answer.runId),
            );
            child.send(lines);
        });
    return { port, startRun, stop };
}

async function waitForReady(url: string, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
        if (child.exitCode !== null) {
            throw new Error(`${url}: the process exited with ${child.exitCode}`);
        }

        if (
            await fetch(url).then(
                (response) => response.ok,
                () => false,
            )
        ) {
            return;
        }

        await new Promise((resolve) => setTimeout(resolve, 100));
    }

    throw new Error(`${url}: nothing answered`);
}

interface Reception {
    /** When the stream's first bytes (`: connected`, written after the server subscribed) arrived. */
    connectedAt: number;
    /** Per line received, in order of receipt: when the worker sent it, and the delay to its receipt. */
    sentAts: number[];
    latencies: number[];
    seqs: number[];
    ended: boolean;
    lastReceiptAt: number;
}

interface Subscriber {
    connected: Promise<void>;
    finished: Promise<Reception>;
    abort(): void;
}

/** One subscriber on its own connection, reading the SSE stream as it arrives; a line's receipt time is its chunk's. */
function subscribe(url: string, cookie: string): Subscriber {
    const reception: Reception = { connectedAt: Number.NaN, sentAts: [], latencies: [], seqs: [], ended: false, lastReceiptAt: Number.NaN };
    let markConnected: () => void = () => undefined;
    const connected = new Promise<void>((resolve) => (markConnected = resolve));
    let buffer = '';
    const read = (block: string, receivedAt: number) => {
        const fields = new Map(block.split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]));
        if (fields.get('event') === 'end') {
            reception.ended = true;
        } else if (fields.get('event') === 'event') {
            const event = JSON.parse(fields.get('data') ?? '{}') as { seq: number; text: string };
            if (Number(fields.get('id')) !== event.seq) {
                throw new Error(`event id ${fields.get('id')} does not match its seq ${event.seq}`);
            }

            const sentAt = Number(event.text.slice('t='.length));
            reception.seqs.push(event.seq);
            reception.sentAts.push(sentAt);
            reception.latencies.push(receivedAt - sentAt);
            reception.lastReceiptAt = receivedAt;
        }
    };
    const request = Http.get(url, { agent: false, headers: { cookie, accept: 'text/event-stream' } });
    const finished = new Promise<Reception>((resolve, reject) => {
        request.on('error', reject);
        request.once('response', (response) => {
            if (response.statusCode !== 200) {
                reject(new Error(`${url}: ${response.statusCode}`));
                response.resume();
                return;
            }

            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
                const receivedAt = wallClock();
                if (Number.isNaN(reception.connectedAt)) {
                    reception.connectedAt = receivedAt;
                    markConnected();
                }

                buffer += chunk;
                const blocks = buffer.split('\n\n');
                buffer = blocks.pop() ?? '';
                blocks.filter((block) => block !== '' && !block.startsWith(':')).forEach((block) => read(block, receivedAt));
            });
            // A reset stream counts as what it lacks (lines lost, no end), not as a crash of the benchmark.
            response.on('error', () => resolve(reception));
            response.once('end', () => resolve(reception));
            response.once('aborted', () => resolve(reception));
        });
    });
    return { connected, finished, abort: () => request.destroy() };
}

interface FanOut {
    /** Below zero only if the two processes' clocks disagree: a check on the figures. */
    min: number;
    p50: number;
    p99: number;
    max: number;
    eventsPerSecond: number;
    lost: number;
    reordered: number;
    duplicated: number;
    unended: number;
}

function percentile(sorted: number[], fraction: number): number {
    return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}

/** Per subscriber: lines never received, lines received after a later one, lines received twice. */
function tally(receptions: Reception[], firstSentAt: number): FanOut {
    let lost = 0;
    let reordered = 0;
    let duplicated = 0;
    for (const { seqs } of receptions) {
        const seen = new Set<number>();
        let highest = 0;
        for (const seq of seqs) {
            duplicated += seen.has(seq) ? 1 : 0;
            reordered += !seen.has(seq) && seq < highest ? 1 : 0;
            seen.add(seq);
            highest = Math.max(highest, seq);
        }

        lost += Array.from({ length: LINES }, (_, index) => index + 1).filter((seq) => !seen.has(seq)).length;
    }

    const latencies = receptions.flatMap((reception) => reception.latencies).sort((a, b) => a - b);
    const lastReceiptAt = Math.max(...receptions.map((reception) => reception.lastReceiptAt));
    return {
        min: latencies[0] ?? Number.NaN,
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies.at(-1) ?? Number.NaN,
        eventsPerSecond: latencies.length / ((lastReceiptAt - firstSentAt) / 1000),
        lost,
        reordered,
        duplicated,
        unended: receptions.filter((reception) => !reception.ended).length,
    };
}

async function withinCap<T>(work: Promise<T>, what: string, ms = PHASE_CAP_MS): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: over ${ms} ms`)), ms)));
    try {
        return await Promise.race([work, cap]);
    } finally {
        clearTimeout(timer);
    }
}

/**
 * Starts the run, connects the subscribers while it waits, and reads every line to the end. Fails when a
 * subscriber was not listening before the first line was sent (its figure would include replay, not live delivery).
 */
async function fanOut(server: IpcProcess, eventsPath: (runId: number) => string, cookie = ''): Promise<FanOut> {
    const runId = await server.startRun({ lines: LINES, intervalMs: INTERVAL_MS, startDelayMs: START_DELAY_MS });
    const url = `http://127.0.0.1:${server.port}${eventsPath(runId)}`;
    const subscribers = Array.from({ length: SUBSCRIBERS }, () => subscribe(url, cookie));
    try {
        await withinCap(Promise.all(subscribers.map((subscriber) => subscriber.connected)), 'subscribing', START_DELAY_MS);
        const receptions = await withinCap(Promise.all(subscribers.map((subscriber) => subscriber.finished)), 'the fan-out');
        const firstSentAt = Math.min(...receptions.flatMap((reception) => reception.sentAts));
        const lastConnectedAt = Math.max(...receptions.map((reception) => reception.connectedAt));
        if (!(lastConnectedAt < firstSentAt)) {
            throw new Error(
                `a subscriber connected ${(lastConnectedAt - firstSentAt).toFixed(0)} ms after the first line: raise START_DELAY_MS`,
            );
        }

        return tally(receptions, firstSentAt);
    } finally {
        subscribers.forEach((subscriber) => subscriber.abort());
    }
}

/** An administrator set up over HTTP as a person does it (setup token, then sign-in); answers the session's cookies. */
async function signIn(baseUrl: string, dataDir: string): Promise<string> {
    const browser = new Browser(baseUrl);
    await browser.get('/api/auth/me');
    const token = Fs.readFileSync(Path.join(dataDir, 'setup-token'), 'utf8').trim();
    const account = { email: 'bench@example.com', name: 'Bench', password: 'bench-password-1' };
    const setUp = await browser.post('/api/setup', { token, ...account });
    const signedIn = await browser.post('/api/auth/login', { email: account.email, password: account.password });
    if (setUp.status >= 300 || signedIn.status >= 300) {
        throw new Error(`sign-in failed: setup ${setUp.status} ${setUp.text}, login ${signedIn.status} ${signedIn.text}`);
    }

    return [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
}

function describeFanOut(result: FanOut): string {
    const faults = `${result.lost} lost, ${result.reordered} reordered, ${result.duplicated} duplicated, ${result.unended} without end`;
    return `p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms (min ${result.min.toFixed(1)}, max ${result.max.toFixed(0)}), ${result.eventsPerSecond.toFixed(0)} events/s delivered; ${faults}`;
}

async function gatehouseFanOut(kind: 'sqlite' | 'mysql'): Promise<{ result: FanOut; label: string }> {
    const database = await benchDatabase(kind, 'sse');
    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-'));
    try {
        const gatehouse = await startIpcProcess(
            Path.join(ROOT_DIR, 'bench', 'fixtures', 'sse-gatehouse.ts'),
            { DATA_DIR: dataDir, DATABASE_URL: database.url, LOG_LEVEL: 'info' },
            '/api/health',
        );
        try {
            const cookie = await signIn(`http://127.0.0.1:${gatehouse.port}`, dataDir);
            return { result: await fanOut(gatehouse, (runId) => `/api/runs/${runId}/events`, cookie), label: database.label };
        } finally {
            await gatehouse.stop();
        }
    } finally {
        Fs.rmSync(dataDir, { recursive: true, force: true });
        await database.drop();
    }
}

async function bareFanOut(): Promise<FanOut> {
    const bare = await startIpcProcess(Path.join(ROOT_DIR, 'bench', 'fixtures', 'bare-sse-server.ts'), {}, '/ready');
    try {
        return await fanOut(bare, () => '/events');
    } finally {
        await bare.stop();
    }
}

/**
 * GET /api/runs/{id}/events with 100 subscribers on one run of 500 lines, each line stamped by the run's worker
 * when sent; against a bare hapi SSE route fanning the same worker's lines out from memory, in the same run.
 */
export async function benchSse(kind: 'sqlite' | 'mysql'): Promise<BenchFigure> {
    const baseline = await bareFanOut();
    const { result, label } = await gatehouseFanOut(kind);
    const faultless = (fan: FanOut) => fan.lost + fan.reordered + fan.duplicated + fan.unended === 0;
    if (!faultless(baseline)) {
        throw new Error(`the baseline itself lost or reordered lines (${describeFanOut(baseline)}): the benchmark is broken`);
    }

    return {
        name: `GET /api/runs/{id}/events, ${SUBSCRIBERS} subscribers x ${LINES} lines (${label})`,
        measured: describeFanOut(result),
        baseline: `${describeFanOut(baseline)}; bare hapi SSE route fanning the same worker's lines out from memory`,
        ratio: result.p99 / baseline.p99,
        target: `p99 < ${TARGET_P99_MS} ms, none lost or reordered`,
        met: result.p99 < TARGET_P99_MS && faultless(result),
        notes:
            `Ratio = Gatehouse p99 / baseline p99 (lower is better). A Bree worker posts a line every ${INTERVAL_MS} ms stamped ` +
            'with its wall-clock send time; latency = send to receipt by each subscriber, so events/s is bound by that pace. ' +
            'Gatehouse in its own process (server.ts createServer from the environment, request logging on), the run started ' +
            'over IPC as no HTTP route runs a custom script; subscribers in the bench process, one connection each, one admin ' +
            'session signed in over HTTP, all listening before the first line (checked). Measured on a quiet machine; with Docker test suites running beside it, p99 rose to 60-200 ms for Gatehouse and the bare route alike.',
    };
}
