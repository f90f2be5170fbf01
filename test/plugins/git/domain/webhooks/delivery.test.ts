import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { type Receiver, startReceiver } from './receiver.ts';

export const lab = Lab.script();
const { describe, it, before, after, beforeEach, afterEach } = lab;
const { expect } = Code;

const FAST_RETRIES = { WEBHOOK_ALLOWED_HOST_LIST: 'loopback', WEBHOOK_RETRY_BACKOFF_MS: '50', WEBHOOK_MAX_ATTEMPTS: '4' };
const SECRET = 'a shared secret';

function hmac(body: string): string {
    return Crypto.createHmac('sha256', SECRET).update(body).digest('hex');
}

interface Payload {
    action: string;
    number?: number;
    repository: { full_name: string; permissions: { admin: boolean } };
    organization?: { login: string };
    sender: { login: string };
    issue?: { number: number; title: string; state: string };
    comment?: { body: string; issue_url: string };
    changes?: Record<string, { from: string }>;
    is_pull?: boolean;
}

async function request(context: TestServer, method: string, url: string, headers: object, payload?: object) {
    return await context.server.inject({ method, url: `/api/v1${url}`, headers: headers as Record<string, string>, payload });
}

async function createHook(context: TestServer, admin: TestUser, url: string, extra: object = {}, config: object = {}) {
    const response = await request(context, 'POST', '/admin/hooks', admin.headers, {
        type: 'gitea',
        active: true,
        events: ['repository', 'issues', 'issue_comment'],
        config: { url, content_type: 'json', secret: SECRET, is_system_webhook: 'true', ...config },
        ...extra,
    });
    expect(response.statusCode, response.payload).to.equal(201);
    return response.result as { id: number };
}

async function deleteHook(context: TestServer, admin: TestUser, hook: { id: number }) {
    const response = await request(context, 'DELETE', `/admin/hooks/${hook.id}`, admin.headers);
    expect(response.statusCode, response.payload).to.equal(204);
}

async function createRepo(context: TestServer, admin: TestUser, owner: string, name: string) {
    const response = await request(context, 'POST', `/admin/users/${owner}/repos`, admin.headers, { name });
    expect(response.statusCode, response.payload).to.equal(201);
    return response.result as { id: number };
}

async function createIssue(context: TestServer, admin: TestUser, repo: string, title: string) {
    const response = await request(context, 'POST', `/repos/${repo}/issues`, admin.headers, { title });
    expect(response.statusCode, response.payload).to.equal(201);
}

interface HookTask {
    is_delivered: number | boolean;
    is_succeed: number | boolean;
    attempts: number | string;
    payload_content: string;
    request_info: string;
    response_info: string;
    duration_ms: number | string;
}

/** The hooks' deliveries once `count` of them are queued and none is left to try again. */
async function settledTasks(context: TestServer, hookIds: number[], count: number): Promise<HookTask[]> {
    return await waitUntil(`${count} deliveries of hooks ${hookIds.join(', ')} are settled`, async () => {
        const tasks: HookTask[] = await context.database.knex('hook_tasks').whereIn('hook_id', hookIds).orderBy('id');
        return tasks.length === count && tasks.every((task) => Boolean(task.is_delivered)) && tasks;
    });
}

/**
 * Every test makes its own repositories, receiver and hooks, and removes its hooks when it ends: system hooks hear
 * every repository, so a hook left behind would hear the tests after it.
 */
