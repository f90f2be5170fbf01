import { spawn } from 'node:child_process';

import { nginxBinary } from '../plugins/deploy/domain/host/nginx-binary.ts';
import { nginxTestArguments, prepareNginxPrefix, removeNginxPrefix, validateSiteText } from '../plugins/deploy/domain/nginx/nginx-test.ts';
import { defaultSite, renderSite } from '../plugins/deploy/domain/nginx/site-model.ts';
import { type BenchFigure, LOAD_SECONDS } from './harness.ts';

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

async function timed(work: () => Promise<unknown>): Promise<number> {
    const start = process.hrtime.bigint();
    await work();
    return Number(process.hrtime.bigint() - start) / 1e6;
}

function runNginxTest(binary: string, args: string[]): Promise<void> {
    return new Promise((resolve, reject) => {
        const child = spawn(binary, args, { stdio: 'ignore' });
        child.once('error', reject);
        child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`nginx -t exited with ${String(code)}`))));
    });
}

/**
 * Render + validate of an app's site (forward auth, WebSocket, HTTPS), against `nginx -t` run directly on
 * a prefix prepared once for the same text. The two alternate, so a busy machine slows both alike.
 */
export async function benchNginx(): Promise<BenchFigure> {
    const spec = defaultSite({ domain: 'bench.example.com', upstreamPort: 8080, forwardAuth: { outpostUrl: 'http://127.0.0.1:9000' } });
    const binary = nginxBinary();
    const prefix = await prepareNginxPrefix(renderSite(spec));
    const direct: number[] = [];
    const validated: number[] = [];
    const renderedAndValidated: number[] = [];
    try {
        const deadline = Date.now() + LOAD_SECONDS * 1000;
        for (let round = 0; round < 3 || Date.now() < deadline; round += 1) {
            direct.push(await timed(() => runNginxTest(binary, nginxTestArguments(prefix))));
            let text = '';
            const renderMs = await timed(() => Promise.resolve((text = renderSite(spec))));
            const validateMs = await timed(async () => {
                if (!(await validateSiteText(text)).ok) {
                    throw new Error('nginx bench: the site did not pass nginx -t');
                }
            });
            validated.push(validateMs);
            renderedAndValidated.push(renderMs + validateMs);
        }
    } finally {
        removeNginxPrefix(prefix);
    }

    const ratio = median(validated) / median(direct);
    return {
        name: 'nginx site render + validate (nginx -t in an isolated prefix)',
        measured: `render+validate median ${median(renderedAndValidated).toFixed(1)} ms; validate alone ${median(validated).toFixed(1)} ms`,
        baseline: `nginx -t run directly on the same prepared prefix: median ${median(direct).toFixed(1)} ms`,
        ratio,
        target: '<= 1.3',
        met: ratio <= 1.3,
        notes: `${validated.length} iterations of each, alternating; ratio = validate / direct nginx -t`,
    };
}
