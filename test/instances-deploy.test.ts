// needs: docker
import Crypto from 'node:crypto';
import Fs from 'node:fs';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { migrate } from '../lib/database.ts';
import { deployUsers } from '../plugins/deploy/domain/accounts/user-service.ts';
import { type Browser, signIn } from './helpers/browser.ts';
import {
    appHostPorts,
    createTestServer,
    freePorts,
    freshDatabase,
    type RunningServer,
    startServerProcess,
    temporaryDirectory,
    type TestDatabase,
    waitForHealth,
} from './helpers/server.ts';
import { buildWebImage, removeProjects } from './support/images.ts';
import { type RunningServices, startServices } from './support/services.ts';
import { readEvents, runEndState, runLines } from './support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ADMIN = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };
const APP = `balanced-${Crypto.randomBytes(3).toString('hex')}`;
const IMAGE = `gatehouse-test/balanced:${APP}`;

/**
 * Two Gatehouse processes on one database and one DATA_DIR, with the machine's Docker engine and nginx: a real deploy
 * started on one and watched on the other, as behind a load balancer a deploy's page may be served by either.
 */
describe('two Gatehouse server processes: a deploy started on one is watched on the other', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let dataDir: string;
    let database: TestDatabase;
    const processes: RunningServer[] = [];
    let first: Browser;
    let second: Browser;

    before({ timeout: 300_000 }, async () => {
        services = await startServices();
        buildWebImage(IMAGE, 'served by either instance');
        dataDir = temporaryDirectory();
        database = await freshDatabase(dataDir);
        await migrate(database.knex);
        const maker = await createTestServer({}, { dataDir, database });
        await deployUsers(maker.server).create({ ...ADMIN, role: 'admin' });

        // Without an ACME directory the site keeps its self-signed stand-in: this test is about the run.
        const { ACME_DIRECTORY_URL: _acme, ...exports } = services.exports;
        const ports = (await freePorts(2)) as [number, number];
        const environment = {
            ...exports,
            HOST: '127.0.0.1',
            DATA_DIR: dataDir,
            DATABASE_URL: database.databaseUrl,
            LOG_LEVEL: 'info',
            BASE_DOMAIN: 'apps.test',
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            DEPLOY_SETTLE_SECONDS: '2',
            HUB_URL: 'http://127.0.0.1:9',
            HUB_REGISTRY_URL: 'http://127.0.0.1:9',
        };
        for (const port of ports) {
            const started = startServerProcess({ ...environment, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}/` });
            processes.push(started);
            await waitForHealth(port, started);
        }

        first = await signIn(`http://127.0.0.1:${ports[0]}`, ADMIN.email, ADMIN.password);
        second = await signIn(`http://127.0.0.1:${ports[1]}`, ADMIN.email, ADMIN.password);
    });

    after({ timeout: 120_000 }, async () => {
        await Promise.all(
            processes.map(async ({ child, exited }) => {
                child.kill('SIGTERM');
                await exited;
            }),
        );
        await removeProjects([APP], [IMAGE]);
        await database?.drop();
        if (dataDir) Fs.rmSync(dataDir, { recursive: true, force: true });
        services?.stop();
    });

    it('streams every line of the run, in order, to its end, and both instances then show the app running', async () => {
        const [repository, tag] = IMAGE.split(':') as [string, string];
        const created = await first.post('/api/apps', { name: APP, image: repository, tag });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = ['services:', '  web:', `    image: ${IMAGE}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n');
        const saved = await first.put(`/api/apps/${APP}/draft`, { compose, auth: { access: 'public' } });
        expect(saved.status, saved.text).to.equal(200);

        const started = await first.post(`/api/apps/${APP}/deploy`, {});
        expect(started.status, started.text).to.equal(202);
        const runId = (started.body as { runId: number }).runId;
        const watched = await readEvents(second, `/api/runs/${runId}/events`);

        expect(runEndState(watched), JSON.stringify(watched)).to.equal('succeeded');
        const seqs = watched.filter((message) => message.event === 'event').map((message) => Number(message.id));
        expect(seqs).to.equal(Array.from({ length: seqs.length }, (_, index) => index + 1));
        const lines = runLines(watched).map((line) => line.text);
        expect(lines).to.include(`Created and started ${APP}-web-1 (${IMAGE})`);
        // The same lines the starting instance has, and the same that a later reader on either gets.
        const onFirst = runLines(await readEvents(first, `/api/runs/${runId}/events`)).map((line) => line.text);
        expect(onFirst).to.equal(lines);

        expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).to.contain('served by either instance');
        for (const browser of [first, second]) {
            const shown = await browser.get(`/api/apps/${APP}`);
            expect((shown.body as { app: { state: string } }).app.state).to.equal('running');
        }

        // And the other way round: deleted on the second, watched on the first.
        const deleting = await second.delete(`/api/apps/${APP}`, { confirm: APP, deleteData: true });
        expect(deleting.status, deleting.text).to.equal(202);
        const deleted = await readEvents(first, `/api/runs/${(deleting.body as { runId: number }).runId}/events`);
        expect(runEndState(deleted), JSON.stringify(deleted)).to.equal('succeeded');
        expect((await first.get(`/api/apps/${APP}`)).status).to.equal(404);
    });
});
