/**
 * The deploy manager's read paths (issue 32): GET /api/apps (a page of summaries), GET /api/dashboard and
 * GET /api/apps/{name}, signed in as the first administrator, with 50 and with 500 draft apps, each against a bare
 * hapi route answering the same bytes. Besides the rates, each side's CPU time per request is measured in its own
 * process: on a machine shared with other work the rates (and their ratio) move with the load, the CPU time far less.
 */
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import autocannon from 'autocannon';

import { signIn } from './app-runs.ts';
import {
    type BenchFigure,
    comparisonFigure,
    compareWithBareRoute,
    CONNECTIONS,
    ROOT_DIR,
    startGatehouse,
    startProcess,
} from './harness.ts';

const TARGETS: Record<string, number> = { list: 0.2, dashboard: 0.5, app: 0.2 };
const P99_TARGET_MS = 50;
const CPU_REQUESTS = 20_000;

/** The process's user and system CPU time so far, in milliseconds (Linux). */
function cpuMs(pid: number): number {
    const fields = Fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Microseconds of the process's CPU per request, over CPU_REQUESTS requests after a warm-up. */
async function cpuPerRequest(pid: number, url: string, headers: Record<string, string>): Promise<number> {
    await autocannon({ url, headers, connections: CONNECTIONS, amount: 3000 });
    const before = cpuMs(pid);
    const result = await autocannon({ url, headers, connections: CONNECTIONS, amount: CPU_REQUESTS });
    if (result.errors > 0 || result.non2xx > 0) {
        throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
    }

    return ((cpuMs(pid) - before) * 1000) / CPU_REQUESTS;
}

/** The same request's CPU time in Gatehouse and in a bare hapi route answering its body. */
async function cpuComparison(pid: number, url: string, headers: Record<string, string>): Promise<string> {
    const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-'));
    const bodyFile = Path.join(folder, 'page.json');
    Fs.writeFileSync(bodyFile, await (await fetch(url, { headers })).text());
    const bare = await startProcess(
        Path.join(ROOT_DIR, 'bench', 'fixtures', 'bare-server.ts'),
        { BARE_JSON_FILE: bodyFile, BARE_JSON_RAW: '0' },
        '/bare',
    );
    try {
        const served = await cpuPerRequest(pid, url, headers);
        const baseline = await cpuPerRequest(bare.pid, `http://127.0.0.1:${bare.port}/bare`, {});
        return `CPU per request ${served.toFixed(0)} µs against the bare route's ${baseline.toFixed(0)} µs (ratio ${(baseline / served).toFixed(2)}, ${CPU_REQUESTS} requests each)`;
    } finally {
        await bare.stop();
        Fs.rmSync(folder, { recursive: true, force: true });
    }
}

export async function benchReadPaths(appCount: number): Promise<BenchFigure[]> {
    const gatehouse = await startGatehouse();
    try {
        const baseUrl = `http://127.0.0.1:${gatehouse.port}`;
        const admin = await signIn(baseUrl, gatehouse.dataDir);
        for (let index = 0; index < appCount; index += 1) {
            const created = await admin.post('/api/apps', { name: `bench-${String(index).padStart(3, '0')}`, image: 'nginx', tag: '1.27' });
            if (created.status !== 201) {
                throw new Error(`POST /api/apps: ${created.status} ${created.text}`);
            }
        }

        const headers = { cookie: [...admin.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
        const cases = [
            { key: 'list', path: '/api/apps' },
            { key: 'dashboard', path: '/api/dashboard' },
            { key: 'app', path: '/api/apps/bench-007' },
        ];
        const figures: BenchFigure[] = [];
        for (const { key, path } of cases) {
            const loadBefore = Os.loadavg()[0] ?? 0;
            const comparison = await compareWithBareRoute(`${baseUrl}${path}`, headers);
            const cpu = await cpuComparison(gatehouse.pid, `${baseUrl}${path}`, headers);
            const machineLoad = `load average ${loadBefore.toFixed(1)} before, ${(Os.loadavg()[0] ?? 0).toFixed(1)} after on ${Os.cpus().length} cores, the benchmark's own processes included`;
            const target = TARGETS[key] ?? 1;
            figures.push(
                comparisonFigure(`GET ${path}, ${appCount} apps (drafts)`, comparison, {
                    target: `>= ${target}, p99 < ${P99_TARGET_MS} ms`,
                    met: comparison.ratio >= target && comparison.served.p99 < P99_TARGET_MS,
                    notes: `signed in as an administrator (session cookie); ${comparison.bytes} bytes per answer; warm: the one request repeated, so after the first the session and the answer come from the read caches, the write counters checked on every request; ${cpu}; ${machineLoad}`,
                }),
            );
        }

        return figures;
    } finally {
        await gatehouse.stop();
    }
}
