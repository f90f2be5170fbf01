// needs: docker
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import { runs } from '../../../../../plugins/deploy/domain/runs/run-service.ts';
import { certificatePaths } from '../../../../../plugins/deploy/domain/host/certificate-info.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../../../../support/authentik/index.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { killRunAt as killRun } from '../../../../support/killed-run.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();

const composeOf = (image: string, port: number) =>
    ['services:', '  web:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n');
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
const suffix = Crypto.randomBytes(3).toString('hex');
const STARTED = `killedup-${suffix}`;
const PROVIDER = `killedidp-${suffix}`;
const UPDATED = `killedupdate-${suffix}`;
const CERTIFIED = `killedcert-${suffix}`;
const DELETED = `killeddelete-${suffix}`;
const SIGNED_IN = `killedsso-${suffix}`;
const EARLY = `killedfiles-${suffix}`;
const SITE = `killedsite-${suffix}`;
const APPS = [STARTED, PROVIDER, UPDATED, CERTIFIED, DELETED, SIGNED_IN, EARLY, SITE];

/**
 * A server killed (kill -9) in the middle of a deploy: the server that takes the run over undoes, from the run's
 * journal, what the run had changed, logs each undo in the run, and leaves the app in the state the API reports.
 */
describe('deploy manager: a run killed half-way is undone from its journal when it is taken over', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let image: string;
    let nextImage: string;
    let environment: Record<string, string>;
    const hostPorts: Record<string, number> = {};

    const containersOf = async (app: string) =>
        await new Docker().listContainers({ all: true, filters: { label: [`com.docker.compose.project=${app}`] } });

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/recovery:1`, '<h1>recovery app</h1>\n', true);
        nextImage = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/recovery:2`, '<h1>recovery app, next</h1>\n', true);
        authentik = await startAuthentikStandIn();
        const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
        environment = { ...withoutAcme, BASE_DOMAIN, APPS_FIRST_HOST_PORT: String(await appHostPorts()), RUN_LEASE_SECONDS: '2' };
        server = await deployTestServer(environment);
        admin = server.admin;
        for (const name of APPS) {
            const created = await admin.post('/api/apps', { name, image: image.replace(/:1$/, ''), tag: '1' });
            expect(created.status, created.text).to.equal(201);
            const port = (created.body as { app: { hostPort: number } }).app.hostPort;
            hostPorts[name] = port;
            const saved = await admin.put(`/api/apps/${name}/draft`, { compose: composeOf(image, port), auth: { access: 'public' } });
            expect(saved.status, saved.text).to.equal(200);
        }
    });

    after(async () => {
        await removeProjects(
            APPS,
            [image, nextImage].filter((tag) => tag !== undefined),
        );
        await server?.context.cleanup();
        await authentik?.close();
        services?.stop();
    });

    const killRunAt = async (app: string, step: string, operation = 'deploy', body: unknown = {}) =>
        await killRun({ context: server.context, environment, app, step, operation, body });

    const deploy = async (app: string) => {
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${app}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
    };
    const appDir = (app: string) => Path.join(server.context.config.apps.appsDir, app);
    const siteFile = (app: string) => Path.join(services.exports.NGINX_SITES_DIR, `${app}.conf`);
    const served = async (app: string) => await (await fetch(`http://127.0.0.1:${hostPorts[app]}/`)).text();
    const draftOf = async (app: string) =>
        ((await admin.get(`/api/apps/${app}`)).body as { app: { draft: { compose: string; account?: string } } }).app.draft;

    const lines = async (runId: number) => (await runs(server.context.server).eventsAfter(runId, 0)).map((event) => event.text);
    const stateOf = async (app: string) => ((await admin.get(`/api/apps/${app}`)).body as { app: { state: string } }).app.state;

    /**
     * Connects the provider for the test's body, and disconnects it after, whatever the body did. While it is connected a
     * deploy without groups must say so, so the apps given say signed-in; the other tests' apps say public, which a
     * connected provider refuses: they deploy in whichever order the tests run only because the provider goes again.
     */
    const withProvider = async (names: string[], body: () => Promise<void>) => {
        const connected = await admin.put('/api/admin/idp', { url: authentik.url, token: authentik.bootstrapToken });
        expect(connected.status, connected.text).to.equal(200);
        try {
            for (const name of names) {
                const said = await admin.put(`/api/apps/${name}/draft`, { auth: { access: 'signed-in' } });
                expect(said.status, said.text).to.equal(200);
            }

            await body();
        } finally {
            // The token is the stand-in's bootstrap token, not one Gatehouse made: it stays valid for the next connect.
            const disconnected = await admin.delete('/api/admin/idp/token');
            expect(disconnected.status, disconnected.text).to.equal(200);
            expect(disconnected.body).to.include({ connected: false });
        }
    };
    it('killed after the containers started: the containers, network and files are removed, the app is still a draft', async () => {
        const runId = await killRunAt(STARTED, 'access');
        expect(await containersOf(STARTED)).to.have.length(0);
        const text = await lines(runId);
        expect(text).to.include(`Undone: removed container ${STARTED}-web-1`);
        expect(text).to.include(`Undone: removed network ${STARTED}_default`);
        expect(
            text.some((line) => line.startsWith('The interrupted run was undone:')),
            text.join('\n'),
        ).to.be.true();
        expect(Fs.existsSync(Path.join(server.context.config.apps.appsDir, STARTED, 'compose.yaml'))).to.be.false();
        expect(await new Docker().listNetworks({ filters: { name: [`${STARTED}_default`] } })).to.have.length(0);
        expect(await stateOf(STARTED)).to.equal('draft');

        const retried = await runToEnd(admin, await admin.post(`/api/apps/${STARTED}/deploy`, {}));
        expect(retried.state, retried.text).to.equal('succeeded');
        expect(await stateOf(STARTED)).to.equal('running');
    });

    it('killed during a compose update at each of its steps: the old container, compose file and draft are back, and the update can be made again', async () => {
        await deploy(UPDATED);
        const update = { mode: 'text', text: composeOf(nextImage, hostPorts[UPDATED] ?? 0) };
        // Files written; new container serving (the old one set aside); new site written; new site loaded, checking.
        for (const step of ['files-written', 'access', 'site-written', 'check']) {
            const runId = await killRunAt(UPDATED, step, 'compose', update);
            const text = await lines(runId);
            expect(
                text.some((line) => line.startsWith('The interrupted run was undone:')),
                `${step}: ${text.join('\n')}`,
            ).to.be.true();
            expect(await served(UPDATED), step).to.contain('recovery app</h1>');
            const containers = await containersOf(UPDATED);
            expect(
                containers.map((container) => [container.Names[0], container.Image, container.State]),
                step,
            ).to.equal([[`/${UPDATED}-web-1`, image, 'running']]);
            expect(Fs.readFileSync(Path.join(appDir(UPDATED), 'compose.yaml'), 'utf8'), step).to.contain(image);
            expect((await draftOf(UPDATED)).compose, step)
                .to.contain(image)
                .and.to.not.contain(nextImage);
            expect(text, step).to.include("Undone: put back the app's draft as it was before the run");
            expect(await stateOf(UPDATED), step).to.equal('running');
        }

        const retried = await runToEnd(admin, await admin.put(`/api/apps/${UPDATED}/compose`, update));
        expect(retried.state, retried.text).to.equal('succeeded');
        expect(await served(UPDATED)).to.contain('recovery app, next');
    });

    it('killed in the certificate step: the site, its stand-in certificate and the containers go, the app is a draft', async () => {
        const runId = await killRunAt(CERTIFIED, 'certificate');
        const text = await lines(runId);
        const certificate = certificatePaths(server.context.config.apps.certificatesDir, `${CERTIFIED}.${BASE_DOMAIN}`);
        expect(text).to.include(`Undone: removed ${siteFile(CERTIFIED)}`);
        expect(text).to.include('Undone: nginx configuration restored and reloaded');
        expect(Fs.existsSync(siteFile(CERTIFIED))).to.be.false();
        expect(Fs.existsSync(certificate.certificate) || Fs.existsSync(certificate.key)).to.be.false();
        expect(await containersOf(CERTIFIED)).to.have.length(0);
        expect(await stateOf(CERTIFIED)).to.equal('draft');
        await deploy(CERTIFIED);
        expect(Fs.existsSync(certificate.certificate)).to.be.true();
    });

    it('killed during a delete, its containers gone: the app says failed, and deleting it again finishes', async () => {
        await deploy(DELETED);
        const runId = await killRunAt(DELETED, 'containers-removed', 'delete', { confirm: DELETED });
        expect(await lines(runId)).to.include('The delete was interrupted: delete the app again to finish it');
        expect(await stateOf(DELETED)).to.equal('failed');
        expect(await containersOf(DELETED)).to.have.length(0);
        expect(Fs.existsSync(siteFile(DELETED))).to.be.true();

        const again = await runToEnd(admin, await admin.delete(`/api/apps/${DELETED}`, { confirm: DELETED }));
        expect(again.state, again.text).to.equal('succeeded');
        expect(Fs.existsSync(siteFile(DELETED))).to.be.false();
        expect((await admin.get(`/api/apps/${DELETED}`)).status).to.equal(404);
    });

    it('killed at the other steps of a first deploy (files written; site written, not yet loaded): nothing is left, and a retry deploys', async () => {
        for (const step of ['files-written', 'site-written']) {
            const app = step === 'files-written' ? EARLY : SITE;
            const runId = await killRunAt(app, step);
            const text = await lines(runId);
            expect(
                text.some((line) => line.startsWith('The interrupted run was undone:')),
                `${step}: ${text.join('\n')}`,
            ).to.be.true();
            expect(Fs.existsSync(Path.join(appDir(app), 'compose.yaml')), step).to.be.false();
            expect(Fs.existsSync(siteFile(app)), step).to.be.false();
            expect(await containersOf(app), step).to.have.length(0);
            expect(await stateOf(app), step).to.equal('draft');
            await deploy(app);
            expect(await served(app)).to.contain('recovery app</h1>');
        }
    });

    it('killed during the provider step: dp-<app> is removed at the provider, with the containers, and a retry deploys', async () => {
        await withProvider([PROVIDER], async () => {
            const runId = await killRunAt(PROVIDER, 'access-made');
            const text = await lines(runId);
            expect(
                authentik.state.providers.some((provider) => provider.name === `dp-${PROVIDER}`),
                text.join('\n'),
            ).to.be.false();
            expect(authentik.state.applications.some((application) => application.slug === `dp-${PROVIDER}`)).to.be.false();
            expect(text.some((line) => line.startsWith('Undone: removed') && line.includes('at the identity provider'))).to.be.true();
            expect(await containersOf(PROVIDER)).to.have.length(0);
            expect(await stateOf(PROVIDER)).to.equal('draft');

            const retried = await runToEnd(admin, await admin.post(`/api/apps/${PROVIDER}/deploy`, {}));
            expect(retried.state, retried.text).to.equal('succeeded');
            expect(authentik.state.providers.some((provider) => provider.name === `dp-${PROVIDER}`)).to.be.true();
        });
    });

    it('killed during a sign-in change at each of its steps: the site and the draft are as before, and the change can be made again', async () => {
        await withProvider([SIGNED_IN], async () => {
            await deploy(SIGNED_IN);
            const siteBefore = Fs.readFileSync(siteFile(SIGNED_IN), 'utf8');
            const accountBefore = (await draftOf(SIGNED_IN)).account;
            expect(accountBefore).to.not.equal('header');

            // Files written; the app restarted (its provider objects next); the new site loaded, checking.
            for (const step of ['files-written', 'access', 'check']) {
                const runId = await killRunAt(SIGNED_IN, step, 'sso', { account: 'header' });
                const text = await lines(runId);
                expect(
                    text.some((line) => line.startsWith('The interrupted run was undone:')),
                    `${step}: ${text.join('\n')}`,
                ).to.be.true();
                expect(Fs.readFileSync(siteFile(SIGNED_IN), 'utf8'), step).to.equal(siteBefore);
                expect((await draftOf(SIGNED_IN)).account, step).to.equal(accountBefore);
                expect(await stateOf(SIGNED_IN), step).to.equal('running');
                expect(await containersOf(SIGNED_IN), step).to.have.length(1);
            }

            const retried = await runToEnd(admin, await admin.post(`/api/apps/${SIGNED_IN}/sso`, { account: 'header' }));
            expect(retried.state, retried.text).to.equal('succeeded');
            expect(Fs.readFileSync(siteFile(SIGNED_IN), 'utf8')).to.contain('Remote-User');
        });
    });
});
