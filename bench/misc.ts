import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import { renderMarkup } from '../plugins/git/miscellaneous/markdown.ts';
import { markdownDocument } from './fixtures/markdown-document.ts';
import { adminToken, type BenchFigure, load, operationsPerSecond, ROOT_DIR, startGatehouse, startProcess } from './harness.ts';

/** POST /api/v1/markdown on a 50 KB document against rendering it in-process with the same code (the ceiling). */
export async function benchMarkdown(): Promise<BenchFigure> {
    const text = markdownDocument();
    const gatehouse = await startGatehouse();
    try {
        const rootUrl = `http://127.0.0.1:${gatehouse.port}/`;
        const token = adminToken(gatehouse.dataDir);
        const ceiling = operationsPerSecond(() => {
            renderMarkup({ text, mode: 'markdown' }, rootUrl);
        });
        const served = await load({
            url: `${rootUrl}api/v1/markdown`,
            method: 'POST',
            body: JSON.stringify({ Text: text, Mode: 'markdown' }),
            headers: { 'content-type': 'application/json', authorization: `token ${token}` },
        });
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

/** GET /api/v1/licenses against a bare hapi route answering the same JSON. */
export async function benchLicenses(): Promise<BenchFigure> {
    const gatehouse = await startGatehouse();
    const bodyFile = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-')), 'licenses.json');
    try {
        const url = `http://127.0.0.1:${gatehouse.port}/api/v1/licenses`;
        Fs.writeFileSync(bodyFile, await (await fetch(url)).text());
        const bare = await startProcess(Path.join(ROOT_DIR, 'bench', 'fixtures', 'bare-server.ts'), { BARE_JSON_FILE: bodyFile }, '/bare');
        try {
            const baseline = await load({ url: `http://127.0.0.1:${bare.port}/bare` });
            const served = await load({ url });
            if (served.errors > 0 || served.non2xx > 0) {
                throw new Error(`licenses bench: ${served.errors} errors, ${served.non2xx} non-2xx answers`);
            }

            const ratio = served.requestsPerSecond / baseline.requestsPerSecond;
            return {
                name: 'GET /api/v1/licenses',
                measured: `${served.requestsPerSecond.toFixed(0)} req/s (p50 ${served.p50} ms, p99 ${served.p99} ms)`,
                baseline: `${baseline.requestsPerSecond.toFixed(0)} req/s from a bare hapi route with the same JSON`,
                ratio,
                target: '>= 0.7',
                met: ratio >= 0.7,
                notes: `${Fs.statSync(bodyFile).size} bytes per answer`,
            };
        } finally {
            await bare.stop();
        }
    } finally {
        await gatehouse.stop();
        Fs.rmSync(Path.dirname(bodyFile), { recursive: true, force: true });
    }
}
