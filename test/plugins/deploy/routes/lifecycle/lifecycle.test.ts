// needs: docker
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import Dns from 'node:dns';
import Fs from 'node:fs';
import Https from 'node:https';
import Path from 'node:path';
import type { TLSSocket } from 'node:tls';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { loadDnsProvider } from '../../../../../plugins/deploy/domain/dns/dns-providers.ts';
import { dnsEnvironment, type RunningBind, startBind } from '../../../../support/bind.ts';
import { buildWebImage, docker, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { readEvents, type SseMessage } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
const APPS = ['bazaar', 'chronicle', 'codex', 'ledger', 'memo', 'quill'];

/** The A records BIND serves for a name now (none: an empty list). */
async function addressesAt(server: string, name: string): Promise<string[]> {
    const resolver = new Dns.promises.Resolver();
    resolver.setServers([server]);
    try {
        return await resolver.resolve4(name);
    } catch {
        return [];
    }
}

interface EndedRun {
    id: number;
    state: string;
    error: string | null;
}

/** GET through the managed nginx as a visitor would: https://<domain>:<port>/ with SNI, chain not checked here. */
function fetchThroughNginx(
    domain: string,
    port: number,
): Promise<{ status: number; body: string; certificate: X509Certificate; headers: Record<string, string | string[] | undefined> }> {
    return new Promise((resolve, reject) => {
        const request = Https.get(
            {
                host: '127.0.0.1',
                port,
                path: '/',
                agent: false,
                servername: domain,
                headers: { host: domain },
                rejectUnauthorized: false,
                timeout: 5000,
            },
            (response) => {
                const certificate = new X509Certificate((response.socket as TLSSocket).getPeerCertificate().raw);
                let body = '';
                response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
                response.once('end', () => resolve({ status: response.statusCode ?? 0, body, certificate, headers: response.headers }));
            },
        );
        request.once('error', reject);
    });
}

function endOf(messages: SseMessage[]): EndedRun {
    const end = messages.find((message) => message.event === 'end');
    if (!end) {
        throw new Error('the stream closed without an end event');
    }

    return JSON.parse(end.data) as EndedRun;
}

function linesOf(messages: SseMessage[]): Array<{ seq: number; step: string; level: string; text: string }> {
    return messages.filter((message) => message.event === 'event').map((message) => JSON.parse(message.data));
}

describe('deploy manager: deploying for real on Docker, nginx and ACME', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let bind: RunningBind;
    let server: DeployTestServer;
    let admin: Browser;
    let registry: string;
    let webPort: number;
    let httpsPort: number;
    const engine = new Docker();
    const images: string[] = [];

    const follow = async (runId: number, headers: Record<string, string> = {}) =>
        await readEvents(admin, `/api/runs/${runId}/events`, headers);

    const run = async (method: 'post' | 'put' | 'delete', path: string, payload: unknown) => {
        const response = await admin[method](path, payload);
        expect(response.status, response.text).to.equal(202);
        const messages = await follow((response.body as { runId: number }).runId);
        return { runId: (response.body as { runId: number }).runId, messages, end: endOf(messages) };
    };

    const containerIds = async (project: string): Promise<Record<string, string>> =>
        Object.fromEntries(
            (await engine.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${project}`] } })).map((container) => [
                container.Labels['com.docker.compose.service'] ?? '',
                container.Id,
            ]),
        );

    /** Creates and deploys an app whose web service (image gatehouse-test/<repository>:1) mounts a `data` volume. */
    const deployWithDataVolume = async (name: string, repository: string, moreMounts: string[] = []) => {
        const created = await admin.post('/api/apps', { name, image: `${registry}/gatehouse-test/${repository}`, tag: '1' });
        expect(created.status).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = [
            'services:',
            '  web:',
            `    image: ${registry}/gatehouse-test/${repository}:1`,
            '    ports:',
            `      - "127.0.0.1:${port}:80"`,
            '    volumes:',
            '      - data:/data',
            ...moreMounts.map((mount) => `      - ${mount}`),
            'volumes:',
            '  data: {}',
            '',
        ].join('\n');
        expect((await admin.put(`/api/apps/${name}/draft`, { compose, auth: { access: 'public' } })).status).to.equal(200);
        const deployed = await run('post', `/api/apps/${name}/deploy`, {});
        expect(deployed.end.state, JSON.stringify(linesOf(deployed.messages))).to.equal('succeeded');
        return deployed;
    };

    /**
     * bazaar's first deploy, run by the first test that needs bazaar deployed. The tests that change bazaar put it back
     * as they found it (running version 1); the tests that delete an app delete one of their own.
     */
    let bazaarDeploy: ReturnType<typeof run> | undefined;
    const haveBazaar = () => (bazaarDeploy ??= run('post', '/api/apps/bazaar/deploy', {}));

    const composeFor = (tag: string, webHealth = 'wget -q -O- http://127.0.0.1/') =>
        [
            'services:',
            '  web:',
            `    image: ${registry}/gatehouse-test/bazaar:${tag}`,
            '    restart: unless-stopped',
            '    ports:',
            `      - "127.0.0.1:${webPort}:80"`,
            '    environment:',
            '      GREETING: ${GREETING}',
            '    healthcheck:',
            `      test: ["CMD-SHELL", "${webHealth}"]`,
            '      interval: 1s',
            '      timeout: 2s',
            '      retries: 3',
            '    depends_on:',
            '      db:',
            '        condition: service_healthy',
            '  db:',
            `    image: ${registry}/gatehouse-test/bazaar:1`,
            '    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]',
            '    volumes:',
            '      - data:/data',
            '    healthcheck:',
            '      test: ["CMD", "wget", "-q", "-O-", "http://127.0.0.1:8080/"]',
            '      interval: 1s',
            '      timeout: 2s',
            '      retries: 5',
            'volumes:',
            '  data: {}',
            '',
        ].join('\n');

    /** The apps' names are this file's own words: what a run of it that was killed left behind goes first. */
    const removeApps = async () => {
        await removeProjects(APPS);
        for (const app of APPS) {
            await engine
                .getVolume(`${app}_data`)
                .remove()
                .catch(() => undefined);
        }
    };

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        await removeApps();
        registry = services.exports.REGISTRY_URL;
        httpsPort = Number(services.exports.NGINX_HTTPS_PORT);
        for (const [tag, page] of [
            ['1', '<h1>bazaar v1</h1>\n'],
            ['2', '<h1>bazaar v2</h1>\n'],
        ] as const) {
            images.push(buildWebImage(`${registry}/gatehouse-test/bazaar:${tag}`, page, true));
        }

        images.push(buildWebImage(`${registry}/gatehouse-test/chronicle:1`, '<h1>chronicle</h1>\n', true));
        // memo's own image, which its test untags: bazaar's containers run on bazaar:1 meanwhile.
        images.push(buildWebImage(`${registry}/gatehouse-test/memo:1`, '<h1>memo</h1>\n', true));
        // Only the registry has them now: the deploy pulls.
        images.forEach((image) => docker('rmi', image));
        const started = await startBind();
        if (!started) {
            throw new Error('BIND (Debian bind9) is needed for the DNS records of deployed apps');
        }

        bind = started;
        server = await deployTestServer({
            ...services.exports,
            BASE_DOMAIN,
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            ...dnsEnvironment(bind),
        });
        admin = server.admin;
        const created = await admin.post('/api/apps', { name: 'bazaar', image: `${registry}/gatehouse-test/bazaar`, tag: '1' });
        expect(created.status).to.equal(201);
        // The app's site proxies to the host port the app was given.
        webPort = (created.body as { app: { hostPort: number } }).app.hostPort;
        // No identity provider here: the app is meant to be public.
        const saved = await admin.put('/api/apps/bazaar/draft', {
            compose: composeFor('1'),
            secrets: { GREETING: 'hello' },
            auth: { access: 'public' },
        });
        expect(saved.status, saved.text).to.equal(200);
    });

    after(async () => {
        await removeApps();
        await removeProjects([], images);
        await server?.context.cleanup();
        await bind?.stop();
        services?.stop();
    });

    it('deploys a two-service app: pulls, starts the dependency healthy first, serves it through nginx with a certificate from the ACME CA', async () => {
        const { runId, messages, end } = await haveBazaar();
        expect(end.state, JSON.stringify(linesOf(messages))).to.equal('succeeded');
        const lines = linesOf(messages);
        expect(lines.map((line) => line.seq)).to.equal(lines.map((_line, index) => index + 1));
        const steps = new Set(lines.map((line) => line.step));
        for (const step of ['files', 'images', 'containers', 'nginx', 'certificate', 'check']) {
            expect(steps.has(step), step).to.be.true();
        }

        const texts = lines.map((line) => line.text).join('\n');
        expect(texts).to.contain('web waits for db: healthy');
        expect(texts.indexOf('bazaar-db-1 is healthy')).to.be.below(texts.indexOf('Created and started bazaar-web-1'));

        const visit = await fetchThroughNginx(`bazaar.${BASE_DOMAIN}`, httpsPort);
        expect(visit.status).to.equal(200);
        expect(visit.body).to.contain('bazaar v1');
        expect(visit.certificate.subjectAltName).to.contain(`bazaar.${BASE_DOMAIN}`);
        expect(visit.certificate.issuer).to.match(/Pebble/i);

        expect(await addressesAt(bind.server, `bazaar.${BASE_DOMAIN}`)).to.equal(['127.0.0.1']);
        const app = await admin.get('/api/apps/bazaar');
        expect((app.body as { app: { state: string } }).app.state).to.equal('running');
        const stored = await admin.get(`/api/apps/bazaar/runs/${runId}`);
        expect((stored.body as { run: EndedRun }).run.state).to.equal('succeeded');
    });

    it('reads the deployed app: containers, the probe through nginx, the certificate and the logs', async () => {
        await haveBazaar();
        const status = (await admin.get('/api/apps/bazaar/status')).body as {
            containers: Array<{ service: string; state: string; health: string | null }>;
            probe: { http: { statusCode: number | null }; https: { statusCode: number | null } | null };
            certificate: { issuer: string; daysLeft: number } | null;
        };
        expect(status.containers.map((container) => [container.service, container.state, container.health])).to.equal([
            ['db', 'running', 'healthy'],
            ['web', 'running', 'healthy'],
        ]);
        expect(status.probe.https?.statusCode).to.equal(200);
        expect(status.certificate?.issuer).to.match(/Pebble/i);
        expect(status.certificate?.daysLeft ?? 0).to.be.above(0);

        const logs = (await admin.get('/api/apps/bazaar/logs?tail=3')).body as {
            services: Array<{ service: string; lines: Array<{ stream: string; text: string }> }>;
        };
        expect(logs.services.map((entry) => entry.service)).to.equal(['db', 'web']);
        const web = logs.services.find((entry) => entry.service === 'web');
        expect(web?.lines.length ?? 0).to.be.within(1, 3);
    });

    it('writes the files with their modes and labels the containers as Compose does', async () => {
        await haveBazaar();
        const appDir = Path.join(server.context.config.apps.appsDir, 'bazaar');
        expect(Fs.statSync(Path.join(appDir, 'secrets.env')).mode & 0o777).to.equal(0o600);
        expect(Fs.readFileSync(Path.join(appDir, 'secrets.env'), 'utf8')).to.equal('GREETING=hello\n');
        expect(Fs.statSync(Path.join(services.exports.NGINX_SITES_DIR, 'bazaar.conf')).mode & 0o777).to.equal(0o600);
        const web = await engine.getContainer('bazaar-web-1').inspect();
        expect(web.Config.Labels).to.include({
            'com.docker.compose.project': 'bazaar',
            'com.docker.compose.service': 'web',
            'com.docker.compose.oneoff': 'False',
        });
        expect(web.Config.Labels['com.docker.compose.config-hash']).to.match(/^[0-9a-f]{64}$/);
        expect(web.Config.Env).to.include('GREETING=hello');
        expect(web.HostConfig.PortBindings?.['80/tcp']).to.equal([{ HostIp: '127.0.0.1', HostPort: String(webPort) }]);
        // Debian's docker-compose finds the same project by its labels.
        const ps = spawnSync('docker-compose', ['-p', 'bazaar', '-f', Path.join(appDir, 'compose.yaml'), 'ps', '-q'], {
            encoding: 'utf8',
            env: { ...process.env, GREETING: 'hello' },
        });
        expect(ps.status, ps.stderr).to.equal(0);
        expect(ps.stdout.trim().split('\n').sort()).to.equal(Object.values(await containerIds('bazaar')).sort());
    });

    it('replays a run to a client that reconnects with Last-Event-ID, without duplicates', async () => {
        // bazaar's first deploy, whichever runs of bazaar other tests made since.
        const { runId } = await haveBazaar();
        const all = linesOf(await follow(runId));
        const resumed = await follow(runId, { 'last-event-id': '3' });
        expect(linesOf(resumed).map((line) => line.seq)).to.equal(all.slice(3).map((line) => line.seq));
        expect(endOf(resumed).state).to.equal('succeeded');
    });

    it('re-deploys without recreating what has not changed', async () => {
        await haveBazaar();
        const before = await containerIds('bazaar');
        const { end, messages } = await run('post', '/api/apps/bazaar/deploy', {});
        expect(end.state).to.equal('succeeded');
        expect(await containerIds('bazaar')).to.equal(before);
        expect(linesOf(messages).some((line) => line.text.includes('Kept bazaar-web-1'))).to.be.true();
    });

    it('stops, starts and restarts the app', async () => {
        await haveBazaar();
        expect((await run('post', '/api/apps/bazaar/action', { action: 'stop' })).end.state).to.equal('succeeded');
        expect((await engine.getContainer('bazaar-web-1').inspect()).State.Running).to.be.false();
        expect(((await admin.get('/api/apps/bazaar')).body as { app: { state: string } }).app.state).to.equal('stopped');

        expect((await run('post', '/api/apps/bazaar/action', { action: 'start' })).end.state).to.equal('succeeded');
        expect((await engine.getContainer('bazaar-web-1').inspect()).State.Health?.Status).to.equal('healthy');

        const startedBefore = (await engine.getContainer('bazaar-web-1').inspect()).State.StartedAt;
        expect((await run('post', '/api/apps/bazaar/action', { action: 'restart' })).end.state).to.equal('succeeded');
        expect((await engine.getContainer('bazaar-web-1').inspect()).State.StartedAt).to.not.equal(startedBefore);
        expect((await fetchThroughNginx(`bazaar.${BASE_DOMAIN}`, httpsPort)).body).to.contain('bazaar v1');
    });

    it('puts back a container an interrupted run left set aside', async () => {
        await haveBazaar();
        const before = await containerIds('bazaar');
        const web = engine.getContainer('bazaar-web-1');
        await web.stop();
        await web.rename({ name: 'bazaar-web-1-previous-interrupted1' });
        const { end, messages } = await run('post', '/api/apps/bazaar/deploy', {});
        expect(end.state).to.equal('succeeded');
        expect(linesOf(messages).map((line) => line.text)).to.include('Put back bazaar-web-1, left set aside by an interrupted run');
        expect(await containerIds('bazaar')).to.equal(before);
        expect((await engine.getContainer('bazaar-web-1').inspect()).State.Running).to.be.true();
    });

    it('rolls a broken compose update back and leaves the previous version serving, visitors never seeing the broken one', async () => {
        await haveBazaar();
        const before = await containerIds('bazaar');
        // What visitors get through nginx while the update runs, polled until it ends.
        const seen = new Set<string>();
        let updating = true;
        const visiting = (async () => {
            while (updating) {
                const visit = await fetchThroughNginx(`bazaar.${BASE_DOMAIN}`, httpsPort).catch((error: Error) => error);
                if (visit instanceof Error) seen.add(`error ${visit.message}`);
                else if (visit.status === 503)
                    seen.add(`503 retry-after ${String(visit.headers['retry-after'])} ${visit.body.includes('being updated')}`);
                else seen.add(`${visit.status} ${/bazaar v\d/.exec(visit.body)?.[0] ?? visit.body.slice(0, 80)}`);
                await new Promise((resolve) => setTimeout(resolve, 50));
            }
        })();
        const { end, messages } = await run('put', '/api/apps/bazaar/compose', { mode: 'text', text: composeFor('2', 'exit 1') }).finally(
            () => {
                updating = false;
            },
        );
        await visiting;
        expect([...seen].sort()).to.equal(['200 bazaar v1', '503 retry-after 15 true']);
        expect(linesOf(messages).map((line) => line.text)).to.include(
            "Visitors see a maintenance page (503) while the app's containers are replaced",
        );
        expect(end.state).to.equal('rolled back');
        expect(end.error).to.contain('bazaar-web-1 is unhealthy');
        const rollback = linesOf(messages).filter((line) => line.step === 'rollback');
        expect(rollback.map((line) => line.text).join('\n')).to.contain('put back bazaar-web-1');
        expect(await containerIds('bazaar')).to.equal(before);
        expect((await fetchThroughNginx(`bazaar.${BASE_DOMAIN}`, httpsPort)).body).to.contain('bazaar v1');
        const onDisk = Fs.readFileSync(Path.join(server.context.config.apps.appsDir, 'bazaar', 'compose.yaml'), 'utf8');
        expect(onDisk).to.contain('bazaar:1');
        const draft = ((await admin.get('/api/apps/bazaar')).body as { app: { draft: { compose: string } } }).app.draft.compose;
        expect(draft).to.contain('bazaar:1').and.to.not.contain('bazaar:2');
        expect(((await admin.get('/api/apps/bazaar')).body as { app: { tag: string } }).app.tag).to.equal('1');
    });

    it('applies a working compose update, recreating only the changed service', async () => {
        await haveBazaar();
        const before = await containerIds('bazaar');
        try {
            const { end } = await run('put', '/api/apps/bazaar/compose', { mode: 'text', text: composeFor('2') });
            expect(end.state).to.equal('succeeded');
            const after = await containerIds('bazaar');
            expect(after.db).to.equal(before.db);
            expect(after.web).to.not.equal(before.web);
            expect((await fetchThroughNginx(`bazaar.${BASE_DOMAIN}`, httpsPort)).body).to.contain('bazaar v2');
            // The app names the image its main service runs now.
            const app = ((await admin.get('/api/apps/bazaar')).body as { app: { image: string; tag: string } }).app;
            expect(app).to.include({ image: `${registry}/gatehouse-test/bazaar`, tag: '2' });
        } finally {
            // Version 1 back, which the other tests of bazaar find.
            const restored = await run('put', '/api/apps/bazaar/compose', { mode: 'text', text: composeFor('1') });
            expect(restored.end.state, JSON.stringify(linesOf(restored.messages))).to.equal('succeeded');
        }
    });

    it('rolls back an nginx site that nginx refuses, keeping the previous site loaded', async () => {
        await haveBazaar();
        const sitePath = Path.join(services.exports.NGINX_SITES_DIR, 'bazaar.conf');
        const previous = Fs.readFileSync(sitePath, 'utf8');
        const served = /bazaar v\d/.exec((await fetchThroughNginx(`bazaar.${BASE_DOMAIN}`, httpsPort)).body)?.[0];
        expect(served).to.exist();
        const siteDraft = async () => ((await admin.get('/api/apps/bazaar')).body as { app: { draft: { nginx: string } } }).app.draft.nginx;
        const draftBefore = await siteDraft();
        const broken = previous.replace('client_max_body_size', 'no_such_directive');
        const { end } = await run('put', '/api/apps/bazaar/nginx', { mode: 'text', text: broken });
        expect(end.state).to.equal('rolled back');
        expect(end.error).to.contain('no_such_directive');
        expect(Fs.readFileSync(sitePath, 'utf8')).to.equal(previous);
        expect((await fetchThroughNginx(`bazaar.${BASE_DOMAIN}`, httpsPort)).body).to.contain(String(served));
        // The draft goes back too, so that the next deploy writes the site nginx loaded, not the refused one.
        expect(await siteDraft()).to.equal(draftBefore);
    });

    it('rolls a first deploy back with its DNS record: a name that had an address gets it back', async () => {
        const dns = await loadDnsProvider(server.context.config.host.dns);
        if (!dns) throw new Error('the test server manages DNS records');
        const domain = `quill.${BASE_DOMAIN}`;
        await dns.setAddress(domain, '192.0.2.99', 60);
        const created = await admin.post('/api/apps', { name: 'quill', image: `${registry}/gatehouse-test/bazaar`, tag: '1' });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        // Nothing listens on 8081 in the container: the check through nginx fails after the DNS step.
        const compose = [
            'services:',
            '  web:',
            `    image: ${registry}/gatehouse-test/bazaar:1`,
            '    ports:',
            `      - "127.0.0.1:${port}:8081"`,
            '',
        ];
        expect((await admin.put('/api/apps/quill/draft', { compose: compose.join('\n'), auth: { access: 'public' } })).status).to.equal(
            200,
        );

        const { end, messages } = await run('post', '/api/apps/quill/deploy', {});
        expect(end.state, JSON.stringify(linesOf(messages))).to.equal('rolled back');
        expect(linesOf(messages).map((line) => line.text)).to.include(`DNS: ${domain} now points at 127.0.0.1 (rfc2136)`);
        expect(linesOf(messages).find((line) => line.text.startsWith('Rolled back:'))?.text).to.contain(
            `pointed ${domain} back at 192.0.2.99`,
        );
        expect(await addressesAt(bind.server, domain)).to.equal(['192.0.2.99']);
        expect(((await admin.get('/api/apps/quill')).body as { app: { state: string } }).app.state).to.equal('draft');
        await dns.removeAddress(domain);
    });

    it('refuses lint risks without acceptRisks (422, nothing saved), a second run while one is in progress (409) and a wrong confirmation', async () => {
        await haveBazaar();
        const risky = composeFor('2').replace('    restart: unless-stopped\n', '    restart: unless-stopped\n    privileged: true\n');
        const refused = await admin.put('/api/apps/bazaar/compose', { mode: 'text', text: risky });
        expect(refused.status).to.equal(422);
        expect((refused.body as { error: string }).error).to.contain('acceptRisks');
        expect(((await admin.get('/api/apps/bazaar')).body as { app: { draft: { compose: string } } }).app.draft.compose).to.not.contain(
            'privileged',
        );

        const first = await admin.post('/api/apps/bazaar/action', { action: 'restart' });
        expect(first.status).to.equal(202);
        const second = await admin.post('/api/apps/bazaar/deploy', {});
        expect(second.status).to.equal(409);
        const restarted = await follow((first.body as { runId: number }).runId);
        expect(endOf(restarted).state, JSON.stringify(linesOf(restarted))).to.equal('succeeded');

        const editor = await server.signInAs('editor');
        expect((await editor.delete('/api/apps/bazaar', { confirm: 'bazaar' })).status).to.equal(403);
        expect((await admin.delete('/api/apps/bazaar', { confirm: 'shopp' })).status).to.equal(422);
        expect((await admin.post('/api/apps/bazaar/action', { action: 'explode' })).status).to.equal(422);
        expect((await admin.put('/api/apps/bazaar/compose', { mode: 'model', text: composeFor('2') })).status).to.equal(422);
        expect((await admin.put('/api/apps/bazaar/nginx', { mode: 'text', spec: {} })).status).to.equal(422);
    });

    it('deletes with no options: containers and site go, data, volume, image and certificate stay', async () => {
        // An app of its own (bazaar's image), so that the other tests keep bazaar.
        await deployWithDataVolume('ledger', 'bazaar');
        const certificateDir = Path.join(server.context.config.apps.certificatesDir, `ledger.${BASE_DOMAIN}`);
        expect(Fs.existsSync(certificateDir)).to.be.true();
        const { end } = await run('delete', '/api/apps/ledger', { confirm: 'ledger' });
        expect(end.state).to.equal('succeeded');
        expect(await containerIds('ledger')).to.equal({});
        expect(Fs.existsSync(Path.join(services.exports.NGINX_SITES_DIR, 'ledger.conf'))).to.be.false();
        expect(Fs.existsSync(Path.join(server.context.config.apps.appsDir, 'ledger', 'compose.yaml'))).to.be.true();
        expect(Fs.existsSync(certificateDir)).to.be.true();
        expect((await engine.getVolume('ledger_data').inspect()).Name).to.equal('ledger_data');
        expect((await engine.getImage(`${registry}/gatehouse-test/bazaar:1`).inspect()).Id).to.exist();
        expect((await admin.get('/api/apps/ledger')).status).to.equal(404);
        // Without removeDns the record stays.
        expect(await addressesAt(bind.server, `ledger.${BASE_DOMAIN}`)).to.equal(['127.0.0.1']);
    });

    it('deletes with every option, archiving the data and never removing what was there before', async () => {
        // A volume that exists before the app: the deploy uses it, the delete must keep it.
        await engine.createVolume({ Name: 'chronicle_data' });
        const deployed = await deployWithDataVolume('chronicle', 'chronicle', ['./uploads:/uploads']);
        expect(await addressesAt(bind.server, `chronicle.${BASE_DOMAIN}`)).to.equal(['127.0.0.1']);
        const appDir = Path.join(server.context.config.apps.appsDir, 'chronicle');
        Fs.writeFileSync(Path.join(appDir, 'uploads', 'photo.txt'), 'a photo\n');

        const options = {
            deleteData: true,
            removeDns: true,
            removeCert: true,
            removeAccess: true,
            removeVolumes: true,
            removeImages: true,
            forgetHistory: true,
        };
        const { end, messages, runId } = await run('delete', '/api/apps/chronicle', { confirm: 'chronicle', ...options });
        expect(end.state, JSON.stringify(linesOf(messages))).to.equal('succeeded');
        const texts = linesOf(messages)
            .map((line) => line.text)
            .join('\n');
        expect(texts).to.contain('Kept volume chronicle_data');
        expect((await engine.getVolume('chronicle_data').inspect()).Name).to.equal('chronicle_data');
        await expect(engine.getImage(`${registry}/gatehouse-test/chronicle:1`).inspect()).to.reject();
        expect(Fs.existsSync(appDir)).to.be.false();
        expect(Fs.existsSync(Path.join(server.context.config.apps.certificatesDir, `chronicle.${BASE_DOMAIN}`))).to.be.false();
        expect(await addressesAt(bind.server, `chronicle.${BASE_DOMAIN}`)).to.equal([]);
        const archives = Fs.readdirSync(server.context.config.apps.archivesDir).filter((file) => file.startsWith('chronicle-'));
        expect(archives).to.have.length(1);
        const listing = spawnSync('tar', ['-tzf', Path.join(server.context.config.apps.archivesDir, archives[0] ?? '')], {
            encoding: 'utf8',
        });
        expect(listing.stdout).to.contain('chronicle/uploads/photo.txt');
        // History forgotten: only the delete run itself is left.
        expect((await admin.get(`/api/runs/${deployed.runId}`)).status).to.equal(404);
        expect((await admin.get(`/api/runs/${runId}`)).status).to.equal(200);
    });
    it('deletes what was there before the app too with includePreexisting', async () => {
        await engine.createVolume({ Name: 'codex_data' });
        await deployWithDataVolume('codex', 'bazaar');
        docker('exec', 'codex-web-1', 'sh', '-c', 'mkdir -p /data/pages && echo "the front page" > /data/pages/front.txt');

        const { end, messages } = await run('delete', '/api/apps/codex', {
            confirm: 'codex',
            removeVolumes: true,
            includePreexisting: true,
        });
        expect(end.state).to.equal('succeeded');
        expect(linesOf(messages).map((line) => line.text)).to.include('Removed volume codex_data');
        await expect(engine.getVolume('codex_data').inspect()).to.reject();

        // The volume's files were archived before it went, and the archive is readable by tar.
        const { archivesDir } = server.context.config.apps;
        const archives = Fs.readdirSync(archivesDir).filter((file) => file.startsWith('codex-'));
        expect(archives).to.have.length(1);
        const [archiveName = ''] = archives;
        expect(archiveName).to.endWith('-volume-codex_data.tar.gz');
        const archive = Path.join(archivesDir, archiveName);
        expect(Fs.statSync(archive).mode & 0o777).to.equal(0o600);
        const text = spawnSync('tar', ['-xzOf', archive, 'volume/pages/front.txt'], { encoding: 'utf8' });
        expect(text.stdout).to.equal('the front page\n');
        // Docker refuses to remove a volume a container still mounts: the reader went before the volume did.

        // removeArchives takes the volume's archive too.
        expect((await admin.post('/api/apps', { name: 'codex', image: `${registry}/gatehouse-test/bazaar`, tag: '1' })).status).to.equal(
            201,
        );
        expect((await run('delete', '/api/apps/codex', { confirm: 'codex', removeArchives: true })).end.state).to.equal('succeeded');
        expect(Fs.readdirSync(archivesDir).filter((file) => file.startsWith('codex-'))).to.equal([]);
    });

    it('keeps a volume it cannot archive rather than lose its files', async () => {
        const image = `${registry}/gatehouse-test/memo:1`;
        await deployWithDataVolume('memo', 'memo');
        // Untagged while its container runs: once the container goes, no image of the app is left to read the volume with.
        const imageId = docker('image', 'inspect', '--format', '{{.Id}}', image);
        docker('rmi', '-f', image);

        const { end, messages } = await run('delete', '/api/apps/memo', { confirm: 'memo', removeVolumes: true });
        expect(end.state).to.equal('succeeded');
        expect(linesOf(messages).map((line) => line.text)).to.include(
            'Kept volume memo_data: no image of the app is left to read it with, so it could not be archived (removeArchives removes it unarchived)',
        );
        expect((await engine.getVolume('memo_data').inspect()).Name).to.equal('memo_data');
        await engine.getImage(imageId).remove({ force: true });
    });
});
