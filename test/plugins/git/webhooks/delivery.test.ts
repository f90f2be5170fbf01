import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../helpers.ts';
import { swaggerErrors } from '../../../swagger.ts';
import { type Receiver, startReceiver } from './receiver.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
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

describe('webhooks: delivery', () => {
    let context: TestServer;
    let admin: TestUser;
    let receiver: Receiver;

    before(async () => {
        context = await createTestServer(FAST_RETRIES);
        await context.server.start();
        admin = await createTestUser(context.server, { name: 'hookadmin', admin: true });
        receiver = await startReceiver();
    });

    after(async () => {
        await receiver.close();
        await context.cleanup();
    });

    it('delivers repository, issue and comment events with Gitea headers, signatures and the authorization header', async () => {
        await createHook(context, admin, receiver.url, { authorization_header: 'Bearer receiver-token' });
        const repo = await request(context, 'POST', '/admin/users/hookadmin/repos', admin.headers, { name: 'hooked' });
        expect(repo.statusCode).to.equal(201);
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

        const issue = await request(context, 'POST', '/repos/hookadmin/hooked/issues', admin.headers, { title: 'Broken', body: 'It is' });
        expect(issue.statusCode).to.equal(201);
        const comment = await request(context, 'POST', '/repos/hookadmin/hooked/issues/1/comments', admin.headers, { body: 'Still' });
        expect(comment.statusCode).to.equal(201);
        const edit = await request(context, 'PATCH', '/repos/hookadmin/hooked/issues/1', admin.headers, {
            title: 'Fixed',
            state: 'closed',
        });
        expect(edit.statusCode).to.equal(201);
        const all = await receiver.waitFor(5);
        const events = all.slice(1).map((delivery) => {
            const body = JSON.parse(delivery.body) as Payload;
            return [delivery.headers['x-gitea-event'], body.action];
        });
        expect(events).to.equal([
            ['issues', 'opened'],
            ['issue_comment', 'created'],
            ['issues', 'edited'],
            ['issues', 'closed'],
        ]);
        const opened = JSON.parse(all[1]?.body ?? '{}') as Payload;
        expect(opened.number).to.equal(1);
        expect(opened.issue).to.include({ number: 1, title: 'Broken', state: 'open' });
        const commented = JSON.parse(all[2]?.body ?? '{}') as Payload;
        expect(commented.comment?.body).to.equal('Still');
        expect(commented.comment?.issue_url).to.equal('http://127.0.0.1:3000/hookadmin/hooked/issues/1');
        expect(commented.is_pull).to.be.false();
        expect((JSON.parse(all[3]?.body ?? '{}') as Payload).changes).to.equal({ title: { from: 'Broken' } });
    });

    it('records each delivery (request without the authorization value, response status and excerpt, duration)', async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const tasks = await context.database.knex('hook_tasks').orderBy('id');
        expect(tasks.length).to.equal(5);
        for (const task of tasks) {
            expect(Boolean(task.is_delivered)).to.be.true();
            expect(Boolean(task.is_succeed)).to.be.true();
            const requestInfo = JSON.parse(task.request_info) as { url: string; headers: Record<string, string> };
            expect(requestInfo.url).to.equal(receiver.url);
            expect(requestInfo.headers.Authorization).to.equal('(hidden)');
            expect(JSON.parse(task.response_info)).to.include({ status: 200, body: 'thanks' });
            expect(Number(task.duration_ms)).to.be.at.least(0);
        }

        const stored = await context.database.knex('webhooks').first('secret_sealed', 'authorization_header_sealed');
        expect(String(stored.secret_sealed)).to.startWith('v1:');
        expect(stored.secret_sealed).to.not.contain(SECRET);
        expect(stored.authorization_header_sealed).to.not.contain('receiver-token');
    });

    it('retries a receiver that fails twice, with back-off, then succeeds', async () => {
        const flaky = await startReceiver();
        try {
            flaky.answers.push(500, 503);
            await createHook(context, admin, flaky.url, { events: ['issues'] });
            await request(context, 'POST', '/repos/hookadmin/hooked/issues', admin.headers, { title: 'Flaky' });
            const attempts = await flaky.waitFor(3);
            expect(new Set(attempts.map((attempt) => attempt.headers['x-gitea-delivery'])).size).to.equal(1);
            expect((attempts[2]?.at ?? 0) - (attempts[1]?.at ?? 0)).to.be.at.least(90);
            await new Promise((resolve) => setTimeout(resolve, 200));
            expect(flaky.received.length).to.equal(3);
            const task = await context.database.knex('hook_tasks').orderBy('id', 'desc').first();
            expect(Number(task.attempts)).to.equal(3);
            expect(Boolean(task.is_succeed)).to.be.true();
        } finally {
            await flaky.close();
        }
    });

    it('gives up after WEBHOOK_MAX_ATTEMPTS failures', async () => {
        const broken = await startReceiver();
        try {
            broken.answers.push(500, 500, 500, 500, 500);
            const hook = await createHook(context, admin, broken.url, { events: ['issues'] });
            await request(context, 'POST', '/repos/hookadmin/hooked/issues', admin.headers, { title: 'Hopeless' });
            await broken.waitFor(4);
            // The worker records the last answer after the receiver has it: wait for the task to be settled.
            const deadline = Date.now() + 15_000;
            let task = await context.database.knex('hook_tasks').where({ hook_id: hook.id }).first();
            while (!task.is_delivered && Date.now() < deadline) {
                await new Promise((resolve) => setTimeout(resolve, 50));
                task = await context.database.knex('hook_tasks').where({ hook_id: hook.id }).first();
            }

            expect(Boolean(task.is_delivered)).to.be.true();
            expect(Boolean(task.is_succeed)).to.be.false();
            expect(broken.received.length).to.equal(4);
        } finally {
            await broken.close();
        }
    });

    it('sends form payloads as payload=<json>, signed over the JSON', async () => {
        const formReceiver = await startReceiver();
        try {
            await createHook(context, admin, formReceiver.url, { events: ['issue_comment'] }, { content_type: 'form' });
            await request(context, 'POST', '/repos/hookadmin/hooked/issues/1/comments', admin.headers, { body: 'form' });
            const [delivery] = await formReceiver.waitFor(1);
            expect(delivery?.headers['content-type']).to.equal('application/x-www-form-urlencoded');
            const json = new URLSearchParams(delivery?.body ?? '').get('payload') ?? '';
            expect((JSON.parse(json) as Payload).action).to.equal('created');
            expect(delivery?.headers['x-gitea-signature']).to.equal(hmac(json));
        } finally {
            await formReceiver.close();
        }
    });

    it('copies default hooks into repositories created afterwards, which then hear their own events', async () => {
        const repoReceiver = await startReceiver();
        try {
            const hook = await createHook(
                context,
                admin,
                repoReceiver.url,
                { events: ['repository', 'issues'] },
                { is_system_webhook: 'false' },
            );
            const listed = await request(context, 'GET', '/admin/hooks?type=default', admin.headers);
            expect((listed.result as Array<{ id: number }>).map((item) => item.id)).to.equal([hook.id]);
            expect((await request(context, 'POST', '/admin/users/hookadmin/repos', admin.headers, { name: 'second' })).statusCode).to.equal(
                201,
            );
            await repoReceiver.waitFor(1);
            expect((await context.database.knex('webhooks').whereNotNull('repo_id')).length).to.equal(1);
            await request(context, 'POST', '/repos/hookadmin/second/issues', admin.headers, { title: 'Only here' });
            await request(context, 'POST', '/repos/hookadmin/hooked/issues', admin.headers, { title: 'Not for the copy' });
            // Deliveries may overtake each other, so they are matched by what they say, not by order.
            const bodies = (await repoReceiver.waitFor(2)).map((delivery) => JSON.parse(delivery.body) as Payload);
            expect(bodies.map((body) => body.action).sort()).to.equal(['created', 'opened']);
            expect(bodies.find((body) => body.action === 'opened')?.repository.full_name).to.equal('hookadmin/second');
            await new Promise((resolve) => setTimeout(resolve, 300));
            expect(repoReceiver.received.length).to.equal(2);
        } finally {
            await repoReceiver.close();
        }
    });

    it('tells system hooks when a purged user takes their repositories along', async () => {
        const purgeReceiver = await startReceiver();
        try {
            await createHook(context, admin, purgeReceiver.url, { events: ['repository'] });
            const leaving = await createTestUser(context.server, { name: 'leaving' });
            await request(context, 'POST', '/admin/users/leaving/repos', admin.headers, { name: 'gone' });
            expect((await request(context, 'DELETE', '/admin/users/leaving?purge=true', admin.headers)).statusCode).to.equal(204);
            const bodies = (await purgeReceiver.waitFor(2)).map((delivery) => JSON.parse(delivery.body) as Payload);
            expect(bodies.map((body) => body.action).sort()).to.equal(['created', 'deleted']);
            const payload = bodies.find((body) => body.action === 'deleted') as Payload;
            expect(payload.action).to.equal('deleted');
            expect(payload.repository.full_name).to.equal('leaving/gone');
            expect(leaving.user.name).to.equal('leaving');
        } finally {
            await purgeReceiver.close();
        }
    });

    it('answers every hook body as the Swagger document says', async () => {
        const listed = await request(context, 'GET', '/admin/hooks?type=all', admin.headers);
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
            await createHook(context, admin, receiver.url, { events: ['repository'] });
            await createHook(context, admin, `http://localhost:${receiver.port}/by-name`, { events: ['repository'] });
            await request(context, 'POST', '/admin/users/guarded/repos', admin.headers, { name: 'probe' });
            const deadline = Date.now() + 15_000;
            let tasks: Array<{ is_delivered: number | boolean; response_info: string | null }> = [];
            while (Date.now() < deadline) {
                tasks = await context.database.knex('hook_tasks').select('is_delivered', 'response_info');
                if (tasks.length === 2 && tasks.every((task) => Boolean(task.is_delivered))) {
                    break;
                }

                await new Promise((resolve) => setTimeout(resolve, 50));
            }

            expect(tasks.length).to.equal(2);
            for (const task of tasks) {
                const info = JSON.parse(task.response_info ?? '{}') as { status: number; body: string };
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
            await request(first, 'POST', '/admin/users/restarter/repos', admin.headers, { name: 'pending' });
            await request(first, 'POST', '/repos/restarter/pending/issues', admin.headers, { title: 'Queued' });
            await first.server.stop();
            const pending = await first.database.knex('hook_tasks').where({ is_delivered: false });
            expect(pending.length).to.equal(2);
            expect(receiver.received).to.equal([]);

            second = await createTestServer(FAST_RETRIES, { dataDir: first.dataDir, database: first.database });
            await second.server.start();
            const delivered = await receiver.waitFor(2);
            expect(delivered.map((delivery) => delivery.headers['x-gitea-event'])).to.equal(['repository', 'issues']);
            expect(delivered[0]?.headers['x-gitea-signature']).to.equal(hmac(delivered[0]?.body ?? ''));
        } finally {
            await receiver.close();
            await (second ?? first).cleanup();
        }
    });
});
