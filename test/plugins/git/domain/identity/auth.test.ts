import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { passwordHashing } from '../../../../../lib/passwords.ts';
import { tokens } from '../../../../../plugins/git/domain/identity/token-service.ts';
import { users } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';

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

    it('lets an anonymous request through unauthenticated without building and catching an authentication error', async () => {
        const authEvents: string[][] = [];
        const seen: Array<{ isAuthenticated: boolean; credentials: unknown; error: unknown }> = [];
        const onInternal = (_request: unknown, _event: unknown, tags: Record<string, true>) => {
            if (tags.auth) {
                authEvents.push(Object.keys(tags));
            }
        };
        context.server.events.on({ name: 'request', channels: 'internal' }, onInternal);
        context.server.ext('onPostAuth', (request, h) => {
            if (request.path === '/api/v1/licenses/MIT') {
                const { isAuthenticated, credentials, error } = request.auth;
                seen.push({ isAuthenticated, credentials, error });
            }

            return h.continue;
        });
        try {
            expect((await context.server.inject('/api/v1/licenses/MIT')).statusCode).to.equal(200);
            expect((await context.server.inject({ url: '/api/v1/licenses/MIT', headers: alice.headers })).statusCode).to.equal(200);
        } finally {
            context.server.events.removeListener('request', onInternal);
        }

        expect(authEvents).to.equal([]);
        expect(seen).to.have.length(2);
        expect(seen[0]).to.equal({ isAuthenticated: false, credentials: null, error: null });
        expect(seen[1]?.isAuthenticated).to.be.true();
        expect((seen[1]?.credentials as { user: { name: string } }).user.name).to.equal('alice');
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

describe('git API: password sign-in throttling', () => {
    let context: TestServer;
    let admin: TestUser;

    before(async () => {
        context = await createTestServer({ LOGIN_MAX_FAILURES: '5', LOGIN_MAX_FAILURES_PER_ACCOUNT: '40' });
        admin = await createTestUser(context.server, { name: 'root', admin: true });
        await createTestUser(context.server, { name: 'carol', password: 'carol-password-1' });
        await createTestUser(context.server, { name: 'dave', password: 'dave-password-1' });
    });

    after(async () => {
        await context.cleanup();
    });

    const orgs = (authorization: string, remoteAddress: string) =>
        context.server.inject({ url: '/api/v1/orgs', headers: { authorization }, remoteAddress });

    it('refuses the right password with 429 after 30 wrong ones from the same address, while another address gets in', async () => {
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 30; attempt += 1) {
            statuses.push((await orgs(basic('carol', `wrong-password-${attempt}`), '192.0.2.10')).statusCode);
        }

        expect(statuses.slice(0, 5)).to.equal([401, 401, 401, 401, 401]);
        expect(new Set(statuses.slice(5))).to.equal(new Set([429]));
        passwordHashing.resetStatistics();
        const locked = await orgs(basic('carol', 'carol-password-1'), '192.0.2.10');
        expect(locked.statusCode).to.equal(429);
        expect(passwordHashing.runs, 'argon2 runs for a locked attempt').to.equal(0);
        expect(locked.result).to.equal({ message: 'too many failed attempts; try again later', url: SWAGGER_URL });
        expect(Number(locked.headers['retry-after'])).to.be.within(1, 900);

        expect((await orgs(basic('carol', 'carol-password-1'), '192.0.2.11')).statusCode).to.equal(200);
        expect((await orgs(`token ${admin.token}`, '192.0.2.10')).statusCode).to.equal(200);
    });

    it('throttles the package registry with the same counters', async () => {
        const url = '/api/packages/dave/generic/tool/1.0.0/tool.bin';
        for (let attempt = 0; attempt < 5; attempt += 1) {
            const wrong = await context.server.inject({
                url,
                headers: { authorization: basic('dave', 'wrong-password') },
                remoteAddress: '192.0.2.20',
            });
            expect(wrong.statusCode).to.equal(401);
        }

        const locked = await context.server.inject({
            url,
            headers: { authorization: basic('dave', 'dave-password-1') },
            remoteAddress: '192.0.2.20',
        });
        expect(locked.statusCode).to.equal(429);
        expect(locked.result).to.equal({ message: 'too many failed attempts; try again later', url: SWAGGER_URL });
        expect((await orgs(basic('dave', 'dave-password-1'), '192.0.2.20')).statusCode).to.equal(429);
    });

    it('forgets the failures of a pair once its password is right', async () => {
        await createTestUser(context.server, { name: 'erin', password: 'erin-password-1' });
        for (let round = 0; round < 3; round += 1) {
            for (let attempt = 0; attempt < 4; attempt += 1) {
                expect((await orgs(basic('erin', 'wrong-password'), '192.0.2.30')).statusCode).to.equal(401);
            }

            expect((await orgs(basic('erin', 'erin-password-1'), '192.0.2.30')).statusCode).to.equal(200);
        }
    });
});

describe('git API: sign-in throttling per account and per address', () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer({
            LOGIN_MAX_FAILURES: '5',
            LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
            LOGIN_MAX_FAILURES_PER_ADDRESS: '4',
            LOGIN_BACKOFF_SECONDS: '60',
            TRUSTED_PROXIES: '10.9.0.0/16, ::1',
        });
        await createTestUser(context.server, { name: 'frank', password: 'frank-password-1' });
        await createTestUser(context.server, { name: 'grace', password: 'grace-password-1' });
    });

    after(async () => {
        await context.cleanup();
    });

    const orgs = (authorization: string, remoteAddress: string, headers: Record<string, string> = {}) =>
        context.server.inject({ url: '/api/v1/orgs', headers: { authorization, ...headers }, remoteAddress });

    it('backs an account off after failures from many addresses, except from an address it signed in from', async () => {
        expect((await orgs(basic('frank', 'frank-password-1'), '198.51.100.1')).statusCode).to.equal(200);
        for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
            expect((await orgs(basic('frank', 'wrong-password'), address)).statusCode).to.equal(401);
        }

        const delayed = await orgs(basic('frank', 'wrong-password'), '203.0.113.4');
        expect(delayed.statusCode).to.equal(429);
        expect(Number(delayed.headers['retry-after'])).to.be.within(1, 60);
        expect((await orgs(basic('frank', 'frank-password-1'), '203.0.113.5')).statusCode).to.equal(429);
        expect((await orgs(basic('frank', 'frank-password-1'), '198.51.100.1')).statusCode).to.equal(200);
    });

    it('limits failures from one address across accounts', async () => {
        const statuses: number[] = [];
        for (const name of ['nobody1', 'nobody2', 'nobody3', 'nobody4', 'grace']) {
            statuses.push((await orgs(basic(name, 'wrong-password'), '203.0.113.50')).statusCode);
        }

        expect(statuses).to.equal([401, 401, 401, 401, 429]);
    });

    it('counts failures under the address X-Forwarded-For names only when a trusted proxy sends it', async () => {
        for (let attempt = 0; attempt < 4; attempt += 1) {
            const forwarded = { 'x-forwarded-for': `203.0.113.${60 + attempt}` };
            expect((await orgs(basic(`someone${attempt}`, 'wrong-password'), '198.51.100.60', forwarded)).statusCode).to.equal(401);
        }

        const untrusted = await orgs(basic('someone9', 'wrong-password'), '198.51.100.60', { 'x-forwarded-for': '203.0.113.99' });
        expect(untrusted.statusCode).to.equal(429);

        for (let attempt = 0; attempt < 4; attempt += 1) {
            const forwarded = { 'x-forwarded-for': '198.51.100.70' };
            expect((await orgs(basic(`proxied${attempt}`, 'wrong-password'), '10.9.1.1', forwarded)).statusCode).to.equal(401);
        }

        const throughTwoProxies = { 'x-forwarded-for': '198.51.100.71, 10.9.2.2' };
        expect((await orgs(basic('proxied5', 'wrong-password'), '10.9.1.1', throughTwoProxies)).statusCode).to.equal(401);
        const spoofedLeft = { 'x-forwarded-for': '198.51.100.72, 198.51.100.70' };
        expect((await orgs(basic('proxied6', 'wrong-password'), '::1', spoofedLeft)).statusCode).to.equal(429);
        const another = { 'x-forwarded-for': '198.51.100.73' };
        expect((await orgs(basic('proxied7', 'wrong-password'), '10.9.1.1', another)).statusCode).to.equal(401);
    });
});

