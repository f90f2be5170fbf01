// needs: docker
import { spawnSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { certificatePaths } from '../../../../../plugins/deploy/domain/host/certificate-info.ts';
import { dockerClient } from '../../../../../plugins/deploy/domain/host/docker-client.ts';
import { reloadNginx } from '../../../../../plugins/deploy/domain/host/nginx-control.ts';
import { logLines } from '../../../../../plugins/deploy/domain/host/docker-logs.ts';
import type { FollowedLine } from '../../../../../plugins/deploy/domain/status/log-follow.ts';
import type { AppLogs, AppStatus, ContainerLogs, ContainerStatus } from '../../../../../plugins/deploy/domain/status/status-service.ts';
import { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { freePort } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { buildTestImage, buildWebImage } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { followEvents } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Crypto.randomBytes(4).toString('hex');
const APP = `status-${SUFFIX}`;
const DRAFT = `draft-${SUFFIX}`;
const NETWORK = `${APP}_default`;
const WEB_IMAGE = `gatehouse-test/status-web:${SUFFIX}`;
const WORKER_IMAGE = `gatehouse-test/status-worker:${SUFFIX}`;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * The first run writes to both streams and fails, so the engine restarts it once (on-failure); the second writes
 * twenty lines to each stream, then serves the page its health check fetches.
 */
const WORKER_SCRIPT = [
    'if [ ! -e /www/ran ]; then touch /www/ran; echo "first run"; echo "first failure" >&2; exit 1; fi',
    'i=1; while [ $i -le 20 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done',
    'exec httpd -f -p 80 -h /www',
].join('; ');

function composeLabels(service: string): Record<string, string> {
    return {
        'com.docker.compose.project': APP,
        'com.docker.compose.service': service,
        'com.docker.compose.container-number': '1',
        'com.docker.compose.config-hash': Crypto.createHash('sha256').update(`${APP}/${service}`).digest('hex'),
        'com.docker.compose.oneoff': 'False',
        'io.gatehouse.managed': 'true',
    };
}

async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
    let last: T | undefined;
    const settled = async () => {
        last = await read();
        return done(last) && { value: last };
    };
    const { value } = await waitUntil(what, settled, { timeoutMs, intervalMs: 250 }).catch((error: Error) => {
        throw new Error(`${error.message}: still ${JSON.stringify(last)}`);
    });
    return value;
}

function byService<T extends { service: string }>(items: T[], service: string): T {
    const found = items.find((item) => item.service === service);
    if (!found) {
        throw new Error(`no ${service} in ${JSON.stringify(items)}`);
    }

    return found;
}

describe('deploy manager: app status and logs', { timeout: 180_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let viewer: Browser;
    let webPort: number;
    let sitePath: string;
    let domain: string;

    const status = async (browser: Browser = viewer) => {
        const response = await browser.get(`/api/apps/${APP}/status`);
        expect(response.status, response.text).to.equal(200);
        return response.body as AppStatus;
    };

    const logs = async (query = '') => {
        const response = await viewer.get(`/api/apps/${APP}/logs${query}`);
        expect(response.status, response.text).to.equal(200);
        return response.body as AppLogs;
    };

    const writeSite = async (tls: boolean) => {
        const { nginxHttpPort, nginxHttpsPort } = server.context.config.host;
        const proxy = `location / { proxy_pass http://127.0.0.1:${webPort}; }`;
        const { certificate, key } = certificatePaths(server.context.config.apps.certificatesDir, domain);
        const blocks = [`server {\n    listen 127.0.0.1:${nginxHttpPort};\n    server_name ${domain};\n    ${proxy}\n}`];
        if (tls) {
            blocks.push(
                [
                    'server {',
                    `    listen 127.0.0.1:${nginxHttpsPort} ssl;`,
                    `    server_name ${domain};`,
                    `    ssl_certificate ${certificate};`,
                    `    ssl_certificate_key ${key};`,
                    `    ${proxy}`,
                    '}',
                ].join('\n'),
            );
        }

        Fs.writeFileSync(sitePath, `${blocks.join('\n')}\n`);
        const reloaded = await reloadNginx(server.context.config.host);
        expect(reloaded.ok, reloaded.output).to.be.true();
    };

    /** Puts the site back as `text` had it (no site when undefined), and has nginx load it. */
    const restoreSite = async (text: string | undefined) => {
        if (text === undefined) {
            Fs.rmSync(sitePath, { force: true });
        } else {
            Fs.writeFileSync(sitePath, text);
        }

        const reloaded = await reloadNginx(server.context.config.host);
        expect(reloaded.ok, reloaded.output).to.be.true();
    };

    before(async () => {
        services = await startServices();
        server = await deployTestServer({ ...services.exports });
        viewer = await server.signInAs('viewer');
        const created = await server.admin.post('/api/apps', { name: APP, image: 'gatehouse-test/status-web', tag: SUFFIX });
        expect(created.status, created.text).to.equal(201);
        domain = (created.body as { app: { domain: string } }).app.domain;
        expect((await server.admin.post('/api/apps', { name: DRAFT, image: 'nginx' })).status).to.equal(201);
        sitePath = Path.join(services.exports.NGINX_SITES_DIR, `${APP}.conf`);

        buildWebImage(WEB_IMAGE, '<h1>status page</h1>');
        buildTestImage(WORKER_IMAGE, {
            files: { '/www/index.html': 'worker' },
            lines: ['HEALTHCHECK --interval=1s --timeout=2s CMD ["wget", "-q", "-O-", "http://127.0.0.1/"]'],
        });
        webPort = await freePort();
        const engine = dockerClient();
        await engine.createNetwork({
            Name: NETWORK,
            Labels: { 'com.docker.compose.project': APP, 'com.docker.compose.network': 'default' },
        });
        const containers = [
            await engine.createContainer({
                name: `${APP}-web-1`,
                Image: WEB_IMAGE,
                Labels: composeLabels('web'),
                ExposedPorts: { '80/tcp': {} },
                HostConfig: {
                    NetworkMode: NETWORK,
                    PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: String(webPort) }] },
                    RestartPolicy: { Name: 'unless-stopped' },
                },
            }),
            await engine.createContainer({
                name: `${APP}-worker-1`,
                Image: WORKER_IMAGE,
                Labels: composeLabels('worker'),
                Cmd: ['sh', '-c', WORKER_SCRIPT],
                HostConfig: { NetworkMode: NETWORK, RestartPolicy: { Name: 'on-failure' } },
            }),
            await engine.createContainer({
                name: `${APP}-console-1`,
                Image: WEB_IMAGE,
                Labels: composeLabels('console'),
                Tty: true,
                Cmd: ['sh', '-c', 'echo "tty line 1"; echo "tty line 2" >&2; exec sleep 3600'],
                HostConfig: { NetworkMode: NETWORK },
            }),
        ];
        for (const container of containers) {
            await container.start();
        }
    });

    after(async () => {
        const engine = dockerClient();
        const leftovers = await engine.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${APP}`] } });
        for (const container of leftovers) {
            await engine.getContainer(container.Id).remove({ force: true, v: true });
        }

        await engine
            .getNetwork(NETWORK)
            .remove()
            .catch(() => undefined);
        for (const image of [WEB_IMAGE, WORKER_IMAGE]) {
            spawnSync('docker', ['rmi', '-f', image], { stdio: 'ignore' });
        }

        if (sitePath && Fs.existsSync(sitePath)) {
            Fs.rmSync(sitePath);
            await reloadNginx(server.context.config.host);
        }

        await server?.context.cleanup();
        services?.stop();
        if (services) {
            Fs.rmSync(Path.dirname(Path.dirname(services.exports.NGINX_CONF)), { recursive: true, force: true });
        }
    });

    it("reports each container's service, state, image, published ports, health (reaching healthy) and restarts", async () => {
        const answer = await until(
            'the worker becomes healthy',
            () => status(),
            (body) => body.containers.find((container) => container.service === 'worker')?.health === 'healthy',
        );
        expect(answer).to.include({ app: APP, domain, state: 'draft' });
        expect(answer.containers.map((container) => container.service)).to.equal(['console', 'web', 'worker']);

        const web: ContainerStatus = byService(answer.containers, 'web');
        expect(web).to.include({ name: `${APP}-web-1`, state: 'running', health: null, restarts: 0, image: WEB_IMAGE, exitCode: null });
        expect(web.imageId).to.startWith('sha256:');
        expect(web.startedAt).to.match(RFC3339);
        expect(web.ports).to.equal([{ hostIp: '127.0.0.1', hostPort: webPort, containerPort: 80, protocol: 'tcp' }]);

        const worker = byService(answer.containers, 'worker');
        expect(worker).to.include({ name: `${APP}-worker-1`, state: 'running', health: 'healthy', restarts: 1, image: WORKER_IMAGE });
        expect(worker.ports).to.equal([]);
    });

    it('reports a stopped container as exited, with its exit code and no health', async () => {
        const engine = dockerClient();
        const probe = await engine.createContainer({
            name: `${APP}-oneshot-1`,
            Image: WEB_IMAGE,
            Labels: composeLabels('oneshot'),
            Cmd: ['sh', '-c', 'exit 3'],
            HostConfig: { NetworkMode: NETWORK },
        });
        try {
            await probe.start();
            await probe.wait();
            const oneshot = byService((await status()).containers, 'oneshot');
            expect(oneshot).to.include({ state: 'exited', exitCode: 3, health: null, restarts: 0 });
        } finally {
            await probe.remove({ force: true });
        }
    });

    it('probes the app through the real nginx, with the Host of its domain, and reports no certificate without one', async () => {
        // The app as it was made: no site and no certificate, whatever another test wrote for them.
        Fs.rmSync(certificatePaths(server.context.config.apps.certificatesDir, domain).dir, { recursive: true, force: true });
        await restoreSite(undefined);
        const before = await until(
            'nginx has no site for the app',
            () => status(),
            (body) => body.probe.http.statusCode === 404,
        );
        expect(before.probe.http).to.include({
            url: `http://127.0.0.1:${services.exports.NGINX_HTTP_PORT}/`,
            host: domain,
            statusCode: 404,
            ok: true,
        });
        expect(before.probe.https).to.be.null();
        expect(before.certificate).to.be.null();
        expect(before.certificateError).to.be.null();

        await writeSite(false);
        const answer = await until(
            'nginx proxies to the app',
            () => status(),
            (body) => body.probe.http.statusCode === 200,
        );
        expect(answer.probe.http.error).to.be.null();
        expect(answer.probe.http.ms).to.be.a.number().and.to.be.at.least(0).and.below(3000);
        expect(answer.probe.https).to.be.null();
    });

    it('reads the certificate when there is one, and probes HTTPS with the domain as server name', async () => {
        const { dir, certificate, key } = certificatePaths(server.context.config.apps.certificatesDir, domain);
        Fs.mkdirSync(dir, { recursive: true });
        const written = spawnSync('openssl', [
            'req',
            '-x509',
            '-newkey',
            'rsa:2048',
            '-nodes',
            '-days',
            '30',
            '-subj',
            `/CN=${domain}`,
            '-addext',
            `subjectAltName=DNS:${domain}`,
            '-keyout',
            key,
            '-out',
            certificate,
        ]);
        expect(written.status, String(written.stderr)).to.equal(0);

        await writeSite(true);
        // Both probes: nginx's old workers, still answering while the reload goes on, may not have the site yet.
        const answer = await until(
            'nginx answers over TLS and plain HTTP',
            () => status(),
            (body) => body.probe.https?.statusCode === 200 && body.probe.http.statusCode === 200,
        );
        expect(answer.certificate?.names).to.equal([domain]);
        expect(answer.certificate?.issuer).to.contain(`CN=${domain}`);
        expect(answer.certificate?.daysLeft ?? -1).to.be.within(28, 30);
        expect(answer.certificate?.notAfter).to.match(/^\d{4}-\d{2}-\d{2}T/);
        expect(answer.probe.https).to.include({
            url: `https://127.0.0.1:${services.exports.NGINX_HTTPS_PORT}/`,
            host: domain,
            error: null,
        });
        expect(answer.probe.http.statusCode).to.equal(200);
    });

    it('behind forward auth, counts the probe as serving only when the app itself answers too', async () => {
        const { nginxHttpPort } = server.context.config.host;
        // As authentik's nginx block does for a visitor without a session: nginx answers with the sign-in, not the app.
        const forwardAuthSite = (upstreamPort: number) =>
            [
                'server {',
                `    listen 127.0.0.1:${nginxHttpPort};`,
                `    server_name ${domain};`,
                '    location / {',
                '        auth_request /outpost.goauthentik.io/auth/nginx;',
                '        error_page 401 = @goauthentik_proxy_signin;',
                `        proxy_pass http://127.0.0.1:${upstreamPort};`,
                '    }',
                '    location /outpost.goauthentik.io {',
                '        return 401;',
                '    }',
                '    location @goauthentik_proxy_signin {',
                '        internal;',
                '        return 302 /outpost.goauthentik.io/start?rd=$request_uri;',
                '    }',
                '}',
                '',
            ].join('\n');
        const reload = async (site: string) => {
            Fs.writeFileSync(sitePath, site);
            const reloaded = await reloadNginx(server.context.config.host);
            expect(reloaded.ok, reloaded.output).to.be.true();
        };

        // The site as this test found it, put back after.
        const found = Fs.existsSync(sitePath) ? Fs.readFileSync(sitePath, 'utf8') : undefined;
        try {
            await reload(forwardAuthSite(webPort));
            const serving = await until(
                'nginx sends to the sign-in',
                () => status(),
                (body) => body.probe.http.statusCode === 302,
            );
            expect(serving.probe.http).to.include({ ok: true, error: null });

            const closedPort = await freePort();
            await reload(forwardAuthSite(closedPort));
            const silent = await until(
                'the probe sees the app silent',
                () => status(),
                (body) => !body.probe.http.ok,
            );
            expect(silent.probe.http.statusCode).to.equal(302);
            expect(silent.probe.http.error).to.contain(
                `nginx sends visitors to sign in, but its upstream http://127.0.0.1:${closedPort} did not answer`,
            );
        } finally {
            await restoreSite(found);
        }
    });

    it('gives each container its last lines, stdout and stderr demultiplexed, with timestamps', async () => {
        // busybox httpd -v logs each request on stderr: a request of this test's own, straight to the container.
        expect((await fetch(`http://127.0.0.1:${webPort}/`)).status).to.equal(200);
        const answer = await until(
            'the web container logs the request',
            () => logs(),
            (body) => byService(body.services, 'web').lines.some((line) => line.stream === 'stderr'),
        );
        expect(answer.tail).to.equal(200);
        expect(answer.services.map((entry) => entry.service)).to.equal(['console', 'web', 'worker']);
        const worker: ContainerLogs = byService(answer.services, 'worker');
        expect(worker).to.include({ container: `${APP}-worker-1`, tty: false, error: null });
        const stdout = worker.lines.filter((line) => line.stream === 'stdout').map((line) => line.text);
        const stderr = worker.lines.filter((line) => line.stream === 'stderr').map((line) => line.text);
        const numbered = (prefix: string) => Array.from({ length: 20 }, (_value, index) => `${prefix} ${index + 1}`);
        expect(stdout).to.equal(['first run', ...numbered('out')]);
        expect(stderr).to.equal(['first failure', ...numbered('err')]);
        for (const line of worker.lines) {
            expect(line.time).to.match(RFC3339);
            // A frame header would leave its stream byte (1 or 2) and zero bytes in the text.
            expect([...line.text].filter((character) => character.charCodeAt(0) < 0x09)).to.equal([]);
        }

        const console = byService(answer.services, 'console');
        expect(console.tty).to.be.true();
        expect(console.lines.map(({ stream, text }) => ({ stream, text }))).to.equal([
            { stream: 'stdout', text: 'tty line 1' },
            { stream: 'stdout', text: 'tty line 2' },
        ]);

        const web = byService(answer.services, 'web');
        expect(web.lines.some((line) => line.stream === 'stderr')).to.be.true();
    });

    it('follows the logs live: the last lines, then each new one as the container writes it, one service kept', async () => {
        // A container of its own to write to, so that the worker keeps the lines the other tests read.
        const live = await dockerClient().createContainer({
            name: `${APP}-live-1`,
            Image: WEB_IMAGE,
            Labels: composeLabels('live'),
            Cmd: ['sh', '-c', 'echo "live 1"; echo "live 2" >&2; echo "live 3"; echo "live 4"; exec sleep 3600'],
            HostConfig: { NetworkMode: NETWORK },
        });
        const followed = await (async () => {
            await live.start();
            await until(
                'the live container wrote its lines',
                () => logs(),
                (body) => body.services.find((entry) => entry.service === 'live')?.lines.length === 4,
            );
            return followEvents(viewer, `/api/apps/${APP}/logs/stream?tail=3&service=live`);
        })().catch(async (error: unknown) => {
            await live.remove({ force: true });
            throw error;
        });
        try {
            const lines = () =>
                followed.messages.filter((message) => message.event === 'line').map((message) => JSON.parse(message.data) as FollowedLine);
            await waitUntil('the last three lines of the live container', () => lines().length >= 3, { timeoutMs: 30_000, intervalMs: 50 });
            expect(lines().map(({ service, container }) => ({ service, container }))).to.equal(
                Array.from({ length: 3 }, () => ({ service: 'live', container: `${APP}-live-1` })),
            );
            for (const line of lines()) expect(line.time).to.match(RFC3339);

            // Something new in the container: its line arrives on the open stream.
            const mark = `live-${Crypto.randomBytes(4).toString('hex')}`;
            const exec = await live.exec({ Cmd: ['sh', '-c', `echo ${mark} > /proc/1/fd/1`] });
            await exec.start({ Detach: true });
            await waitUntil('the new line on the stream', () => lines().some((line) => line.text === mark), {
                timeoutMs: 30_000,
                intervalMs: 50,
            });
            expect(lines().find((line) => line.text === mark)?.stream).to.equal('stdout');
            expect(followed.ended).to.be.false();
        } finally {
            followed.close();
            await live.remove({ force: true });
        }

        const empty = await followEvents(viewer, `/api/apps/${APP}/logs/stream?service=nosuchservice`);
        await waitUntil('the end of a stream with nothing to follow', () => empty.ended, { timeoutMs: 10_000, intervalMs: 50 });
        expect(empty.messages.map((message) => message.event)).to.equal(['end']);
        expect(JSON.parse(empty.messages[0]?.data ?? '{}')).to.equal({ reason: 'the app has no container of the service nosuchservice' });

        expect((await viewer.get(`/api/apps/nosuchapp/logs/stream`)).status).to.equal(404);
        expect((await viewer.get(`/api/apps/${APP}/logs/stream?tail=-1`)).status).to.equal(422);
        expect((await new Browser(server.baseUrl).get(`/api/apps/${APP}/logs/stream`)).status).to.equal(401);
    });

    it('honours tail: the last N lines of each container', async () => {
        const full = byService((await logs()).services, 'worker').lines;
        const answer = await logs('?tail=5');
        expect(answer.tail).to.equal(5);
        const worker = byService(answer.services, 'worker');
        expect(worker.lines).to.equal(full.slice(-5));
        expect(byService(answer.services, 'console').lines.length).to.equal(2);
    });

    it('answers a draft with no containers with empty lists', async () => {
        const answer = (await viewer.get(`/api/apps/${DRAFT}/status`)).body as AppStatus;
        expect(answer.containers).to.equal([]);
        expect(answer.certificate).to.be.null();
        expect(answer.probe.http.statusCode).to.equal(404);
        const empty = await viewer.get(`/api/apps/${DRAFT}/logs`);
        expect(empty.status).to.equal(200);
        expect((empty.body as AppLogs).services).to.equal([]);
    });

    it('refuses an unknown app (404), a bad tail and anyone signed out', async () => {
        for (const path of ['/api/apps/nosuchapp/status', '/api/apps/nosuchapp/logs']) {
            const missing = await viewer.get(path);
            expect(missing.status).to.equal(404);
            expect(missing.body).to.equal({ error: 'app nosuchapp not found' });
        }

        for (const tail of ['0', '5001', 'many', '-3', '2.5']) {
            const bad = await viewer.get(`/api/apps/${APP}/logs?tail=${tail}`);
            expect(bad.status, `tail=${tail}`).to.equal(422);
            expect((bad.body as { error: string }).error).to.contain('tail');
        }

        const anonymous = new Browser(server.baseUrl);
        expect((await anonymous.get(`/api/apps/${APP}/status`)).status).to.equal(401);
    });

    it('answers 503 with the reason when the Docker engine cannot be reached', async () => {
        const previous = process.env.DOCKER_HOST;
        process.env.DOCKER_HOST = 'unix:///nonexistent/docker.sock';
        try {
            for (const path of [`/api/apps/${APP}/status`, `/api/apps/${APP}/logs`]) {
                const response = await viewer.get(path);
                expect(response.status).to.equal(503);
                expect((response.body as { error: string }).error).to.startWith(
                    'the Docker engine is not reachable (connect ENOENT /nonexistent/docker.sock',
                );
            }
        } finally {
            if (previous === undefined) {
                delete process.env.DOCKER_HOST;
            } else {
                process.env.DOCKER_HOST = previous;
            }
        }
    });
});

