import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { callRunner, giteaCaller, registerRunner, seedRuns } from '../../domain/actions/fixtures.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ApiRunner {
    id: number;
    name: string;
    status: string;
    busy: boolean;
    disabled: boolean;
    labels: Array<{ id: number; name: string; type: string }>;
}

interface ApiRun {
    id: number;
    run_number: number;
    event: string;
    head_branch: string;
    head_sha: string;
    status: string;
    conclusion: string;
    display_title: string;
    path: string;
    actor: { login: string };
    repository: { full_name: string };
}

interface ApiJob {
    id: number;
    name: string;
    status: string;
    conclusion: string;
    run_id: number;
    head_branch: string;
    labels: string[];
    steps: Array<{ name: string; number: number; status: string; conclusion: string }>;
}

describe('admin: actions runners, runs and jobs', () => {
    let context: TestServer;
    let admin: TestUser;
    let someone: TestUser;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'root', admin: true });
        someone = await createTestUser(context.server, { name: 'sam' });
    });

    after(async () => {
        await context.cleanup();
    });

    const request = async (method: string, url: string, payload?: object, headers: Record<string, string> = admin.headers) =>
        await context.server.inject({ method, url: `/api/v1${url}`, payload, headers });

    const registrationToken = async () => {
        const response = await request('POST', '/admin/actions/runners/registration-token');
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('adminCreateRunnerRegistrationToken', 200, response.result)).to.equal([]);
        return (response.result as { token: string }).token;
    };

    /** A runner of the test's own, online as registering leaves it, with the labels it declares when given. */
    const newRunner = async (name: string, labels?: string[]) => {
        const runner = await registerRunner(context.server, await registrationToken(), name);
        if (labels) {
            const declared = await callRunner(context.server, 'Declare', { version: 'v0.2.12', labels }, runner.headers);
            expect(declared.statusCode).to.equal(200);
        }

        return runner;
    };

    const listRunners = async (query = '') =>
        (await request('GET', `/admin/actions/runners${query}`)).result as { runners: ApiRunner[]; total_count: number };

    /** The runs and jobs the tests list: sam's repository `app` with three runs, made once, by the first test that needs them. */
    let seeded: Promise<number[]> | undefined;
    const haveRuns = async () => await (seeded ??= seedRuns(context.server, someone.user, admin.user, 'app'));

    describe('registration tokens and the runner protocol', () => {
        it('hands out one active token per scope until it is used', async () => {
            const token = await registrationToken();
            expect(token).to.match(/^[0-9a-f]{40}$/);
            expect(await registrationToken()).to.equal(token);
            const row = await context.database.knex('action_runner_tokens').where({ is_active: true }).first();
            expect(row.token_sealed).to.not.contain(token);
            await registerRunner(context.server, token, 'first');
            const next = await registrationToken();
            expect(next).to.not.equal(token);
            const spent = await callRunner(context.server, 'Register', { name: 'again', token });
            expect(spent).to.equal({
                statusCode: 400,
                body: { code: 'invalid_argument', message: 'runner registration token has been invalidated, please use the latest one' },
            });
        });

        it('answers Connect errors for missing fields, unknown tokens, bad credentials and unknown procedures', async () => {
            expect(await callRunner(context.server, 'Register', { name: 'x' })).to.equal({
                statusCode: 400,
                body: { code: 'invalid_argument', message: 'missing runner token, name' },
            });
            expect((await callRunner(context.server, 'Register', { name: 'x', token: 'nope' })).body.message).to.equal(
                'runner registration token not found',
            );
            expect(await callRunner(context.server, 'Declare', {}, { 'x-runner-uuid': 'nobody', 'x-runner-token': 'x' })).to.equal({
                statusCode: 401,
                body: { code: 'unauthenticated', message: 'unregistered runner' },
            });
            expect(await callRunner(context.server, 'UpdateLog', {})).to.equal({
                statusCode: 501,
                body: { code: 'unimplemented', message: 'runner.v1.RunnerService.UpdateLog is not implemented' },
            });
            const proto = await context.server.inject({
                method: 'POST',
                url: '/api/actions/runner.v1.RunnerService/Register',
                headers: { 'content-type': 'application/proto' },
                payload: Buffer.from([0x0a, 0x01, 0x78]),
            });
            expect(proto.statusCode).to.equal(415);
        });

        it('answers an unknown procedure, inherited names included, with a Connect 404', async () => {
            for (const name of ['NoSuchProcedure', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
                expect(await callRunner(context.server, name, {}), name).to.equal({
                    statusCode: 404,
                    body: { code: 'not_found', message: `no procedure runner.v1.RunnerService.${name}` },
                });
            }
        });

        it('refuses labels longer than their column holds with invalid_argument, on Register and Declare', async () => {
            const tooMany = Array.from({ length: 7000 }, (_, index) => `label-${index}`);
            const refused = { statusCode: 400, body: { code: 'invalid_argument', message: 'labels: longer than 65535 bytes' } };
            const token = await registrationToken();
            expect(await callRunner(context.server, 'Register', { name: 'labelled', token, labels: tooMany })).to.equal(refused);
            expect(await context.database.knex('action_runners').where({ name: 'labelled' })).to.have.length(0);
            const runner = await registerRunner(context.server, token, 'labelled');
            expect(await callRunner(context.server, 'Declare', { version: 'v1', labels: tooMany }, runner.headers)).to.equal(refused);
            const fits = tooMany.slice(0, 5000);
            expect((await callRunner(context.server, 'Declare', { version: 'v1', labels: fits }, runner.headers)).statusCode).to.equal(200);
        });

        it('pings, registers, declares and fetches (no task yet) as a runner does', async () => {
            const ping = await context.server.inject({
                method: 'POST',
                url: '/api/actions/ping.v1.PingService/Ping',
                headers: { 'content-type': 'application/json' },
                payload: { data: 'builder' },
            });
            expect(JSON.parse(ping.payload)).to.equal({ data: 'Hello, builder!' });
            const runner = await registerRunner(context.server, await registrationToken(), 'builder', ['ubuntu-latest:docker://node:20']);
            expect(runner.uuid).to.match(/^[0-9a-f-]{36}$/);
            const declared = await callRunner(
                context.server,
                'Declare',
                { version: 'v0.2.12', labels: ['self-hosted', 'linux'] },
                runner.headers,
            );
            expect(declared.statusCode).to.equal(200);
            expect(declared.body.runner).to.equal({
                id: String(runner.id),
                uuid: runner.uuid,
                name: 'builder',
                version: 'v0.2.12',
                labels: ['self-hosted', 'linux'],
            });
            expect(await callRunner(context.server, 'FetchTask', { tasksVersion: '0' }, runner.headers)).to.equal({
                statusCode: 200,
                body: {},
            });
            const stored = await context.database.knex('action_runners').where({ id: runner.id }).first();
            expect(stored.token_hash).to.not.equal(runner.token);
            expect(stored.owner_id).to.equal(0);
        });
    });

    describe('runners', () => {
        it('lists every runner with its status and labels, and filters on disabled', async () => {
            const before = await listRunners();
            await newRunner('lister', ['self-hosted', 'linux']);
            const shelved = await newRunner('lister-shelved');
            await context.database.knex('action_runners').where({ id: shelved.id }).update({ is_disabled: true });
            const response = await request('GET', '/admin/actions/runners');
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('getAdminRunners', 200, response.result)).to.equal([]);
            expect(response.headers['x-total-count']).to.be.undefined();
            const { runners, total_count } = response.result as { runners: ApiRunner[]; total_count: number };
            expect(total_count).to.equal(before.total_count + 2);
            expect(runners.length).to.equal(total_count);
            const lister = runners.find((runner) => runner.name === 'lister');
            expect(lister).to.include({ status: 'online', busy: false, disabled: false });
            expect(lister?.labels).to.equal([
                { id: 0, name: 'self-hosted', type: 'custom' },
                { id: 1, name: 'linux', type: 'custom' },
            ]);
            const disabled = await listRunners('?disabled=true');
            expect(disabled.total_count).to.equal(before.runners.filter((runner) => runner.disabled).length + 1);
            expect(disabled.runners.filter((runner) => !runner.disabled)).to.equal([]);
            expect(disabled.runners.map((runner) => runner.name)).to.include('lister-shelved');
        });

        it('derives offline and busy from the last contact', async () => {
            const knex = context.database.knex;
            const stale = await newRunner('stale');
            const working = await newRunner('working');
            await knex('action_runners')
                .where({ id: stale.id })
                .update({ last_online: Date.now() - 120_000 });
            await knex('action_runners').where({ id: working.id }).update({ last_active: Date.now() });
            const { runners } = await listRunners();
            const ours = runners.filter((runner) => [stale.id, working.id].includes(runner.id));
            expect(ours.map((runner) => [runner.name, runner.status, runner.busy])).to.equal([
                ['working', 'online', true],
                ['stale', 'offline', false],
            ]);
        });

        it('gets, disables and deletes a runner; 400 for a bad id, 404 for an unknown one, 422 without disabled', async () => {
            const { id } = await newRunner('retired');
            const disabledBefore = (await listRunners('?disabled=true')).total_count;
            const got = await request('GET', `/admin/actions/runners/${id}`);
            expect(got.statusCode).to.equal(200);
            expect(swaggerErrors('getAdminRunner', 200, got.result)).to.equal([]);
            const edited = await request('PATCH', `/admin/actions/runners/${id}`, { disabled: true });
            expect(edited.statusCode).to.equal(200);
            expect(swaggerErrors('updateAdminRunner', 200, edited.result)).to.equal([]);
            expect((edited.result as ApiRunner).disabled).to.be.true();
            expect((await request('PATCH', `/admin/actions/runners/${id}`, { disabled: true })).statusCode).to.equal(200);
            expect((await listRunners('?disabled=true')).total_count).to.equal(disabledBefore + 1);
            const missing = await request('PATCH', `/admin/actions/runners/${id}`, {});
            expect(missing.statusCode).to.equal(422);
            expect((missing.result as { message: string }).message).to.equal('[Disabled]: Required');
            expect((await request('GET', '/admin/actions/runners/abc')).statusCode).to.equal(400);
            const unknown = await request('GET', '/admin/actions/runners/9999');
            expect(unknown.statusCode).to.equal(404);
            expect((unknown.result as { message: string }).message).to.equal('runner with id 9999: resource does not exist');
            expect((await request('DELETE', `/admin/actions/runners/${id}`)).statusCode).to.equal(204);
            expect((await request('DELETE', `/admin/actions/runners/${id}`)).statusCode).to.equal(404);
        });

        it('is for site administrators only', async () => {
            for (const [method, url] of [
                ['GET', '/admin/actions/runners'],
                ['POST', '/admin/actions/runners/registration-token'],
                ['GET', '/admin/actions/runs'],
                ['GET', '/admin/actions/jobs'],
            ] as const) {
                expect((await request(method, url, undefined, someone.headers)).statusCode).to.equal(403);
                expect((await request(method, url, undefined, {})).statusCode).to.equal(401);
            }
        });
    });

    describe('runs and jobs', () => {
        before(async () => {
            await haveRuns();
        });

        it('lists runs newest first with Gitea fields and paging headers', async () => {
            const response = await request('GET', '/admin/actions/runs?limit=2');
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('listAdminWorkflowRuns', 200, response.result)).to.equal([]);
            expect(response.headers['x-total-count']).to.equal('3');
            expect(response.headers.link).to.contain('rel="next"');
            const { workflow_runs, total_count } = response.result as { workflow_runs: ApiRun[]; total_count: number };
            expect(total_count).to.equal(3);
            expect(workflow_runs.map((run) => run.run_number)).to.equal([3, 2]);
            expect(workflow_runs[0]).to.include({
                event: 'pull_request',
                status: 'completed',
                conclusion: 'failure',
                path: 'lint.yml@refs/pull/1/head',
            });
            expect(workflow_runs[1]).to.include({
                head_branch: 'dev',
                status: 'in_progress',
                conclusion: '',
                display_title: 'Work in progress',
            });
            expect(workflow_runs[1]?.actor.login).to.equal('root');
            expect(workflow_runs[1]?.repository.full_name).to.equal('sam/app');
        });

        it('filters runs by status, event, branch, actor and head SHA', async () => {
            const numbers = async (query: string) => {
                const response = await request('GET', `/admin/actions/runs?${query}`);
                expect(response.statusCode, query).to.equal(200);
                return (response.result as { workflow_runs: ApiRun[] }).workflow_runs.map((run) => run.run_number);
            };

            expect(await numbers('status=completed')).to.equal([3, 1]);
            expect(await numbers('status=in_progress')).to.equal([2]);
            expect(await numbers('status=success')).to.equal([1]);
            expect(await numbers('status=queued')).to.equal([]);
            expect(await numbers('event=push')).to.equal([2, 1]);
            expect(await numbers('branch=main')).to.equal([1]);
            expect(await numbers('actor=sam')).to.equal([3]);
            expect(await numbers(`head_sha=${'b'.repeat(40)}`)).to.equal([2]);
            const bad = await request('GET', '/admin/actions/runs?status=sleeping');
            expect(bad.statusCode).to.equal(400);
            expect((bad.result as { message: string }).message).to.equal('invalid status sleeping');
            expect((await request('GET', '/admin/actions/runs?actor=nobody')).statusCode).to.equal(422);
        });

        it('lists jobs by id, ascending unless told otherwise, with steps, and filters on status', async () => {
            const response = await request('GET', '/admin/actions/jobs');
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('listAdminWorkflowJobs', 200, response.result)).to.equal([]);
            expect(response.headers['x-total-count']).to.equal('4');
            const { jobs } = response.result as { jobs: ApiJob[] };
            expect(jobs.map((job) => job.name)).to.equal(['build', 'build', 'deploy', 'lint']);
            expect(jobs[1]).to.include({ status: 'in_progress', head_branch: 'dev' });
            expect(jobs[1]?.steps.map((step) => [step.name, step.number, step.status, step.conclusion])).to.equal([
                ['checkout', 0, 'completed', 'success'],
                ['test', 1, 'in_progress', ''],
            ]);
            expect(jobs[2]).to.include({ status: 'waiting' });
            const descending = await request('GET', '/admin/actions/jobs?sort=id&order=desc&status=completed');
            expect((descending.result as { jobs: ApiJob[] }).jobs.map((job) => job.name)).to.equal(['lint', 'build']);
            expect(((await request('GET', '/admin/actions/jobs?sort=name')).result as { message: string }).message).to.equal(
                'Invalid sort mode: "name"',
            );
            expect(((await request('GET', '/admin/actions/jobs?sort=id&order=up')).result as { message: string }).message).to.equal(
                'Invalid sort order: "up"',
            );
            // Without a sort, Gitea ignores the order.
            expect((await request('GET', '/admin/actions/jobs?order=up')).statusCode).to.equal(200);
            expect((await request('GET', '/admin/actions/jobs?status=nope')).statusCode).to.equal(400);
        });
    });

    describe('through the gitea-js client and real HTTP', () => {
        it('calls every admin actions operation', async () => {
            await haveRuns();
            await context.server.start();
            const call = giteaCaller(context.server, admin.token);
            const token = ((await call('POST', '/admin/actions/runners/registration-token')).data as { token: string }).token;
            const registered = await fetch(`http://127.0.0.1:${context.server.info.port}/api/actions/runner.v1.RunnerService/Register`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ name: 'over-http', token, labels: ['linux'] }),
            });
            const id = Number(((await registered.json()) as { runner: { id: string } }).runner.id);
            const listed = (await call('GET', '/admin/actions/runners')).data as { runners: ApiRunner[] };
            expect(listed.runners.map((runner) => runner.name)).to.include('over-http');
            expect(((await call('GET', `/admin/actions/runners/${id}`)).data as ApiRunner).name).to.equal('over-http');
            expect(((await call('PATCH', `/admin/actions/runners/${id}`, { disabled: true })).data as ApiRunner).disabled).to.be.true();
            expect((await call('DELETE', `/admin/actions/runners/${id}`)).status).to.equal(204);
            expect(((await call('GET', '/admin/actions/runs')).data as { total_count: number }).total_count).to.equal(3);
            expect(((await call('GET', '/admin/actions/jobs')).data as { total_count: number }).total_count).to.equal(4);
        });
    });
});
