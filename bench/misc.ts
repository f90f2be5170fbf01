import { renderMarkup } from '../plugins/git/domain/markup/render.ts';
import { markdownDocument } from './fixtures/markdown-document.ts';
import {
    adminToken,
    alternatingRounds,
    combined,
    median,
    type BenchFigure,
    comparisonFigure,
    compareWithBareRoute,
    load,
    operationsPerSecond,
    startGatehouse,
} from './harness.ts';

/** POST /api/v1/markdown on a 50 KB document against rendering it in-process with the same code (the ceiling). */
export async function benchMarkdown(): Promise<BenchFigure> {
    const text = markdownDocument();
    const gatehouse = await startGatehouse();
    try {
        const rootUrl = `http://127.0.0.1:${gatehouse.port}/`;
        const token = adminToken(gatehouse.dataDir);
        const render = () => {
            renderMarkup({ text, mode: 'markdown' }, rootUrl);
        };
        const request = {
            url: `${rootUrl}api/v1/markdown`,
            method: 'POST' as const,
            body: JSON.stringify({ Text: text, Mode: 'markdown' }),
            headers: { 'content-type': 'application/json', authorization: `token ${token}` },
        };
        await load({ ...request, seconds: 2 });
        const [ceilings, loads] = await alternatingRounds(
            async (seconds) => operationsPerSecond(render, seconds),
            (seconds) => load({ ...request, seconds }),
        );
        const ceiling = median(ceilings);
        const served = combined(loads);
        if (served.errors > 0 || served.non2xx > 0) {
            throw new Error(`markdown bench: ${served.errors} errors, ${served.non2xx} non-2xx answers`);
        }

        const ratio = served.requestsPerSecond / ceiling;
        return {
            name: 'POST /api/v1/markdown, 50 KB document',
            measured: `${served.requestsPerSecond.toFixed(1)} req/s (p50 ${served.p50} ms, p99 ${served.p99} ms)`,
            baseline: `${ceiling.toFixed(1)} renders/s in-process (same renderer and sanitiser)`,
            ratio,
            target: '>= 0.8',
            met: ratio >= 0.8,
            notes: `${Buffer.byteLength(text)} bytes of markdown`,
        };
    } finally {
        await gatehouse.stop();
    }
}

/**
 * GET /api/v1/licenses without credentials and with a token, each against a bare hapi route answering the same bytes:
 * Gatehouse serialises the list once, so the bare route does not serialise it per request either.
 */
export async function benchLicenses(): Promise<BenchFigure[]> {
    const gatehouse = await startGatehouse();
    try {
        const url = `http://127.0.0.1:${gatehouse.port}/api/v1/licenses`;
        const token = adminToken(gatehouse.dataDir);
        const cases: Array<{ name: string; headers: Record<string, string>; notes: string }> = [
            { name: 'GET /api/v1/licenses, anonymous', headers: {}, notes: 'no credentials' },
            {
                name: 'GET /api/v1/licenses, with a token',
                headers: { authorization: `token ${token}` },
                notes: "an administrator's token (scope all) in the Authorization header",
            },
        ];
        const figures: BenchFigure[] = [];
        for (const { name, headers, notes } of cases) {
            const comparison = await compareWithBareRoute(url, headers, undefined, { rawBody: true });
            figures.push(
                comparisonFigure(name, comparison, {
                    target: '>= 0.7',
                    met: comparison.ratio >= 0.7,
                    notes: `${notes}; ${comparison.bytes} bytes per answer; the bare route answers the same bytes, serialised once`,
                }),
            );
        }

        return figures;
    } finally {
        await gatehouse.stop();
    }
}
