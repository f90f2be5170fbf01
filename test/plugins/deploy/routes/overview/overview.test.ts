// needs: docker
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { ToolVersion } from '../../../../../plugins/deploy/domain/overview/host-tools.ts';
import type {
    AcmeIntegration,
    DnsIntegration,
    DockerEngineIntegration,
    NginxIntegration,
    RegistryIntegration,
} from '../../../../../plugins/deploy/domain/overview/integrations.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { freePort } from '../../../../helpers/server.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const REGISTRY_PASSWORD = 'registry-password-never-shown';
const TSIG_SECRET = Buffer.from('tsig-secret-never-shown').toString('base64');

interface SystemBody {
    tools: Record<string, ToolVersion>;
    integrations: {
        docker: DockerEngineIntegration;
        nginx: NginxIntegration;
        acme: AcmeIntegration;
        registry: RegistryIntegration;
        dns: DnsIntegration;
        identityProvider: { configured: boolean; health: { status: string } };
        oidcSignIn: { configured: boolean; issuer: string | null };
    };
    conventions: Record<string, unknown>;
}

interface DashboardBody {
    apps: { total: number; byState: Record<string, number> };
    users: { total: number; disabled: number };
    recentRuns: Array<{ id: number; app: string; kind: string; state: string; startedAt: string; endedAt: string | null }>;
    runsInProgress: number;
}