describe('webhooks: delivery', () => {
    let context: TestServer;
    let admin: TestUser;
    let receiver: Receiver;
    let hooks: Array<{ id: number }>;

    before(async () => {
        context = await createTestServer(FAST_RETRIES);
        await context.server.start();
        admin = await createTestUser(context.server, { name: 'hookadmin', admin: true });
    });

    beforeEach(async () => {
        receiver = await startReceiver();
        hooks = [];
    });

    afterEach(async () => {
        await receiver.close();
        for (const hook of hooks) {
            await deleteHook(context, admin, hook);
        }
    });

    after(async () => {
        await context.cleanup();
    });

    /** A hook delivering to this test's receiver, removed when the test ends. */
    async function hookFor(extra: object = {}, config: object = {}) {
        const hook = await createHook(context, admin, receiver.url, extra, config);
        hooks.push(hook);
        return hook;
    }

    it('delivers repository, issue and comment events with Gitea headers, signatures and the authorization header', async () => {
        await hookFor({ authorization_header: 'Bearer receiver-token' });
        await createRepo(context, admin, 'hookadmin', 'hooked');
        const [created] = await receiver.waitFor(1);
        const headers = created?.headers ?? {};
        expect(headers['x-gitea-event']).to.equal('repository');
        expect(headers['x-gitea-event-type']).to.equal('repository');
        expect(headers['x-gitea-delivery']).to.match(/^[0-9a-f-]{36}$/);
        expect(headers['content-type']).to.equal('application/json');
        expect(headers['x-gitea-signature']).to.equal(hmac(created?.body ?? ''));
        expect(headers['x-hub-signature-256']).to.equal(`sha256=${hmac(created?.body ?? '')}`);
        expect(headers.authorization).to.equal('Bearer receiver-token');
        const payload = JSON.parse(created?.body ?? '{}') as Payload;
        expect(payload.action).to.equal('created');
        expect(payload.repository.full_name).to.equal('hookadmin/hooked');
        expect(payload.repository.permissions.admin).to.be.true();
        expect(payload.organization?.login).to.equal('hookadmin');
        expect(payload.sender.login).to.equal('hookadmin');

        await createIssue(context, admin, 'hookadmin/hooked', 'Broken');
        const comment = await request(context, 'POST', '/repos/hookadmin/hooked/issues/1/comments', admin.headers, { body: 'Still' });
        expect(comment.statusCode).to.equal(201);
        const edit = await request(context, 'PATCH', '/repos/hookadmin/hooked/issues/1', admin.headers, {
            title: 'Fixed',
            state: 'closed',
        });
        expect(edit.statusCode).to.equal(201);
        // Deliveries due together go out concurrently and may overtake each other: they are matched by what they say.
        const later = (await receiver.waitFor(5)).slice(1).map((delivery) => ({
            event: delivery.headers['x-gitea-event'],
            body: JSON.parse(delivery.body) as Payload,
        }));
        const find = (event: string, action: string) => later.find((item) => item.event === event && item.body.action === action)?.body;
        expect(later.map((item) => `${item.event} ${item.body.action}`).sort()).to.equal([
            'issue_comment created',
            'issues closed',
            'issues edited',
            'issues opened',
        ]);
        const opened = find('issues', 'opened');
        expect(opened?.number).to.equal(1);
        expect(opened?.issue).to.include({ number: 1, title: 'Broken', state: 'open' });
        const commented = find('issue_comment', 'created');
        expect(commented?.comment?.body).to.equal('Still');
        expect(commented?.comment?.issue_url).to.equal('http://127.0.0.1:3000/hookadmin/hooked/issues/1');
        expect(commented?.is_pull).to.be.false();
        expect(find('issues', 'edited')?.changes).to.equal({ title: { from: 'Broken' } });
    });

    it('records each delivery (request without the authorization value, response status and excerpt, duration)', async () => {
        const hook = await hookFor({ authorization_header: 'Bearer receiver-token' });
        await createRepo(context, admin, 'hookadmin', 'recorded');
        await createIssue(context, admin, 'hookadmin/recorded', 'Noted');
        const tasks = await settledTasks(context, [hook.id], 2);
        for (const task of tasks) {
            expect(Boolean(task.is_succeed)).to.be.true();
            const requestInfo = JSON.parse(task.request_info) as { url: string; headers: Record<string, string> };
            expect(requestInfo.url).to.equal(receiver.url);
            expect(requestInfo.headers.Authorization).to.equal('(hidden)');
            expect(JSON.parse(task.response_info)).to.include({ status: 200, body: 'thanks' });
            expect(Number(task.duration_ms)).to.be.at.least(0);
        }

        const stored = await context.database.knex('webhooks').where({ id: hook.id }).first('secret_sealed', 'authorization_header_sealed');
        expect(String(stored.secret_sealed)).to.startWith('v1:');
        expect(stored.secret_sealed).to.not.contain(SECRET);
        expect(stored.authorization_header_sealed).to.not.contain('receiver-token');
    });

    it('retries a receiver that fails twice, with back-off, then succeeds', async () => {
        receiver.answers.push(500, 503);
        await createRepo(context, admin, 'hookadmin', 'flaky');
        const hook = await hookFor({ events: ['issues'] });
        await createIssue(context, admin, 'hookadmin/flaky', 'Flaky');
        const attempts = await receiver.waitFor(3);
        expect(new Set(attempts.map((attempt) => attempt.headers['x-gitea-delivery'])).size).to.equal(1);
        expect((attempts[2]?.at ?? 0) - (attempts[1]?.at ?? 0)).to.be.at.least(90);
        const [task] = await settledTasks(context, [hook.id], 1);
        expect(Number(task?.attempts)).to.equal(3);
        expect(Boolean(task?.is_succeed)).to.be.true();
        expect(receiver.received.length).to.equal(3);
    });

    it('gives up after WEBHOOK_MAX_ATTEMPTS failures', async () => {
        receiver.answers.push(500, 500, 500, 500, 500);
        await createRepo(context, admin, 'hookadmin', 'hopeless');
        const hook = await hookFor({ events: ['issues'] });
        await createIssue(context, admin, 'hookadmin/hopeless', 'Hopeless');
        // The worker records the last answer after the receiver has it: the task is settled only then.
        const [task] = await settledTasks(context, [hook.id], 1);
        expect(Boolean(task?.is_succeed)).to.be.false();
        expect(Number(task?.attempts)).to.equal(4);
        expect(receiver.received.length).to.equal(4);
    });

    it('sends form payloads as payload=<json>, signed over the JSON', async () => {
        await createRepo(context, admin, 'hookadmin', 'formed');
        await createIssue(context, admin, 'hookadmin/formed', 'Formal');
        await hookFor({ events: ['issue_comment'] }, { content_type: 'form' });
        const comment = await request(context, 'POST', '/repos/hookadmin/formed/issues/1/comments', admin.headers, { body: 'form' });
        expect(comment.statusCode).to.equal(201);
        const [delivery] = await receiver.waitFor(1);
        expect(delivery?.headers['content-type']).to.equal('application/x-www-form-urlencoded');
        const json = new URLSearchParams(delivery?.body ?? '').get('payload') ?? '';
        expect((JSON.parse(json) as Payload).action).to.equal('created');
        expect(delivery?.headers['x-gitea-signature']).to.equal(hmac(json));
    });

    it('copies default hooks into repositories created afterwards, which then hear their own events', async () => {
        const older = await createRepo(context, admin, 'hookadmin', 'older');
        const hook = await hookFor({ events: ['repository', 'issues'] }, { is_system_webhook: 'false' });
        const listed = await request(context, 'GET', '/admin/hooks?type=default', admin.headers);
        expect((listed.result as Array<{ id: number }>).map((item) => item.id)).to.equal([hook.id]);
        const newer = await createRepo(context, admin, 'hookadmin', 'newer');
        await receiver.waitFor(1);
        const copies = await context.database.knex('webhooks').whereIn('repo_id', [older.id, newer.id]).select('id', 'repo_id');
        expect(copies.map((copy: { repo_id: number }) => Number(copy.repo_id))).to.equal([newer.id]);
        await createIssue(context, admin, 'hookadmin/newer', 'Only here');
        await createIssue(context, admin, 'hookadmin/older', 'Not for the copy');
        // Both events are queued by the time their requests are answered: once the copy's deliveries are settled,
        // nothing more can reach the receiver.
        const tasks = await settledTasks(context, [Number(copies[0]?.id)], 2);
        expect(tasks.map((task) => (JSON.parse(task.payload_content) as Payload).action)).to.equal(['created', 'opened']);
        const bodies = receiver.received.map((delivery) => JSON.parse(delivery.body) as Payload);
        expect(bodies.map((body) => body.action).sort()).to.equal(['created', 'opened']);
        expect(bodies.find((body) => body.action === 'opened')?.repository.full_name).to.equal('hookadmin/newer');
    });

    it('tells system hooks when a purged user takes their repositories along', async () => {
        await hookFor({ events: ['repository'] });
        const leaving = await createTestUser(context.server, { name: 'leaving' });
        await createRepo(context, admin, 'leaving', 'gone');
        expect((await request(context, 'DELETE', '/admin/users/leaving?purge=true', admin.headers)).statusCode).to.equal(204);
        const bodies = (await receiver.waitFor(2)).map((delivery) => JSON.parse(delivery.body) as Payload);
        expect(bodies.map((body) => body.action).sort()).to.equal(['created', 'deleted']);
        const payload = bodies.find((body) => body.action === 'deleted') as Payload;
        expect(payload.repository.full_name).to.equal('leaving/gone');
        expect(leaving.user.name).to.equal('leaving');
    });

    it('answers every hook body as the Swagger document says', async () => {
        const system = await hookFor({ authorization_header: 'Bearer receiver-token' });
        const copied = await hookFor({ events: ['issues'] }, { is_system_webhook: 'false', content_type: 'form' });
        const listed = await request(context, 'GET', '/admin/hooks?type=all', admin.headers);
        expect(listed.statusCode).to.equal(200);
        expect((listed.result as Array<{ id: number }>).map((item) => item.id)).to.equal([system.id, copied.id]);
        expect(swaggerErrors('adminListHooks', 200, listed.result)).to.equal([]);
    });
});

