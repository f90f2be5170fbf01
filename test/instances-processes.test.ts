// needs: nginx
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generate } from 'otplib';

import { migrate } from '../lib/database.ts';
import { deployUsers } from '../plugins/deploy/domain/accounts/user-service.ts';
import { Browser, signIn } from './helpers/browser.ts';
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
import { waitUntil } from './helpers/wait.ts';
import { type Balancer, startBalancer, UPSTREAM_HEADER } from './support/balancer.ts';
import { readEvents, runEndState, runLines, runToEnd } from './support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ADMIN = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };
const WITH_TOTP = { email: 'totp@example.com', name: 'Tom Totp', password: 'totp-password-1' };
const LEASE_SECONDS = 2;
/** A test-only schedule for a task with nothing to do: due on both instances at the same second, every 4 s. */
const CRON_TASK = 'update_mirrors';
const CRON_SCHEDULE = '*/4 * * * * *';
/** An image no registry serves (a closed port): a deploy fails at pulling it, with or without a Docker engine. */
const IMAGE = '127.0.0.1:9/gatehouse-test/absent';

interface Instance {
    name: 'first' | 'second';
    port: number;
    environment: Record<string, string>;
    process: RunningServer;
}

/** Which instance answered, from the balancer's X-Upstream (the last address when nginx had to try another). */
const upstreamOf = (headers: Headers): number => Number(String(headers.get(UPSTREAM_HEADER)).split(/,\s*/).at(-1)?.split(':')[1]);

/**
 * Two Gatehouse processes, each started as `npm start` starts it, on one database and one DATA_DIR behind an nginx
 * balancer (round robin): what holds only when the instances are really separate processes, one of which can die.
 */
