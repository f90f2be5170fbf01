// needs: nginx
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { runs } from '../plugins/deploy/domain/runs/run-service.ts';
import { deployUsers } from '../plugins/deploy/domain/accounts/user-service.ts';
import { ROOT_DIR } from '../server.ts';
import { Browser } from './helpers/browser.ts';
import { createTestServer, createTestUser, freePorts, type TestServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait.ts';
import { type Balancer, startBalancer } from './support/balancer.ts';
import { readEvents } from './support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const STEPS = Path.join(ROOT_DIR, 'test', 'fixtures', 'jobs', 'run-steps.ts');
const ADMIN = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };

describe('two Gatehouse instances on one database behind a load balancer (round robin)', () => {
    let first: TestServer;
    let second: TestServer;
    let balancer: Balancer;
    let baseUrl: string;
    const answered = new Map<string, number>();

    before(async () => {
        first = await createTestServer();
        second = await createTestServer({}, { dataDir: first.dataDir, database: first.database });
        for (const [name, instance] of [
            ['first', first],
            ['second', second],
        ] as const) {
            instance.server.events.on('response', () => answered.set(name, (answered.get(name) ?? 0) + 1));
            await instance.server.start();
        }

        const [port] = await freePorts(1);
        balancer = await startBalancer(Number(port), [Number(first.server.info.port), Number(second.server.info.port)]);
        baseUrl = `http://127.0.0.1:${port}`;
        const token = Fs.readFileSync(Path.join(first.dataDir, 'setup-token'), 'utf8').trim();
        const setup = new Browser(baseUrl);
        await setup.get('/api/setup/status');
        expect((await setup.post('/api/setup', { token, ...ADMIN })).status).to.equal(201);
    });

    after(async () => {
        await balancer?.stop();
        await second?.server.stop();
        await first?.cleanup();
    });

    it('keeps a session, its CSRF token and its writes whichever instance answers', async () => {
        answered.clear();
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        expect((await browser.post('/api/auth/login', { email: ADMIN.email, password: ADMIN.password })).status).to.equal(200);
        for (let index = 0; index < 6; index += 1) {
            const saved = await browser.put('/api/account/profile', { name: `Ada ${index}` });
            expect(saved.status, saved.text).to.equal(200);
            expect(((await browser.get('/api/auth/me')).body as { user: { name: string } }).user.name).to.equal(`Ada ${index}`);
        }

        expect(answered.get('first') ?? 0).to.be.above(2);
        expect(answered.get('second') ?? 0).to.be.above(2);
    });

    it('counts sign-in guesses spread over both instances as one', async () => {
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 6; attempt += 1) {
            const browser = new Browser(baseUrl);
            await browser.get('/api/auth/me');
            statuses.push((await browser.post('/api/auth/login', { email: 'guessed@example.com', password: 'wrong' })).status);
        }

        expect(statuses).to.equal([401, 401, 401, 401, 401, 429]);
    });

    it('streams a run to its end whichever instance the watcher reaches', async () => {
        const [actor] = await deployUsers(first.server).list();
        if (!actor) throw new Error('no user');
        const endNow = Path.join(first.dataDir, 'end-the-balanced-run');
        const runId = await runs(first.server).start({
            app: 'balanced',
            kind: 'test',
            actor,
            script: STEPS,
            data: { steps: 3, delayMs: 100, untilFile: endNow },
        });
        const admin = new Browser(baseUrl);
        await admin.get('/api/auth/me');
        await admin.post('/api/auth/login', { email: ADMIN.email, password: ADMIN.password });
        // Two watchers one after the other: round robin sends them to both instances.
        const watching = [readEvents(admin, `/api/runs/${runId}/events`), readEvents(admin, `/api/runs/${runId}/events`)];
        await waitUntil('the run has written its lines', async () => (await runs(second.server).eventsAfter(runId, 0)).length >= 3, {
            timeoutMs: 30_000,
            intervalMs: 50,
        });
        Fs.writeFileSync(endNow, '');
        for (const messages of await Promise.all(watching)) {
            const seqs = messages.filter((message) => message.event === 'event').map((message) => Number(message.id));
            expect(seqs).to.equal(Array.from({ length: seqs.length }, (_, index) => index + 1));
            expect(messages.at(-1)?.event).to.equal('end');
        }
    });

    it('answers the git API with Basic credentials on both instances, and refuses wrong ones on both', async () => {
        answered.clear();
        await createTestUser(first.server, { name: 'balancedgit', password: 'git-password-1' });
        const authorization = `Basic ${Buffer.from('balancedgit:git-password-1').toString('base64')}`;
        for (let index = 0; index < 4; index += 1) {
            const response = await fetch(`${baseUrl}/api/v1/notifications`, { headers: { authorization } });
            expect(response.status).to.equal(200);
            expect(await response.json()).to.equal([]);
            const refused = await fetch(`${baseUrl}/api/v1/notifications`, { headers: { authorization: 'Basic eDp5' } });
            expect(refused.status).to.equal(401);
        }

        expect(answered.get('first') ?? 0).to.be.above(0);
        expect(answered.get('second') ?? 0).to.be.above(0);
    });
});