describe('webhooks: the allow-list', () => {
    it('does not deliver to a loopback receiver under the default allow-list (external)', async () => {
        const context = await createTestServer({ WEBHOOK_MAX_ATTEMPTS: '1' });
        const receiver = await startReceiver();
        try {
            await context.server.start();
            const admin = await createTestUser(context.server, { name: 'guarded', admin: true });
            const byAddress = await createHook(context, admin, receiver.url, { events: ['repository'] });
            const byName = await createHook(context, admin, `http://localhost:${receiver.port}/by-name`, { events: ['repository'] });
            await createRepo(context, admin, 'guarded', 'probe');
            const tasks = await settledTasks(context, [byAddress.id, byName.id], 2);
            for (const task of tasks) {
                const info = JSON.parse(task.response_info) as { status: number; body: string };
                expect(info.status).to.equal(0);
                expect(info.body).to.contain('WEBHOOK_ALLOWED_HOST_LIST');
            }

            expect(receiver.received).to.equal([]);
        } finally {
            await receiver.close();
            await context.cleanup();
        }
    });
});

describe('webhooks: restart', () => {
    it('sends deliveries queued before a stop once a new server starts on the same database', async () => {
        const first = await createTestServer(FAST_RETRIES);
        const receiver = await startReceiver();
        let second: TestServer | undefined;
        try {
            // Never started: events are queued but nothing is sent before it stops.
            const admin = await createTestUser(first.server, { name: 'restarter', admin: true });
            await createHook(first, admin, receiver.url);
            await createRepo(first, admin, 'restarter', 'pending');
            await createIssue(first, admin, 'restarter/pending', 'Queued');
            await first.server.stop();
            const pending = await first.database.knex('hook_tasks').where({ is_delivered: false });
            expect(pending.length).to.equal(2);
            expect(receiver.received).to.equal([]);

            second = await createTestServer(FAST_RETRIES, { dataDir: first.dataDir, database: first.database });
            await second.server.start();
            // Both are due at once, so they go out together and may arrive in either order.
            const delivered = await receiver.waitFor(2);
            expect(delivered.map((delivery) => delivery.headers['x-gitea-event']).sort()).to.equal(['issues', 'repository']);
            for (const delivery of delivered) {
                expect(delivery.headers['x-gitea-signature']).to.equal(hmac(delivery.body));
            }
        } finally {
            await receiver.close();
            await (second ?? first).cleanup();
        }
    });
});