describe('git API: a flood of wrong passwords', () => {
    let context: TestServer;

    before(async () => {
        const high = '1000';
        context = await createTestServer({
            LOGIN_MAX_FAILURES: high,
            LOGIN_MAX_FAILURES_PER_ACCOUNT: high,
            LOGIN_MAX_FAILURES_PER_ADDRESS: high,
        });
    });

    after(async () => {
        await context.cleanup();
    });

    const orgs = (authorization: string, remoteAddress: string) =>
        context.server.inject({ url: '/api/v1/orgs', headers: { authorization }, remoteAddress });

    it("hashes at most the bound at once, and serves a token and the owner's password from a known address meanwhile", async () => {
        const owner = await createTestUser(context.server, { name: 'henry', password: 'henry-password-1' });
        expect((await orgs(basic('henry', 'henry-password-1'), '198.51.100.1')).statusCode).to.equal(200);
        passwordHashing.resetStatistics();
        const flood = Array.from({ length: 60 }, (_, index) => orgs(basic('henry', `wrong-${index}`), `203.0.113.${index % 8}`));
        await waitUntil('the flood waits for the hashing pool', () => passwordHashing.waiting >= 40);

        expect((await orgs(`token ${owner.token}`, '198.51.100.2')).statusCode).to.equal(200);
        expect(passwordHashing.waiting, 'flood still waiting after the token request').to.be.above(0);
        expect((await orgs(basic('henry', 'henry-password-1'), '198.51.100.1')).statusCode).to.equal(200);
        expect(passwordHashing.waiting, "flood still waiting after the owner's password").to.be.above(0);

        const statuses = new Set((await Promise.all(flood)).map((response) => response.statusCode));
        expect(statuses).to.equal(new Set([401]));
        expect(passwordHashing.peak).to.be.within(1, passwordHashing.limit);
        expect(passwordHashing.runs).to.equal(61);
    });
});
