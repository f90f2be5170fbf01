import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { tokens } from '../../../../plugins/git/identity/token-service.ts';
import { users } from '../../../../plugins/git/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../helpers.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SWAGGER_URL = 'http://127.0.0.1:3000/api/swagger';

function basic(user: string, password: string): string {
    return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

describe('git API: credentials and access', () => {
    let context: TestServer;
    let admin: TestUser;
    let alice: TestUser;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'root', admin: true });
        alice = await createTestUser(context.server, { name: 'alice', password: 'alice-password-1' });
    });

    after(async () => {
        await context.cleanup();
    });

    const adminUsers = (headers: Record<string, string>, query = '') =>
        context.server.inject({ url: `/api/v1/admin/users${query}`, headers });

    it('accepts "token <t>" and "Bearer <t>", case-insensitively', async () => {
        for (const scheme of ['token', 'Bearer', 'TOKEN', 'bearer']) {
            const response = await adminUsers({ authorization: `${scheme} ${admin.token}` });
            expect(response.statusCode, scheme).to.equal(200);
        }
    });

    it('accepts the deprecated ?token= and ?access_token= query parameters', async () => {
        expect((await adminUsers({}, `?token=${admin.token}`)).statusCode).to.equal(200);
        expect((await adminUsers({}, `?access_token=${admin.token}`)).statusCode).to.equal(200);
    });

    it('accepts Basic with the password, with a token as password, and with a token as user name', async () => {
        const password = await context.server.inject({
            url: '/api/v1/orgs',
            headers: { authorization: basic('alice', 'alice-password-1') },
        });
        expect(password.statusCode).to.equal(200);
        expect((await adminUsers({ authorization: basic('root', admin.token) })).statusCode).to.equal(200);
        expect((await adminUsers({ authorization: basic(admin.token, '') })).statusCode).to.equal(200);
        expect((await adminUsers({ authorization: basic(admin.token, 'x-oauth-basic') })).statusCode).to.equal(200);
    });

    it("answers 401 with Gitea's message to wrong credentials, even on public operations", async () => {
        for (const authorization of [
            `token ${'0'.repeat(40)}`,
            basic('alice', 'wrong-password'),
            basic('nobody', 'whatever1'),
            'Digest abc',
        ]) {
            const response = await context.server.inject({ url: '/api/v1/licenses', headers: { authorization } });
            expect(response.statusCode, authorization).to.equal(401);
            expect(response.result).to.equal({ message: 'invalid username, password or token', url: SWAGGER_URL });
        }
    });

    it('serves public operations to anonymous callers and asks for a token elsewhere', async () => {
        expect((await context.server.inject('/api/v1/licenses')).statusCode).to.equal(200);
        const response = await context.server.inject('/api/v1/admin/users');
        expect(response.statusCode).to.equal(401);
        expect(response.result).to.equal({ message: 'token is required', url: SWAGGER_URL });
        const markdown = await context.server.inject({ method: 'POST', url: '/api/v1/markdown', payload: { Text: 'x' } });
        expect(markdown.statusCode).to.equal(401);
    });

    it('refuses admin operations to a user who is not a site administrator', async () => {
        const response = await adminUsers(alice.headers);
        expect(response.statusCode).to.equal(403);
        expect(response.result).to.equal({ message: 'user should be the site admin', url: SWAGGER_URL });
    });

    it('refuses a token without the scope an operation needs, read for GET and write otherwise', async () => {
        const { token: readUser } = await tokens(context.server).create(admin.user, 'read-user', ['read:user']);
        const noScope = await adminUsers({ authorization: `token ${readUser}` });
        expect(noScope.statusCode).to.equal(403);
        expect((noScope.result as { message: string }).message).to.contain('required=[read:admin]');

        const { token: readAdmin } = await tokens(context.server).create(admin.user, 'read-admin', ['read:admin']);
        expect((await adminUsers({ authorization: `token ${readAdmin}` })).statusCode).to.equal(200);
        const write = await context.server.inject({
            method: 'POST',
            url: '/api/v1/admin/users',
            headers: { authorization: `token ${readAdmin}` },
            payload: { username: 'scoped', email: 'scoped@example.com', password: 'long-enough-1' },
        });
        expect(write.statusCode).to.equal(403);
        expect((write.result as { message: string }).message).to.contain('required=[write:admin]');
    });

    it('lets an administrator act as another user with Sudo, and refuses Sudo to others', async () => {
        const asAlice = await adminUsers({ ...admin.headers, sudo: 'alice' });
        expect(asAlice.statusCode).to.equal(403);
        expect((asAlice.result as { message: string }).message).to.equal('user should be the site admin');

        const byQuery = await context.server.inject({ url: '/api/v1/orgs?sudo=alice', headers: admin.headers });
        expect(byQuery.statusCode).to.equal(200);

        const refused = await context.server.inject({ url: '/api/v1/orgs', headers: { ...alice.headers, sudo: 'root' } });
        expect(refused.statusCode).to.equal(403);
        expect(refused.result).to.equal({ message: 'Only administrators allowed to sudo.' });

        const unknown = await adminUsers({ ...admin.headers, sudo: 'ghost-user' });
        expect(unknown.statusCode).to.equal(404);
    });

    it('refuses inactive and login-prohibited accounts, and those that must change their password', async () => {
        const bob = await createTestUser(context.server, { name: 'bob' });
        const service = users(context.server);
        const cases: Array<[Record<string, boolean>, string]> = [
            [{ prohibit_login: true }, 'This account is prohibited from signing in, please contact your site administrator.'],
            [{ active: false }, 'This account is not activated.'],
            [{ must_change_password: true }, 'You must change your password.'],
        ];
        for (const [change, message] of cases) {
            await service.edit(bob.user, { prohibit_login: false, active: true, must_change_password: false, ...change });
            const response = await context.server.inject({ url: '/api/v1/orgs', headers: bob.headers });
            expect(response.statusCode).to.equal(403);
            expect((response.result as { message: string }).message).to.startWith(message);
        }
    });

    it('never stores a token in clear', async () => {
        const rows = await context.database.knex('access_tokens').select('*');
        for (const row of rows) {
            expect(JSON.stringify(row)).to.not.contain(admin.token);
            expect(JSON.stringify(row)).to.not.contain(alice.token);
        }
    });
});