describe("deploy manager: reading Docker's log frames", () => {
    const frame = (stream: 1 | 2, payload: Buffer | string) => {
        const body = Buffer.from(payload);
        const header = Buffer.alloc(8);
        header[0] = stream;
        header.writeUInt32BE(body.length, 4);
        return Buffer.concat([header, body]);
    };

    it('joins a line, and a UTF-8 character, split over frames of one stream with the other stream between', () => {
        const euro = Buffer.from('€');
        const buffer = Buffer.concat([
            frame(1, '2026-01-01T00:00:00.123456789Z price: 5'),
            frame(2, '2026-01-01T00:00:01Z oops\n'),
            frame(1, Buffer.concat([Buffer.from(' '), euro.subarray(0, 1)])),
            frame(1, Buffer.concat([euro.subarray(1), Buffer.from('\n')])),
        ]);
        expect(logLines(buffer, false)).to.equal([
            { stream: 'stderr', time: '2026-01-01T00:00:01Z', text: 'oops' },
            { stream: 'stdout', time: '2026-01-01T00:00:00.123456789Z', text: 'price: 5 €' },
        ]);
    });

    it('keeps what arrived of a frame cut short, and a last line without its newline', () => {
        const whole = frame(1, '2026-01-01T00:00:00Z complete\n2026-01-01T00:00:01Z cut short');
        expect(logLines(whole.subarray(0, whole.length - 6), false).map((line) => line.text)).to.equal(['complete', 'cut']);
    });

    it('reads a TTY stream raw, without its carriage returns', () => {
        const buffer = Buffer.from('2026-01-01T00:00:00Z one\r\n2026-01-01T00:00:01Z two\r\n');
        expect(logLines(buffer, true)).to.equal([
            { stream: 'stdout', time: '2026-01-01T00:00:00Z', text: 'one' },
            { stream: 'stdout', time: '2026-01-01T00:00:01Z', text: 'two' },
        ]);
    });
});