describe('webhooks: several Gatehouse processes on one database', () => {
    it('sends each queued delivery once, whichever process claims it', async () => {
        const first = await createTestServer(FAST_RETRIES);
        const receiver = await startReceiver();
        const others: TestServer[] = [];
        try {
            // Queued while no process sends: then two start at once and both find every delivery due.
            const admin = await createTestUser(first.server, { name: 'balanced', admin: true });
            await createHook(first, admin, receiver.url);
            await createRepo(first, admin, 'balanced', 'busy');
            for (let index = 0; index < 15; index += 1) {
                await createIssue(first, admin, 'balanced/busy', `Queued ${index}`);
            }
            await first.server.stop();
            const queued = (await first.database.knex('hook_tasks').where({ is_delivered: false })).length;
            expect(queued).to.equal(16);

            for (let index = 0; index < 2; index += 1) {
                others.push(await createTestServer(FAST_RETRIES, { dataDir: first.dataDir, database: first.database }));
            }
            await Promise.all(others.map((other) => other.server.start()));
            await waitUntil(
                'every delivery is sent',
                async () => (await first.database.knex('hook_tasks').where({ is_delivered: false })).length === 0,
                {
                    timeoutMs: 60_000,
                    intervalMs: 50,
                },
            );
            const deliveries = receiver.received.map((delivery) => String(delivery.headers['x-gitea-delivery']));
            expect(deliveries.length).to.equal(16);
            expect(new Set(deliveries).size).to.equal(16);
        } finally {
            await receiver.close();
            for (const other of others) await other.server.stop();
            await first.cleanup();
        }
    });
});