describe('deploy manager: dashboard and system', { timeout: 120_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let viewer: Browser;

    before(async () => {
        services = await startServices();
        server = await deployTestServer({
            ...services.exports,
            BASE_DOMAIN: 'apps.test',
            REGISTRY_USERNAME: 'deployer',
            REGISTRY_PASSWORD,
            DNS_PROVIDER: 'rfc2136',
            DNS_SERVER: '127.0.0.1:53',
            DNS_ZONE: 'apps.test',
            DNS_TSIG_KEY_NAME: 'gatehouse-key',
            DNS_TSIG_SECRET: TSIG_SECRET,
        });
        viewer = await server.signInAs('viewer');
    });

    after(async () => {
        await server?.context.cleanup();
        services?.stop();
        if (services) {
            Fs.rmSync(Path.dirname(Path.dirname(services.exports.NGINX_CONF)), { recursive: true, force: true });
        }
    });

    it('counts apps by state, users, runs in progress, and lists the ten latest runs across apps', async () => {
        for (const name of ['alpha', 'beta']) {
            expect((await server.admin.post('/api/apps', { name, image: 'nginx' })).status).to.equal(201);
        }

        const disabled = await server.signInAs('editor');
        const me = (await disabled.get('/api/auth/me')).body as { user: { id: number } };
        expect((await server.admin.put(`/api/admin/users/${me.user.id}`, { disabled: true })).status).to.equal(200);

        const knex = server.context.server.app.knex;
        const startedAt = Date.UTC(2026, 0, 1);
        for (let index = 0; index < 12; index += 1) {
            const running = index === 11;
            await knex('dp_runs').insert({
                app_name: index % 2 === 0 ? 'alpha' : 'beta',
                kind: 'deploy',
                state: running ? 'running' : 'succeeded',
                started_at: startedAt + index * 60_000,
                ended_at: running ? null : startedAt + index * 60_000 + 30_000,
            });
        }

        const response = await viewer.get('/api/dashboard');
        expect(response.status).to.equal(200);
        const body = response.body as DashboardBody;
        expect(body.apps).to.equal({ total: 2, byState: { draft: 2 } });
        expect(body.users).to.equal({ total: 3, disabled: 1 });
        expect(body.runsInProgress).to.equal(1);
        expect(body.recentRuns.length).to.equal(10);
        expect(body.recentRuns[0]).to.equal({
            id: 12,
            app: 'beta',
            kind: 'deploy',
            state: 'running',
            startedAt: '2026-01-01T00:11:00Z',
            endedAt: null,
        });
        expect(body.recentRuns[1]).to.include({ id: 11, app: 'alpha', state: 'succeeded', endedAt: '2026-01-01T00:10:30Z' });
        expect(body.recentRuns.map((run) => run.id)).to.equal([12, 11, 10, 9, 8, 7, 6, 5, 4, 3]);
    });

    it('finds the tool versions on the host, the Docker engine among them', async () => {
        const response = await viewer.get('/api/system');
        expect(response.status).to.equal(200);
        const { tools } = response.body as SystemBody;
        expect(Object.keys(tools).sort()).to.equal([
            'docker',
            'dockerCompose',
            'dockerComposePlugin',
            'dockerEngine',
            'git',
            'nginx',
            'openssl',
        ]);
        for (const name of ['docker', 'dockerCompose', 'dockerEngine', 'git', 'nginx', 'openssl']) {
            expect(tools[name]?.found, name).to.be.true();
            expect(tools[name]?.version, name).to.match(/^v?\d+\.\d+/);
        }

        // The Compose v2 plugin may be absent; either way it is reported.
        expect(tools.dockerComposePlugin?.found).to.be.a.boolean();
    });

    it('reports each integration and whether it answers, showing only whether secrets are set', async () => {
        const response = await viewer.get('/api/system');
        const { integrations } = response.body as SystemBody;
        const { exports } = services;
        expect(integrations.docker.reachable).to.be.true();
        expect(integrations.docker.version).to.match(/^\d+\.\d+/);
        expect(integrations.docker.error).to.be.null();

        expect(integrations.nginx).to.include({ binary: exports.NGINX_BIN, confPath: exports.NGINX_CONF });
        expect(integrations.nginx.configTest.ok, integrations.nginx.configTest.output).to.be.true();

        expect(integrations.acme).to.include({
            configured: true,
            directoryUrl: exports.ACME_DIRECTORY_URL,
            caFile: exports.ACME_CA_FILE,
            reachable: true,
            error: null,
        });
        expect(integrations.registry).to.include({
            configured: true,
            url: exports.REGISTRY_URL,
            username: 'deployer',
            passwordSet: true,
            reachable: true,
            statusCode: 200,
            error: null,
        });
        expect(integrations.dns).to.include({ configured: true, provider: 'rfc2136', tsigKeyName: 'gatehouse-key', tsigSecretSet: true });
        expect(integrations.identityProvider).to.include({ configured: false, kind: null, url: null });
        expect(integrations.identityProvider.health.status).to.equal('not-configured');
        expect(integrations.oidcSignIn).to.equal({ configured: false, issuer: null });

        expect(response.text).to.not.contain(REGISTRY_PASSWORD);
        expect(response.text).to.not.contain(TSIG_SECRET);
    });

    it('runs nginx -t at most once a minute', async () => {
        const first = ((await viewer.get('/api/system')).body as SystemBody).integrations.nginx.configTest.checkedAt;
        const second = ((await viewer.get('/api/system')).body as SystemBody).integrations.nginx.configTest.checkedAt;
        expect(second).to.equal(first);
    });

    it('states the conventions apps are laid out by', async () => {
        const { conventions } = (await viewer.get('/api/system')).body as SystemBody;
        const { config } = server.context;
        expect(conventions).to.equal({
            baseDomain: 'apps.test',
            appsDir: config.apps.appsDir,
            nginxSitesDir: services.exports.NGINX_SITES_DIR,
            certificatesDir: config.apps.certificatesDir,
            acmeWebroot: services.exports.ACME_WEBROOT,
            httpPort: Number(services.exports.NGINX_HTTP_PORT),
            httpsPort: Number(services.exports.NGINX_HTTPS_PORT),
            firstHostPort: 20000,
            publicUrl: config.publicUrl,
            dataDir: config.dataDir,
            services: ['git', 'deploy'],
        });
    });

    it('says what is not configured, and what does not answer', async () => {
        const silent = await deployTestServer({
            ACME_DIRECTORY_URL: `https://127.0.0.1:${await freePort()}/dir`,
            REGISTRY_URL: `127.0.0.1:${await freePort()}`,
        });
        try {
            const { integrations } = (await silent.admin.get('/api/system')).body as SystemBody;
            expect(integrations.acme).to.include({ configured: true, reachable: false, caFile: null });
            expect(integrations.acme.error).to.contain('ECONNREFUSED');
            expect(integrations.registry).to.include({ configured: true, reachable: false, username: null, passwordSet: false });
            expect(integrations.registry.error).to.contain('ECONNREFUSED');
            expect(integrations.dns).to.include({ configured: false, provider: null, tsigSecretSet: false });
        } finally {
            await silent.context.cleanup();
        }

        const bare = await deployTestServer();
        try {
            const { integrations } = (await bare.admin.get('/api/system')).body as SystemBody;
            expect(integrations.acme).to.include({ configured: false, directoryUrl: null, reachable: null, error: null });
            expect(integrations.registry).to.include({ configured: false, url: null, reachable: null });
        } finally {
            await bare.context.cleanup();
        }
    });
});
