/**
 * The deploy manager's read paths (issue 32): GET /api/apps (a page of summaries), GET /api/dashboard and
 * GET /api/apps/{name}, signed in as the first administrator, with 50 and with 500 draft apps, each against a bare
 * hapi route answering the same bytes.
 */
import { signIn } from './app-runs.ts';
import { type BenchFigure, comparisonFigure, compareWithBareRoute, startGatehouse } from './harness.ts';

const TARGETS: Record<string, number> = { list: 0.2, dashboard: 0.5, app: 0.2 };
const P99_TARGET_MS = 50;

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
            const comparison = await compareWithBareRoute(`${baseUrl}${path}`, headers);
            const target = TARGETS[key] ?? 1;
            figures.push(
                comparisonFigure(`GET ${path}, ${appCount} apps (drafts)`, comparison, {
                    target: `>= ${target}, p99 < ${P99_TARGET_MS} ms`,
                    met: comparison.ratio >= target && comparison.served.p99 < P99_TARGET_MS,
                    notes: `signed in as an administrator (session cookie); ${comparison.bytes} bytes per answer`,
                }),
            );
        }

        return figures;
    } finally {
        await gatehouse.stop();
    }
}
