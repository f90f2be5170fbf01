/**
 * The sign-in method change benchmark: wall time of `POST /api/apps/{name}/sso` (rewrite the files and the site,
 * bring the containers to the new files, reload nginx, check forward auth and the method's own sign-in) against a
 * plain `POST /api/apps/{name}/action {restart}` of the same app, same run. The app sits behind the authentik
 * stand-in's forward auth; each change switches the method between `oidc` and `header`. The compose file hands the
 * app its OpenID client through `{{OIDC_CLIENT_ID}}`, filled only under `oidc`, so every change rewrites the site and
 * the compose file and recreates the container, as a real method change does.
 */
import type { Browser } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../test/support/authentik/index.ts';
import { buildWebImage, removeProjects } from '../test/support/images.ts';
import { type RunningServices, startServices } from '../test/support/services.ts';
import { followRun, signIn, startRun, wallClock } from './app-runs.ts';
import { type BenchFigure, median, startGatehouse } from './harness.ts';

const APP = 'benchsignin';
const BASE_DOMAIN = 'apps.test';
const ROUNDS = Number(process.env.BENCH_SIGN_IN_ROUNDS ?? 7);
const TARGET_RATIO = 1.5;

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Milliseconds from the POST to the run's end; throws unless the run succeeded. */
async function timedRun(admin: Browser, path: string, payload: unknown): Promise<number> {
    const startedAt = wallClock();
    const run = await followRun(admin, await startRun(admin, 'post', path, payload));
    if (run.state !== 'succeeded') {
        throw new Error(`${path} ${run.state}: ${run.error}; ${run.events.map((event) => event.text).join(' | ')}`);
    }

    return run.endAt - startedAt;
}

async function deployBehindProvider(admin: Browser, authentik: AuthentikStandIn, image: string): Promise<void> {
    const token = authentik.addToken({ username: 'operator', identifier: 'bench-api' });
    const connected = await admin.put('/api/admin/idp', { url: authentik.url, token });
    const [repository = '', tag = ''] = image.split(/:(?=[^:/]+$)/);
    const created = await admin.post('/api/apps', { name: APP, image: repository, tag });
    if (connected.status !== 200 || created.status !== 201) {
        throw new Error(`setting up: idp ${connected.status} ${connected.text}, app ${created.status} ${created.text}`);
    }

    const port = (created.body as { app: { hostPort: number } }).app.hostPort;
    const compose = [
        'services:',
        '  web:',
        `    image: ${image}`,
        '    environment:',
        '      OIDC_CLIENT_ID: "{{OIDC_CLIENT_ID}}"',
        '    ports:',
        `      - "127.0.0.1:${port}:80"`,
        '',
    ].join('\n');
    await admin.put(`/api/apps/${APP}/draft`, { compose });
    await timedRun(admin, `/api/apps/${APP}/deploy`, {});
}

/** Alternating rounds, which side goes first alternating too. */
async function measure(admin: Browser): Promise<{ changes: number[]; restarts: number[] }> {
    const changes: number[] = [];
    const restarts: number[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
        const sides = [
            async () => changes.push(await timedRun(admin, `/api/apps/${APP}/sso`, { account: round % 2 === 0 ? 'oidc' : 'header' })),
            async () => restarts.push(await timedRun(admin, `/api/apps/${APP}/action`, { action: 'restart' })),
        ];
        for (const side of round % 2 === 0 ? sides : sides.reverse()) {
            await side();
        }

        console.log(
            `  round ${round + 1}: change ${seconds(changes.at(-1) ?? Number.NaN)}, restart ${seconds(restarts.at(-1) ?? Number.NaN)}`,
        );
    }

    return { changes, restarts };
}

export async function benchSignIn(): Promise<BenchFigure> {
    const cleanups: Array<() => Promise<void> | void> = [];
    try {
        const services: RunningServices = await startServices();
        cleanups.push(() => services.stop());
        const authentik = await startAuthentikStandIn();
        cleanups.push(() => authentik.close());
        authentik.addUser({ username: 'operator', password: 'operator-password', isSuperuser: true });
        const image = `${services.exports.REGISTRY_URL}/gatehouse-bench/${APP}:1`;
        buildWebImage(image, '<h1>sign-in bench</h1>\n', true);
        const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
        const gatehouse = await startGatehouse({ ...withoutAcme, BASE_DOMAIN, APPS_FIRST_HOST_PORT: String(await freePort()) });
        cleanups.push(() => gatehouse.stop());
        cleanups.push(() => removeProjects([APP]));
        const admin = await signIn(`http://127.0.0.1:${gatehouse.port}`, gatehouse.dataDir);
        await deployBehindProvider(admin, authentik, image);
        const { changes, restarts } = await measure(admin);
        const ratio = median(changes) / median(restarts);
        return {
            name: 'POST /api/apps/{name}/sso (method change: provider objects, files, container recreated, nginx reload, checks)',
            measured: `median ${seconds(median(changes))} (${changes.map(seconds).join(', ')})`,
            baseline: `POST /api/apps/{name}/action restart of the same app: median ${seconds(median(restarts))} (${restarts.map(seconds).join(', ')})`,
            ratio,
            target: `<= ${TARGET_RATIO}`,
            met: ratio <= TARGET_RATIO,
            notes:
                `${ROUNDS} rounds each, alternating which goes first; each change switches between oidc and header, so the ` +
                'site and the compose file change and the container is recreated every time (under oidc the OpenID provider ' +
                'and application are made or updated at the provider and the discovery document is checked). One busybox ' +
                'httpd service behind the authentik stand-in (forward auth, checked through nginx), stopped at once (its ' +
                "image's stop signal is SIGKILL: busybox, process 1, ignores SIGTERM). Times from the POST to the end event " +
                'on the run stream.',
        };
    } finally {
        for (const cleanup of cleanups.reverse()) {
            await cleanup();
        }
    }
}
