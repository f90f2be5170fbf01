import { spawn } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ConflictError } from '../../../../../lib/errors.ts';
import { type DeployUser, deployUsers } from '../../../../../plugins/deploy/domain/accounts/user-service.ts';
import { runs } from '../../../../../plugins/deploy/domain/runs/run-service.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { readEvents } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const STEPS = Path.join(ROOT_DIR, 'test', 'fixtures', 'jobs', 'run-steps.ts');
const OWN_A_RUN = Path.join(ROOT_DIR, 'test', 'fixtures', 'jobs', 'own-a-run.ts');

describe('deploy manager: runs and their live logs', () => {
    let server: DeployTestServer;
    let viewer: Browser;

    before(async () => {
        server = await deployTestServer();
        viewer = await server.signInAs('viewer');
        const created = await server.admin.post('/api/apps', { name: 'runner', image: 'nginx', tag: '1.27' });
        expect(created.status).to.equal(201);
    });

    after(async () => {
        await server.context.cleanup();
    });

    const actor = async (): Promise<DeployUser> => {
        const [first] = await deployUsers(server.context.server).list();
        if (!first) {
            throw new Error('no user');
        }

        return first;
    };

    /** Starts a run of the steps fixture for the app, on the given server (default: this file's). */
    const startSteps = async (
        app: string,
        data: { steps: number; delayMs: number; outcome?: 'failed'; untilFile?: string },
        options: { on?: TestServer['server']; kind?: string } = {},
    ): Promise<number> =>
        runs(options.on ?? server.context.server).start({ app, kind: options.kind ?? 'test', actor: await actor(), script: STEPS, data });

    it('streams every line live, in order, then an end event carrying the run', async () => {
        const runId = await startSteps('runner', { steps: 5, delayMs: 60 });
        const messages = await readEvents(viewer, `/api/runs/${runId}/events`);
        const lines = messages.filter((message) => message.event === 'event');
        expect(lines.map((message) => Number(message.id))).to.equal([1, 2, 3, 4, 5]);
        expect(JSON.parse(lines[0]?.data ?? '{}')).to.equal({ step: 'step-1', level: 'info', text: 'line 1 of 5', seq: 1 });
        const end = messages.at(-1);
        expect(end?.event).to.equal('end');
        expect(JSON.parse(end?.data ?? '{}')).to.include({ id: runId, app: 'runner', state: 'succeeded' });
    });

    it('refuses a second run of the same app while one is in progress (409)', async () => {
        const runId = await startSteps('runner', { steps: 3, delayMs: 100 });
        await expect(startSteps('runner', { steps: 1, delayMs: 1 })).to.reject(ConflictError);
        const messages = await readEvents(viewer, `/api/apps/runner/runs/${runId}/events`);
        expect(messages.at(-1)?.event).to.equal('end');
    });

    it('starts exactly one of many concurrent runs of an app; the others get 409, and the app is free once it ends', async () => {
        const service = runs(server.context.server);
        const user = await actor();
        const start = () => service.start({ app: 'racer', kind: 'race', actor: user, script: STEPS, data: { steps: 2, delayMs: 50 } });
        const outcomes = await Promise.allSettled(Array.from({ length: 8 }, start));
        const started = outcomes.filter((outcome) => outcome.status === 'fulfilled');
        const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
        expect(started.length).to.equal(1);
        expect(refused.map((outcome) => (outcome.reason as Error).constructor)).to.equal(Array(7).fill(ConflictError));
        expect((await service.list('racer')).map((run) => run.state)).to.equal(['running']);

        const runId = (started[0] as PromiseFulfilledResult<number>).value;
        expect((await readEvents(viewer, `/api/runs/${runId}/events`)).at(-1)?.event).to.equal('end');
        const next = await start();
        expect((await readEvents(viewer, `/api/runs/${next}/events`)).at(-1)?.event).to.equal('end');
        expect((await service.get(next)).state).to.equal('succeeded');
    });

    it('gives a late subscriber everything, and a reconnecting one only what it missed', async () => {
        const runId = await startSteps('runner', { steps: 4, delayMs: 10, outcome: 'failed' });
        const first = await readEvents(viewer, `/api/runs/${runId}/events`);
        expect(first.filter((message) => message.event === 'event').length).to.equal(4);
        const late = await readEvents(viewer, `/api/apps/runner/runs/${runId}/events`);
        expect(late.map((message) => message.event)).to.equal(['event', 'event', 'event', 'event', 'end']);
        expect(JSON.parse(late.at(-1)?.data ?? '{}')).to.include({ state: 'failed', error: 'failed on purpose' });
        const resumed = await readEvents(viewer, `/api/runs/${runId}/events`, { 'last-event-id': '2' });
        expect(resumed.filter((message) => message.event === 'event').map((message) => Number(message.id))).to.equal([3, 4]);
        const byQuery = await readEvents(viewer, `/api/runs/${runId}/events?lastEventId=4`);
        expect(byQuery.map((message) => message.event)).to.equal(['end']);
    });

    it("lists an app's runs and shows one with its lines; 404 for another app's run, 401 without a session", async () => {
        // An app of its own: the other tests' runs of the runner would change its list.
        const created = await server.admin.post('/api/apps', { name: 'ledger', image: 'nginx', tag: '1.27' });
        expect(created.status, created.text).to.equal(201);
        const first = await startSteps('ledger', { steps: 2, delayMs: 10 });
        expect((await readEvents(viewer, `/api/runs/${first}/events`)).at(-1)?.event).to.equal('end');
        const second = await startSteps('ledger', { steps: 4, delayMs: 10, outcome: 'failed' });
        expect((await readEvents(viewer, `/api/runs/${second}/events`)).at(-1)?.event).to.equal('end');

        const list = await viewer.get('/api/apps/ledger/runs');
        const listed = (list.body as { runs: Array<{ id: number; state: string }> }).runs;
        expect(listed.map((run) => [run.id, run.state])).to.equal([
            [second, 'failed'],
            [first, 'succeeded'],
        ]);
        const one = await viewer.get(`/api/apps/ledger/runs/${listed[0]?.id}`);
        expect((one.body as { events: unknown[] }).events.length).to.equal(4);
        expect((await viewer.get(`/api/apps/runner/runs/${listed[0]?.id}`)).status).to.equal(404);
        expect((await viewer.get('/api/runs/999999')).status).to.equal(404);
        expect((await fetch(`${server.baseUrl}/api/runs/${listed[0]?.id}/events`)).status).to.equal(401);
    });

    it("audits each run's start and end", async () => {
        // Runs of an app of its own, their entries found by it: the other tests' runs are audited alike.
        for (const data of [
            { steps: 1, delayMs: 1 },
            { steps: 1, delayMs: 1, outcome: 'failed' as const },
            { steps: 1, delayMs: 1 },
        ]) {
            const runId = await startSteps('audited', data);
            expect((await readEvents(viewer, `/api/runs/${runId}/events`)).at(-1)?.event).to.equal('end');
        }

        const entries = async (action: string) =>
            (await server.admin.get(`/api/admin/audit?action=${action}&target=audited&limit=50`)).body as {
                total: number;
                entries: Array<{ outcome: string }>;
            };
        expect((await entries('runs.test')).total).to.equal(3);
        // A run's end is audited once its end is told: the last one may come a moment after its stream closed.
        const ends = await waitUntil('the three runs have their end audited', async () => {
            const found = await entries('runs.test.end');
            return found.total >= 3 && found;
        });
        expect(ends.entries.map((entry) => entry.outcome).sort()).to.equal(['failure', 'success', 'success']);
    });

    it('marks runs a stopped server left in progress as interrupted, with an event, and frees the app', async () => {
        const knex = server.context.database.knex;
        const [id] = await knex('dp_runs').insert({ app_name: 'runner', kind: 'test', state: 'running', started_at: Date.now() });
        const restarted = await createTestServer({}, { dataDir: server.context.dataDir, database: server.context.database });
        try {
            const run = await runs(restarted.server).get(Number(id));
            expect(run.state).to.equal('interrupted');
            const events = await runs(restarted.server).eventsAfter(Number(id), 0);
            expect(events.at(-1)?.text).to.contain('interrupted');
            const next = await startSteps('runner', { steps: 1, delayMs: 1 }, { on: restarted.server, kind: 'after-restart' });
            await waitUntil('the run after the restart ended', async () => (await runs(restarted.server).get(next)).state !== 'running');
        } finally {
            await restarted.server.stop();
        }
    });

    it('leaves a run that another live server owns alone: a second server on the database neither interrupts it nor starts the app again', async () => {
        const endNow = Path.join(server.context.dataDir, 'end-the-shared-run');
        const runId = await startSteps('shared', { steps: 3, delayMs: 50, untilFile: endNow });
        const second = await createTestServer(
            { RUN_LEASE_SECONDS: '2' },
            { dataDir: server.context.dataDir, database: server.context.database },
        );
        try {
            await runs(second.server).takeOverLapsed();
            expect((await runs(second.server).get(runId)).state).to.equal('running');
            await expect(startSteps('shared', { steps: 1, delayMs: 1 }, { on: second.server })).to.reject(ConflictError);
            Fs.writeFileSync(endNow, '');
            const messages = await readEvents(viewer, `/api/runs/${runId}/events`);
            expect(messages.at(-1)?.event).to.equal('end');
            expect((await runs(second.server).get(runId)).state).to.equal('succeeded');
            const seqs = (await runs(second.server).eventsAfter(runId, 0)).map((event) => event.seq);
            expect(seqs).to.equal(Array.from({ length: seqs.length }, (_, index) => index + 1));
        } finally {
            await second.server.stop();
        }
    });

    it('streams a run that another Gatehouse on the database executes, live and in order, to its end', async () => {
        const second = await createTestServer({}, { dataDir: server.context.dataDir, database: server.context.database });
        try {
            const endNow = Path.join(server.context.dataDir, 'end-the-other-run');
            const runId = await startSteps('elsewhere', { steps: 4, delayMs: 100, untilFile: endNow }, { on: second.server });
            // Asked of this file's server, which does not execute the run: its lines come from the database.
            const reading = readEvents(viewer, `/api/runs/${runId}/events`);
            await waitUntil(
                'the other server has written a line',
                async () => (await runs(server.context.server).eventsAfter(runId, 0)).length > 0,
                {
                    timeoutMs: 30_000,
                    intervalMs: 50,
                },
            );
            Fs.writeFileSync(endNow, '');
            const messages = await reading;
            const seqs = messages.filter((message) => message.event === 'event').map((message) => Number(message.id));
            expect(seqs.length).to.be.above(3);
            expect(seqs).to.equal(Array.from({ length: seqs.length }, (_, index) => index + 1));
            const end = messages.at(-1);
            expect(end?.event).to.equal('end');
            expect((JSON.parse(end?.data ?? '{}') as { state: string }).state).to.equal('succeeded');
        } finally {
            await second.server.stop();
        }
    });

    it('takes over the run of a server killed mid-run once its lease lapses, not before: interrupted, with an event, the app free', async () => {
        const lapsing = await createTestServer(
            { RUN_LEASE_SECONDS: '2' },
            { dataDir: server.context.dataDir, database: server.context.database },
        );
        const owner = spawn(process.execPath, ['--import', 'tsx', OWN_A_RUN], {
            cwd: ROOT_DIR,
            env: {
                ...process.env,
                DATA_DIR: server.context.dataDir,
                DATABASE_URL: server.context.database.databaseUrl,
                RUN_LEASE_SECONDS: '2',
                APP: 'killed',
            },
            stdio: ['ignore', 'pipe', 'inherit'],
        });
        try {
            let printed = '';
            owner.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
            await waitUntil('the owning process started its run', () => /run \d+/.test(printed), { timeoutMs: 90_000 });
            const runId = Number(/run (\d+)/.exec(printed)?.[1]);
            const service = runs(lapsing.server);
            // Over two lease periods of lines, with the other server sweeping every period: the live owner keeps it.
            await waitUntil('the run logged for two lease periods', async () => (await service.eventsAfter(runId, 0)).length >= 90, {
                timeoutMs: 60_000,
            });
            await service.takeOverLapsed();
            expect((await service.get(runId)).state).to.equal('running');

            owner.kill('SIGKILL');
            await waitUntil("the killed server's run is interrupted", async () => (await service.get(runId)).state === 'interrupted', {
                timeoutMs: 30_000,
            });
            expect((await service.eventsAfter(runId, 0)).at(-1)?.text).to.contain('interrupted');
            const next = await startSteps('killed', { steps: 1, delayMs: 1 }, { on: lapsing.server, kind: 'after-kill' });
            await waitUntil('the next run of the app ended', async () => (await service.get(next)).state === 'succeeded');
        } finally {
            owner.kill('SIGKILL');
            await lapsing.server.stop();
        }
    });
});