describe('two Gatehouse server processes on one database and DATA_DIR behind a load balancer', { timeout: 600_000 }, () => {
    let dataDir: string;
    let database: TestDatabase;
    let balancer: Balancer | undefined;
    let baseUrl: string;
    let instances: Instance[] = [];
    /** The run pauses (once its files are written) only on the first instance, so the test knows which to kill. */
    let pauseFile: string;

    const instanceAt = (port: number) => instances.find((instance) => instance.port === port)?.name ?? `port ${port}`;

    before({ timeout: 300_000 }, async () => {
        dataDir = temporaryDirectory();
        database = await freshDatabase(dataDir);
        pauseFile = Path.join(dataDir, 'paused-first');
        // Migrated, and its administrator made, before either process starts, so that no two first starts race.
        await migrate(database.knex);
        const maker = await createTestServer({}, { dataDir, database });
        await deployUsers(maker.server).create({ ...ADMIN, role: 'admin' });
        await deployUsers(maker.server).create({ ...WITH_TOTP, role: 'viewer' });

        const [balancerPort, firstPort, secondPort] = (await freePorts(3)) as [number, number, number];
        baseUrl = `http://127.0.0.1:${balancerPort}`;
        const environment = {
            HOST: '127.0.0.1',
            DATA_DIR: dataDir,
            DATABASE_URL: database.databaseUrl,
            PUBLIC_URL: `${baseUrl}/`,
            LOG_LEVEL: 'info',
            RUN_LEASE_SECONDS: String(LEASE_SECONDS),
            DEPLOY_SETTLE_SECONDS: '2',
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            HUB_URL: 'http://127.0.0.1:9',
            HUB_REGISTRY_URL: 'http://127.0.0.1:9',
            [`CRON_${CRON_TASK.toUpperCase()}_SCHEDULE`]: CRON_SCHEDULE,
        };
        const started = (name: Instance['name'], port: number, own: Record<string, string>): Instance => {
            const instanceEnvironment = { ...environment, PORT: String(port), ...own };
            return { name, port, environment: instanceEnvironment, process: startServerProcess(instanceEnvironment) };
        };
        instances = [
            started('first', firstPort, { GATEHOUSE_TEST_PAUSE_AT: 'files-written', GATEHOUSE_TEST_PAUSE_FILE: pauseFile }),
            started('second', secondPort, {}),
        ];
        await Promise.all(instances.map(async (instance) => await waitForHealth(instance.port, instance.process)));
        balancer = await startBalancer(balancerPort, [firstPort, secondPort]);
    });

    after(async () => {
        await balancer?.stop();
        await Promise.all(
            instances.map(async ({ process: { child, exited } }) => {
                child.kill('SIGTERM');
                await exited;
            }),
        );
        await database?.drop();
        Fs.rmSync(dataDir, { recursive: true, force: true });
    });

    /**
     * Starts a killed instance again as it was started, and waits until the balancer, which counts it failed for a
     * while, hands it requests again: the other tests find both instances behind the balancer.
     */
    const revive = async (instance: Instance) => {
        Fs.rmSync(pauseFile, { force: true });
        instance.process = startServerProcess(instance.environment);
        await waitForHealth(instance.port, instance.process);
        await waitUntil(
            `the balancer hands requests to the ${instance.name} instance again`,
            async () => instanceAt(upstreamOf((await fetch(`${baseUrl}/api/health`)).headers)) === instance.name,
            { timeoutMs: 60_000, intervalMs: 250 },
        );
    };

    it('asks for the second factor on one instance and takes the code on the other', async () => {
        const account = await signIn(baseUrl, WITH_TOTP.email, WITH_TOTP.password);
        const setup = await account.post('/api/account/totp/setup');
        expect(setup.status, setup.text).to.equal(200);
        const { secret } = setup.body as { secret: string };
        const enabled = await account.post('/api/account/totp/enable', { code: await generate({ secret }) });
        expect(enabled.status, enabled.text).to.equal(200);

        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        const password = await browser.post('/api/auth/login', { email: WITH_TOTP.email, password: WITH_TOTP.password });
        expect(password.body).to.equal({ mfaRequired: true });
        // The current step's code was spent enabling two factors; the next step's is within the allowed drift.
        const code = await browser.post('/api/auth/mfa', { code: await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }) });
        expect(code.status, code.text).to.equal(200);
        expect(instanceAt(upstreamOf(password.headers))).to.not.equal(instanceAt(upstreamOf(code.headers)));
        expect(instances.map((instance) => instance.name)).to.include([
            instanceAt(upstreamOf(password.headers)),
            instanceAt(upstreamOf(code.headers)),
        ]);

        const signedInOn = new Set<string>();
        for (let index = 0; index < 4; index += 1) {
            const me = await browser.get('/api/auth/me');
            expect(me.status, me.text).to.equal(200);
            expect((me.body as { user: { email: string; totpEnabled: boolean } }).user).to.include({
                email: WITH_TOTP.email,
                totpEnabled: true,
            });
            signedInOn.add(instanceAt(upstreamOf(me.headers)));
        }

        expect([...signedInOn].sort()).to.equal(['first', 'second']);
    });

    it('runs a cron task due on both instances at the same time once per tick', async () => {
        const outcomes = (instance: Instance) => [...instance.process.output().matchAll(new RegExp(`cron task ${CRON_TASK}: (\\w+)`, 'g'))];
        const slots = async () =>
            (
                await database
                    .knex('cron_executions')
                    .where({ task: CRON_TASK, cause: 'schedule' })
                    .groupBy('slot')
                    .select('slot')
                    .count({ runs: '*' })
            ).map((row: Record<string, unknown>) => ({ slot: Number(row.slot), runs: Number(row.runs) }));
        // Three ticks that both instances have reported on, whoever won each.
        await waitUntil(
            'both instances report three ticks of the task',
            async () => instances.every((instance) => outcomes(instance).length >= 3) && (await slots()).length >= 3,
            { timeoutMs: 120_000, intervalMs: 250 },
        );
        await waitUntil(
            'no execution of the task is still running',
            async () => (await database.knex('cron_executions').where({ task: CRON_TASK, status: 'running' }).first('id')) === undefined,
            { timeoutMs: 60_000, intervalMs: 100 },
        );

        const executed = await slots();
        expect(executed.filter((slot) => slot.runs !== 1)).to.equal([]);
        const reported = instances.flatMap((instance) => outcomes(instance).map((match) => match[1]));
        expect(reported).to.include('skipped');
        expect(reported).to.not.include('failure');
        const [task] = await database.knex('cron_tasks').where({ name: CRON_TASK }).select('exec_times');
        const [all] = await database.knex('cron_executions').where({ task: CRON_TASK }).count({ runs: '*' });
        expect(Number(task?.exec_times)).to.equal(Number(all?.runs));
    });

    it('marks a run interrupted when the instance running it is killed, and frees its app for a new run', async () => {
        const admin = await signIn(baseUrl, ADMIN.email, ADMIN.password);
        const app = 'killedmidrun';
        const created = await admin.post('/api/apps', { name: app, image: IMAGE, tag: '1' });
        expect(created.status, created.text).to.equal(201);
        const hostPort = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = ['services:', '  web:', `    image: ${IMAGE}:1`, '    ports:', `      - "127.0.0.1:${hostPort}:80"`, ''].join('\n');
        const saved = await admin.put(`/api/apps/${app}/draft`, { compose, auth: { access: 'public' } });
        expect(saved.status, saved.text).to.equal(200);

        // Round robin: a deploy the second instance takes fails at pulling the image. Whatever requests the other tests
        // made, the deploy goes to the first when the request before it went to the second.
        let runId = 0;
        for (let attempt = 0; attempt < 4 && runId === 0; attempt += 1) {
            await waitUntil(
                'a request answered by the second instance, so that the next goes to the first',
                async () => instanceAt(upstreamOf((await admin.get('/api/auth/me')).headers)) === 'second',
                { timeoutMs: 10_000, intervalMs: 0 },
            );
            const started = await admin.post(`/api/apps/${app}/deploy`, {});
            expect(started.status, started.text).to.equal(202);
            if (instanceAt(upstreamOf(started.headers)) === 'first') {
                runId = (started.body as { runId: number }).runId;
            } else {
                const ended = await runToEnd(admin, started);
                expect(ended.state, ended.text).to.not.equal('running');
            }
        }

        expect(runId).to.be.above(0);
        const first = instances.find((instance) => instance.name === 'first');
        if (!first) throw new Error('no first instance');
        await waitUntil('the run is paused on the first instance', () => Fs.existsSync(pauseFile), { timeoutMs: 120_000, intervalMs: 100 });
        first.process.child.kill('SIGKILL');
        const killedAt = Date.now();
        await first.process.exited;
        try {
            // Read through the balancer, which now reaches only the second instance.
            const messages = await readEvents(admin, `/api/runs/${runId}/events`);
            const tookMs = Date.now() - killedAt;
            expect(runEndState(messages)).to.equal('interrupted');
            const lines = runLines(messages).map((line) => line.text);
            expect(lines).to.include('The server running this run stopped while it was in progress; the run was interrupted.');
            expect(String(lines.at(-1)), lines.join('\n')).to.startWith('The interrupted run was undone');
            // A lease lapses within one period of the last renewal, and the survivor looks once a period: about twice it.
            expect(tookMs).to.be.below((2 * LEASE_SECONDS + 15) * 1000);

            const again = await admin.post(`/api/apps/${app}/deploy`, {});
            expect(again.status, again.text).to.equal(202);
            expect(instanceAt(upstreamOf(again.headers))).to.equal('second');
            const ended = await runToEnd(admin, again);
            expect(ended.state, ended.text).to.not.equal('running');
            expect(await database.knex('dp_runs').where({ state: 'running' }).select('id', 'app_name')).to.equal([]);
            const shown = await admin.get(`/api/apps/${app}`);
            expect(shown.status, shown.text).to.equal(200);
            expect((shown.body as { app: { state: string } }).app.state).to.not.equal('deploying');
        } finally {
            await revive(first);
        }
    });
});
