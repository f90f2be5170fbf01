/**
 * GET /api/sso/detect, two ways. For an image Gatehouse has already inspected (a recipe, the curated list and the
 * integration guides; its registry answered before): the p99 latency at 16 connections with an editor's session
 * (target under 20 ms), against a bare hapi route answering the same bytes. For a new multi-platform image in a
 * local registry (Debian's docker-registry on 127.0.0.1): the requests sent to the registry, against the allowance
 * of 2 per manifest level (the index, then the linux/amd64 manifest).
 */
import { type LocalRegistry, pushMultiPlatformImage, startLocalRegistry } from '../test/support/local-registry.ts';
import { signIn } from './app-runs.ts';
import { type BenchFigure, compareWithBareRoute, comparisonFigure, load, startGatehouse } from './harness.ts';

const P99_TARGET_MS = 20;
/** A mirror of Grafana in the local registry: its recipe matches by name, with the curated list and a guide. */
const REPOSITORY = 'grafana/grafana';
const MANIFEST_LEVELS = 2;
const TRIPS_PER_LEVEL = 2;

function cookieOf(admin: { cookies: Map<string, string> }): string {
    return [...admin.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
}

async function cachedDetect(baseUrl: string, cookie: string, image: string): Promise<BenchFigure> {
    const url = `${baseUrl}/api/sso/detect?image=${encodeURIComponent(image)}`;
    // Warm-up: the first answers compile the code paths and fill the caches.
    await load({ url, headers: { cookie }, seconds: 2 });
    const comparison = await compareWithBareRoute(url, { cookie });
    const p99 = comparison.served.p99;
    return comparisonFigure('GET /api/sso/detect, an image already inspected (cached)', comparison, {
        target: `p99 < ${P99_TARGET_MS} ms`,
        met: p99 < P99_TARGET_MS,
        notes: `p99 ${p99} ms at 16 connections, signed in (session cookie); ${image} (its registry read once before): a recipe, the curated list, an integration guide and the image's own variables; ${comparison.bytes} bytes per answer`,
    });
}

async function newImageDetect(baseUrl: string, cookie: string, registry: LocalRegistry): Promise<BenchFigure> {
    await pushMultiPlatformImage(registry, REPOSITORY, '11.1.0');
    const image = `${registry.host}/${REPOSITORY}:11.1.0`;
    const started = performance.now();
    const response = await fetch(`${baseUrl}/api/sso/detect?image=${encodeURIComponent(image)}`, { headers: { cookie } });
    const ms = performance.now() - started;
    const answer = (await response.json()) as { inspection?: { ok: boolean; roundTrips?: number; error?: string } };
    if (!answer.inspection?.ok || answer.inspection.roundTrips === undefined) {
        throw new Error(`detect bench: the local registry was not read: ${JSON.stringify(answer.inspection)}`);
    }

    const allowance = MANIFEST_LEVELS * TRIPS_PER_LEVEL;
    const trips = answer.inspection.roundTrips;
    return {
        name: 'GET /api/sso/detect, a new multi-platform image in a local registry',
        measured: `${trips} registry requests, ${ms.toFixed(0)} ms`,
        baseline: `${allowance} requests (${TRIPS_PER_LEVEL} per manifest level, ${MANIFEST_LEVELS} levels: index and linux/amd64 manifest)`,
        ratio: trips / allowance,
        target: '<= 1 (at most 2 per level)',
        met: trips <= allowance,
        notes: "Debian's docker-registry on 127.0.0.1, no token realm; the config blob is one of the requests counted",
    };
}

export async function benchDetect(): Promise<BenchFigure[]> {
    const registry = await startLocalRegistry();
    // Docker Hub is not reachable here: its registry stands at a closed loopback port, so a Hub image's own
    // variables are not read and its inspection is remembered as failed (the rest of the evidence is unchanged).
    const gatehouse = await startGatehouse({
        HUB_URL: 'http://127.0.0.1:9',
        HUB_REGISTRY_URL: 'http://127.0.0.1:9',
        // The local registry stands for one on the internet.
        HUB_ALLOWED_HOST_LIST: 'loopback',
    });
    try {
        const baseUrl = `http://127.0.0.1:${gatehouse.port}`;
        const cookie = cookieOf(await signIn(baseUrl, gatehouse.dataDir));
        const fresh = await newImageDetect(baseUrl, cookie, registry);
        const cached = await cachedDetect(baseUrl, cookie, `${registry.host}/${REPOSITORY}:11.1.0`);
        return [cached, fresh];
    } finally {
        await gatehouse.stop();
        await registry.stop();
    }
}
