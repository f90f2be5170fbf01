// needs: docker
import { execFileSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../../../../support/authentik/index.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
const suffix = Crypto.randomBytes(3).toString('hex');
const GUARDED = `reloadfail-${suffix}`;
const FROZEN = `frozen-${suffix}`;
const DOOMED = `doomed-${suffix}`;
const APPS = [GUARDED, FROZEN, DOOMED];

/** A failed deploy is undone in every part, even when one part of the undo fails; only what the run changed is put back. */
describe('deploy manager: a rollback undoes every step and puts back only what the run changed', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let image: string;

    const run = async (path: string) => await runToEnd(admin, await admin.post(path, {}));
    const containersOf = async (app: string) =>
        await new Docker().listContainers({ all: true, filters: { label: [`com.docker.compose.project=${app}`] } });

    const createApp = async (name: string, environment: string) => {
        const created = await admin.post('/api/apps', { name, image: image.replace(/:1$/, ''), tag: '1' });
        expect(created.status, created.text).to.equal(201);
        await saveCompose(name, (created.body as { app: { hostPort: number } }).app.hostPort, environment);
        // No provider is connected yet: deployed so, the app is public (connectProvider makes it signed-in).
        const said = await admin.put(`/api/apps/${name}/draft`, { auth: { access: 'public' } });
        expect(said.status, said.text).to.equal(200);
    };

    const saveCompose = async (name: string, port: number, environment: string) => {
        const compose = ['services:', '  web:', `    image: ${image}`, '    environment:', `      MARK: ${environment}`];
        const saved = await admin.put(`/api/apps/${name}/draft`, {
            compose: [...compose, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n'),
        });
        expect(saved.status, saved.text).to.equal(200);
    };

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/rollback:1`, '<h1>rollback app</h1>\n', true);
        authentik = await startAuthentikStandIn();
        const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
        server = await deployTestServer({ ...withoutAcme, BASE_DOMAIN, APPS_FIRST_HOST_PORT: String(await appHostPorts()) });
        admin = server.admin;
        for (const name of APPS) {
            await createApp(name, 'first');
        }
    });

    after(async () => {
        await removeProjects(APPS, image ? [image] : []);
        await server?.context.cleanup();
        await authentik?.close();
        services?.stop();
    });

    /** Connects the provider; from then on a deploy without groups must say so, so every app of the file says signed-in. */
    const connectProvider = async () => {
        const connected = await admin.put('/api/admin/idp', { url: authentik.url, token: authentik.bootstrapToken });
        expect(connected.status, connected.text).to.equal(200);
        for (const name of APPS) {
            const said = await admin.put(`/api/apps/${name}/draft`, { auth: { access: 'signed-in' } });
            expect(said.status, said.text).to.equal(200);
        }
    };
    it('undoes the provider objects even when nginx cannot be reloaded, and reports the reload', async () => {
        await connectProvider();
        // Another site nginx cannot load: nginx -t fails at the deploy's nginx step and again in its rollback.
        const broken = Path.join(server.context.config.apps.nginxSitesDir, `broken-${suffix}.conf`);
        Fs.writeFileSync(broken, 'this is not nginx configuration;\n');
        let deployed;
        try {
            deployed = await run(`/api/apps/${GUARDED}/deploy`);
        } finally {
            Fs.rmSync(broken, { force: true });
        }

        expect(deployed.state, deployed.text).to.equal('failed');
        const errors = deployed.lines.filter((line) => line.level === 'error').map((line) => line.text);
        expect(
            errors.some((text) => text.startsWith('The rollback could not undo this: nginx was not reloaded')),
            deployed.text,
        ).to.be.true();
        // The provider's objects are undone although the reload before them failed.
        expect(authentik.state.providers.some((provider) => provider.name === `dp-${GUARDED}`)).to.be.false();
        expect(authentik.state.applications.some((application) => application.slug === `dp-${GUARDED}`)).to.be.false();
        expect(
            deployed.lines.some((line) => line.text.startsWith('Undone nonetheless:') && line.text.includes(`dp-${GUARDED}`)),
        ).to.be.true();
        expect(await containersOf(GUARDED)).to.have.length(0);
        expect(Fs.existsSync(Path.join(server.context.config.apps.nginxSitesDir, `${GUARDED}.conf`))).to.be.false();
        // The stand-in certificate the failed first deploy made goes with it.
        expect(
            Fs.existsSync(Path.join(server.context.config.apps.certificatesDir, `${GUARDED}.${BASE_DOMAIN}`, 'fullchain.pem')),
        ).to.be.false();
        expect(await new Docker().listNetworks({ filters: { name: [`${GUARDED}_default`] } })).to.have.length(0);

        // With nginx loadable again, a retry deploys.
        const retried = await run(`/api/apps/${GUARDED}/deploy`);
        expect(retried.state, retried.text).to.equal('succeeded');
        expect(authentik.state.providers.some((provider) => provider.name === `dp-${GUARDED}`)).to.be.true();
    });

    it('a delete whose provider step fails leaves the app failed, not running, and deleting again finishes it', async () => {
        await connectProvider();
        const deployed = await run(`/api/apps/${DOOMED}/deploy`);
        expect(deployed.state, deployed.text).to.equal('succeeded');
        authentik.failures.add({ method: 'DELETE', nth: 1, status: 500 });
        const failed = await runToEnd(admin, await admin.delete(`/api/apps/${DOOMED}`, { confirm: DOOMED, removeAccess: true }));
        expect(failed.state, failed.text).to.equal('failed');
        expect(await containersOf(DOOMED)).to.have.length(0);
        const app = await admin.get(`/api/apps/${DOOMED}`);
        expect((app.body as { app: { state: string } }).app.state).to.equal('failed');
        expect(authentik.state.providers.some((provider) => provider.name === `dp-${DOOMED}`)).to.be.true();

        const retried = await runToEnd(admin, await admin.delete(`/api/apps/${DOOMED}`, { confirm: DOOMED, removeAccess: true }));
        expect(retried.state, retried.text).to.equal('succeeded');
        expect((await admin.get(`/api/apps/${DOOMED}`)).status).to.equal(404);
        expect(authentik.state.providers.some((provider) => provider.name === `dp-${DOOMED}`)).to.be.false();
        expect(authentik.state.applications.some((application) => application.slug === `dp-${DOOMED}`)).to.be.false();
    });

    it('an app folder that refuses writes fails the deploy, and the rollback puts back nothing it did not change', async () => {
        const first = await run(`/api/apps/${FROZEN}/deploy`);
        expect(first.state, first.text).to.equal('succeeded');
        const [running] = await containersOf(FROZEN);
        const app = (await admin.get(`/api/apps/${FROZEN}`)).body as { app: { hostPort: number } };
        await saveCompose(FROZEN, app.app.hostPort, 'second');
        const appDir = Path.join(server.context.config.apps.appsDir, FROZEN);
        const composeBefore = Fs.readFileSync(Path.join(appDir, 'compose.yaml'), 'utf8');
        execFileSync('chattr', ['+i', appDir]);
        let deployed;
        try {
            deployed = await run(`/api/apps/${FROZEN}/deploy`);
        } finally {
            execFileSync('chattr', ['-i', appDir]);
        }

        expect(deployed.state, deployed.text).to.equal('rolled back');
        expect(deployed.text).to.not.contain('the rollback failed too');
        expect(deployed.lines.some((line) => line.text.startsWith('Rolled back:'))).to.be.true();
        expect(Fs.readFileSync(Path.join(appDir, 'compose.yaml'), 'utf8')).to.equal(composeBefore);
        const after = await containersOf(FROZEN);
        expect(after.map((container) => container.Id)).to.equal([running?.Id]);
        expect(after[0]?.State).to.equal('running');

        const retried = await run(`/api/apps/${FROZEN}/deploy`);
        expect(retried.state, retried.text).to.equal('succeeded');
    });
});
