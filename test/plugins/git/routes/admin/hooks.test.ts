import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ApiHook {
    id: number;
    type: string;
    active: boolean;
    events: string[];
    config: Record<string, string>;
    authorization_header: string;
    branch_filter: string;
}

const HOOK = { type: 'gitea', config: { url: 'https://hooks.example.com/in', content_type: 'json', secret: 's3cret' } };

/** A system hook with a branch filter and an authorization header, which the edit test finds kept. */
const SYSTEM_HOOK = {
    ...HOOK,
    config: { ...HOOK.config, is_system_webhook: 'true' },
    events: ['issues', 'repository'],
    authorization_header: 'Bearer xyz',
    branch_filter: 'main',
    active: true,
};

describe('admin: system and default hooks', () => {
    let context: TestServer;
    let admin: TestUser;
    let user: TestUser;
    let systemId = 0;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'hookroot', admin: true });
        user = await createTestUser(context.server, { name: 'plainuser' });
    });

    after(async () => {
        await context.cleanup();
    });

    const request = async (method: string, url: string, headers: object | undefined, payload?: object, on = context) =>
        await on.server.inject({ method, url: `/api/v1${url}`, headers: headers as Record<string, string>, payload });

    /** The system hook the get and edit tests use: made here when the test that makes it has not run. */
    const haveSystemHook = async () => {
        if (systemId === 0) {
            systemId = ((await request('POST', '/admin/hooks', admin.headers, SYSTEM_HOOK)).result as ApiHook).id;
        }
    };

    it('creates a system hook (201) without ever showing its secret or authorization header', async () => {
        const response = await request('POST', '/admin/hooks', admin.headers, SYSTEM_HOOK);
        expect(response.statusCode).to.equal(201);
        expect(swaggerErrors('adminCreateHook', 201, response.result)).to.equal([]);
        const hook = response.result as ApiHook;
        systemId = hook.id;
        expect(hook).to.include({ type: 'gitea', active: true, authorization_header: '', branch_filter: 'main' });
        expect(hook.config).to.equal({ url: 'https://hooks.example.com/in', content_type: 'json' });
        expect(hook.events).to.equal(['issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment', 'repository']);
        expect(response.payload).to.not.contain('s3cret');
        expect(response.payload).to.not.contain('xyz');
    });

    it('creates a default hook when is_system_webhook is not true, inactive and listening to push by default', async () => {
        const response = await request('POST', '/admin/hooks', admin.headers, HOOK);
        expect(response.statusCode).to.equal(201);
        const hook = response.result as ApiHook;
        expect(hook.active).to.be.false();
        expect(hook.events).to.equal(['push']);
    });

    it('lists system hooks by default, default ones or all on request, with paging headers', async () => {
        // A server of its own, so that its one system hook and one default hook are all there is.
        const own = await createTestServer();
        try {
            const root = await createTestUser(own.server, { name: 'listroot', admin: true });
            const made = async (system: boolean) => {
                const config = { ...HOOK.config, ...(system ? { is_system_webhook: 'true' } : {}) };
                return ((await request('POST', '/admin/hooks', root.headers, { ...HOOK, config }, own)).result as ApiHook).id;
            };
            const systemHook = await made(true);
            const defaultHook = await made(false);
            const system = await request('GET', '/admin/hooks', root.headers, undefined, own);
            expect(system.statusCode).to.equal(200);
            expect(swaggerErrors('adminListHooks', 200, system.result)).to.equal([]);
            expect((system.result as ApiHook[]).map((hook) => hook.id)).to.equal([systemHook]);
            expect(system.headers['x-total-count']).to.equal('1');
            const defaults = await request('GET', '/admin/hooks?type=default', root.headers, undefined, own);
            expect((defaults.result as ApiHook[]).map((hook) => hook.id)).to.equal([defaultHook]);
            const all = await request('GET', '/admin/hooks?type=all&limit=1', root.headers, undefined, own);
            expect((all.result as ApiHook[]).map((hook) => hook.id)).to.equal([systemHook]);
            expect(all.headers['x-total-count']).to.equal('2');
            expect(all.headers.link).to.contain('rel="next"');
            // Gitea lists the system hooks for any other type, rather than refusing it.
            const other = await request('GET', '/admin/hooks?type=other', root.headers, undefined, own);
            expect(other.statusCode).to.equal(200);
            expect((other.result as ApiHook[]).map((hook) => hook.id)).to.equal([systemHook]);
        } finally {
            await own.cleanup();
        }
    });

    it('refuses a bad type, a missing or bad url or content type, and a bad is_system_webhook (422)', async () => {
        const cases: Array<[object, string]> = [
            [{ ...HOOK, type: 'carrier-pigeon' }, 'Invalid hook type: carrier-pigeon'],
            [{ config: HOOK.config }, '[Type]: Required'],
            [{ type: 'gitea', config: { content_type: 'json' } }, 'Missing config option: url'],
            [{ type: 'gitea', config: { url: 'https://x.example' } }, 'Missing config option: content_type'],
            [{ type: 'gitea', config: { url: 'https://x.example', content_type: 'xml' } }, 'Invalid content type'],
            [{ type: 'gitea', config: { url: 'ftp://x.example', content_type: 'json' } }, 'Invalid url'],
            [{ ...HOOK, config: { ...HOOK.config, is_system_webhook: 'maybe' } }, 'Invalid is_system_webhook value'],
            [{ ...HOOK, branch_filter: '{main' }, '[BranchFilter]: GlobPattern'],
        ];
        for (const [payload, message] of cases) {
            const response = await request('POST', '/admin/hooks', admin.headers, payload);
            expect(response.statusCode, JSON.stringify(payload)).to.equal(422);
            expect((response.result as { message: string }).message).to.equal(message);
        }
    });

    it('gets one hook (200), 404 for an unknown one', async () => {
        await haveSystemHook();
        const response = await request('GET', `/admin/hooks/${systemId}`, admin.headers);
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('adminGetHook', 200, response.result)).to.equal([]);
        expect((await request('GET', '/admin/hooks/99999', admin.headers)).statusCode).to.equal(404);
    });

    it('edits a hook: events replaced, other fields only when given (200); 404 unknown; 422 bad content type', async () => {
        await haveSystemHook();
        const response = await request('PATCH', `/admin/hooks/${systemId}`, admin.headers, {
            config: { url: 'https://hooks.example.com/moved', content_type: 'form' },
            events: ['issue_comment'],
            active: false,
        });
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('adminEditHook', 200, response.result)).to.equal([]);
        const hook = response.result as ApiHook;
        expect(hook.config).to.equal({ url: 'https://hooks.example.com/moved', content_type: 'form' });
        expect(hook.events).to.equal(['issue_comment']);
        expect(hook).to.include({ active: false, branch_filter: 'main' });
        const stored = await context.database.knex('webhooks').where({ id: systemId }).first();
        expect(String(stored.authorization_header_sealed)).to.startWith('v1:');
        expect((await request('PATCH', '/admin/hooks/99999', admin.headers, { active: true })).statusCode).to.equal(404);
        const bad = await request('PATCH', `/admin/hooks/${systemId}`, admin.headers, { config: { content_type: 'yaml' } });
        expect(bad.statusCode).to.equal(422);
    });

    it('is for site administrators only (403), signed in (401), with the admin scope (403)', async () => {
        expect((await request('GET', '/admin/hooks', user.headers)).statusCode).to.equal(403);
        expect((await request('POST', '/admin/hooks', user.headers, HOOK)).statusCode).to.equal(403);
        expect((await request('GET', '/admin/hooks', undefined)).statusCode).to.equal(401);
        const scoped = await createTestUser(context.server, { name: 'scopedroot', admin: true, scopes: ['read:user'] });
        expect((await request('GET', '/admin/hooks', scoped.headers)).statusCode).to.equal(403);
    });

    it('deletes a hook (204), then 404', async () => {
        const id = ((await request('POST', '/admin/hooks', admin.headers, HOOK)).result as ApiHook).id;
        expect((await request('DELETE', `/admin/hooks/${id}`, admin.headers)).statusCode).to.equal(204);
        expect((await request('DELETE', `/admin/hooks/${id}`, admin.headers)).statusCode).to.equal(404);
    });

    it('works through the gitea-js client', async () => {
        await context.server.start();
        const api = giteaClient(context.server, admin);
        const created = await api.admin.adminCreateHook({
            type: 'gitea',
            config: { url: 'https://js.example.com/hook', content_type: 'json', is_system_webhook: 'true' },
            events: ['repository'],
            active: true,
        });
        expect(created.status).to.equal(201);
        const id = created.data.id as number;
        // gitea-js 1.23 predates the type filter in its types; the query goes through all the same.
        const listed = await api.admin.adminListHooks({ type: 'system' } as { page?: number });
        expect(listed.data.map((hook) => hook.id)).to.include(id);
        expect((await api.admin.adminGetHook(id)).data.config?.url).to.equal('https://js.example.com/hook');
        const edited = await api.admin.adminEditHook(id, { events: ['issues'], active: false });
        expect(edited.data.active).to.be.false();
        expect((await api.admin.adminDeleteHook(id)).status).to.equal(204);
    });
});
