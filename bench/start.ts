/**
 * The built server's start (`npm start` runs `node dist/server.js`): the time from spawning the process to the
 * first 200 of GET /api/health, and its resident memory (VmRSS) once idle, against a bare hapi server's start
 * (plain JavaScript too, answering /api/health) measured in the same run, in alternating rounds. Gatehouse starts on a data
 * directory it has already migrated (a restart); the first start on an empty one, migrations included, is in the
 * notes.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import { freePort } from '../test/helpers/server.ts';
import { type BenchFigure, median, ROOT_DIR } from './harness.ts';

const ROUNDS = Number(process.env.BENCH_START_ROUNDS ?? 5);
/** After /api/health first answers, the start's own work (the cron tasks run at start) is given this long to end. */
const IDLE_AFTER_MS = 5_000;
const TARGET_MS = 1_000;
const TARGET_MB = 120;
const GATEHOUSE = Path.join(ROOT_DIR, 'dist', 'server.js');
const GATEHOUSE_ARGS = [GATEHOUSE];
/** The sources through tsx, as `npm start` ran them before the build: one start, for the notes. */
const SOURCES_ARGS = ['--import', 'tsx', Path.join(ROOT_DIR, 'server.ts')];
/** The baseline, given to node as `--input-type=module -e`, so that it is plain JavaScript resolved from the project. */
const BARE_ARGS = [
    '--input-type=module',
    '-e',
    [
        "import Hapi from '@hapi/hapi';",
        "const server = Hapi.server({ port: Number(process.env.PORT), host: '127.0.0.1' });",
        "server.route({ method: 'GET', path: '/api/health', handler: () => ({ status: 'ok' }) });",
        'await server.start();',
        "process.once('SIGTERM', () => void server.stop().then(() => process.exit(0)));",
    ].join('\n'),
];

interface Start {
    ms: number;
    mb: number;
}

function residentMb(pid: number): number {
    const line = Fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
    return Number(line?.[1] ?? Number.NaN) / 1024;
}

async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
}

async function measureStart(args: string[], environment: Record<string, string>): Promise<Start> {
    const port = await freePort();
    const started = performance.now();
    const child = spawn(process.execPath, args, {
        cwd: ROOT_DIR,
        env: { PATH: process.env.PATH ?? '', ...environment, PORT: String(port), HOST: '127.0.0.1' },
        stdio: ['ignore', 'ignore', 'inherit'],
    });
    try {
        for (;;) {
            if (child.exitCode !== null) throw new Error(`node ${args[0]} exited with ${child.exitCode}`);
            if (performance.now() - started > 120_000) throw new Error(`node ${args[0]}: no answer on /api/health`);
            const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then(
                (response) => response.status === 200,
                () => false,
            );
            if (ok) break;
            await new Promise((resolve) => setTimeout(resolve, 5));
        }

        const ms = performance.now() - started;
        await new Promise((resolve) => setTimeout(resolve, IDLE_AFTER_MS));
        return { ms, mb: residentMb(child.pid ?? 0) };
    } finally {
        await stop(child);
    }
}

function loadNote(): string {
    const [one] = Os.loadavg();
    return `load average ${one?.toFixed(1)} on ${Os.cpus().length} cores at the end (other work shares the machine)`;
}

export async function benchStart(): Promise<BenchFigure[]> {
    const build = spawnSync(process.execPath, ['--import', 'tsx', Path.join(ROOT_DIR, 'scripts', 'build.ts'), '--if-stale'], {
        cwd: ROOT_DIR,
        stdio: 'inherit',
    });
    if (build.status !== 0) throw new Error('npm run build failed');

    const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-start-'));
    const environment = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    try {
        const first = await measureStart(GATEHOUSE_ARGS, environment);
        const sources = await measureStart(SOURCES_ARGS, environment);
        const gatehouse: Start[] = [];
        const bare: Start[] = [];
        for (let round = 0; round < ROUNDS; round += 1) {
            const pair = round % 2 === 0 ? [GATEHOUSE_ARGS, BARE_ARGS] : [BARE_ARGS, GATEHOUSE_ARGS];
            for (const args of pair) {
                (args === GATEHOUSE_ARGS ? gatehouse : bare).push(await measureStart(args, environment));
            }
        }

        const ms = median(gatehouse.map((start) => start.ms));
        const bareMs = median(bare.map((start) => start.ms));
        const mb = median(gatehouse.map((start) => start.mb));
        const bareMb = median(bare.map((start) => start.mb));
        const rounds = (starts: Start[], of: keyof Start, unit: string) =>
            starts.map((start) => `${start[of].toFixed(0)}${unit}`).join(', ');
        const common = `${ROUNDS} rounds alternating, medians; ${loadNote()}.`;
        return [
            {
                name: 'start: node dist/server.js to the first 200 of /api/health',
                measured: `${ms.toFixed(0)} ms`,
                baseline: `${bareMs.toFixed(0)} ms (bare hapi server)`,
                ratio: ms / bareMs,
                target: `< ${TARGET_MS} ms`,
                met: ms < TARGET_MS,
                notes:
                    `Restarts on a migrated SQLite data directory: ${rounds(gatehouse, 'ms', ' ms')} (bare ${rounds(bare, 'ms', ' ms')}); ` +
                    `the first start on an empty one (migrations) ${first.ms.toFixed(0)} ms; the sources through tsx (npm start before the build) ${sources.ms.toFixed(0)} ms. ${common}`,
            },
            {
                name: 'start: resident memory at idle (VmRSS)',
                measured: `${mb.toFixed(0)} MB`,
                baseline: `${bareMb.toFixed(0)} MB (bare hapi server)`,
                ratio: mb / bareMb,
                target: `< ${TARGET_MB} MB`,
                met: mb < TARGET_MB,
                notes: `${IDLE_AFTER_MS / 1000} s after /api/health first answered: ${rounds(gatehouse, 'mb', ' MB')} (bare ${rounds(bare, 'mb', ' MB')}); the sources through tsx ${sources.mb.toFixed(0)} MB. ${common}`,
            },
        ];
    } finally {
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
}
