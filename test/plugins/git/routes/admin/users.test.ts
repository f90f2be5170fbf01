import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { organizations } from '../../../../../plugins/git/domain/orgs/org-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ApiUser {
    id: number;
    login: string;
    email: string;
    is_admin: boolean;
    visibility: string;
    created: string;
}

const byLowerName = (a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0);

describe('admin: users', () => {
    let context: TestServer;
    let admin: TestUser;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'root', admin: true });
    });

    after(async () => {
        await context.cleanup();
    });

    const request = async (method: string, url: string, payload?: object, headers: Record<string, string> = admin.headers) =>
        await context.server.inject({ method, url: `/api/v1${url}`, payload, headers });

    const createUser = async (payload: object) => await request('POST', '/admin/users', payload);

    describe('create', () => {
        it('creates a user (201), who must change the password unless told otherwise', async () => {
            const response = await createUser({
                username: 'carol',
                email: 'carol@example.com',
                password: 'carol-password',
                full_name: 'Carol C',
            });
            expect(response.statusCode).to.equal(201);
            expect(swaggerErrors('adminCreateUser', 201, response.result)).to.equal([]);
            const user = response.result as ApiUser & { full_name: string; active: boolean };
            expect(user).to.include({
                login: 'carol',
                email: 'carol@example.com',
                full_name: 'Carol C',
                is_admin: false,
                active: true,
                visibility: 'public',
            });
            const row = await context.database.knex('users').where({ lower_name: 'carol' }).first();
            expect(Boolean(row.must_change_password)).to.be.true();
            expect(String(row.passwd_hash)).to.startWith('$argon2id$');
        });

        it('keeps must_change_password false when asked, and takes visibility', async () => {
            const response = await createUser({
                username: 'dave',
                email: 'dave@example.com',
                password: 'dave-password',
                must_change_password: false,
                visibility: 'limited',
            });
            expect((response.result as ApiUser).visibility).to.equal('limited');
            const row = await context.database.knex('users').where({ lower_name: 'dave' }).first();
            expect(Boolean(row.must_change_password)).to.be.false();
        });

        it('answers 422 for duplicate names (any case) and e-mails, reserved names and patterns, bad names', async () => {
            await createTestUser(context.server, { name: 'casey' });
            const cases: Array<[object, string]> = [
                [{ username: 'CASEY', email: 'other@example.com', password: 'password-1' }, 'user already exists [name: CASEY]'],
                [
                    { username: 'erin', email: 'Casey@Example.com', password: 'password-1' },
                    'e-mail already in use [email: Casey@Example.com]',
                ],
                [{ username: 'api', email: 'api@example.com', password: 'password-1' }, 'name is reserved [name: api]'],
                [
                    { username: 'bob.keys', email: 'bk@example.com', password: 'password-1' },
                    'name pattern is not allowed [pattern: *.keys]',
                ],
                [{ username: '-bad', email: 'bad@example.com', password: 'password-1' }, 'user name is invalid [name: -bad]'],
                [{ username: 'bad..name', email: 'bad2@example.com', password: 'password-1' }, 'user name is invalid [name: bad..name]'],
                [{ username: 'frank', email: 'not-an-email', password: 'password-1' }, 'e-mail invalid [email: not-an-email]'],
            ];
            for (const [payload, message] of cases) {
                const response = await createUser(payload);
                expect(response.statusCode, message).to.equal(422);
                expect((response.result as { message: string }).message).to.equal(message);
            }
        });

        it('answers 422 naming the missing field, and 400 for a short password', async () => {
            const missing = await createUser({ email: 'x@example.com' });
            expect(missing.statusCode).to.equal(422);
            expect((missing.result as { message: string }).message).to.equal('[Username]: Required');
            const badVisibility = await createUser({
                username: 'gina',
                email: 'gina@example.com',
                password: 'password-1',
                visibility: 'secret',
            });
            expect(badVisibility.statusCode).to.equal(422);
            const short = await createUser({ username: 'gina', email: 'gina@example.com', password: 'short' });
            expect(short.statusCode).to.equal(400);
            expect((short.result as { message: string }).message).to.equal('PasswordIsRequired');
            expect(await context.database.knex('users').where({ lower_name: 'gina' }).first()).to.be.undefined();
        });

        it('is refused to non-administrators', async () => {
            const alice = await createTestUser(context.server, { name: 'alice' });
            const response = await request(
                'POST',
                '/admin/users',
                { username: 'x1', email: 'x1@example.com', password: 'password-1' },
                alice.headers,
            );
            expect(response.statusCode).to.equal(403);
        });
    });

    describe('search', () => {
        // The users these tests look for, which no other test changes; the other tests' users come and go.
        const SEARCHED = ['wendy', 'xavier', 'yvonne', 'zed'];

        before(async () => {
            for (const [name, fullName, email, visibility] of [
                ['zed', 'Zed Zebra', 'zed@search.test', 'public'],
                ['yvonne', 'Yvonne Search-Target', 'yvonne@search.test', 'public'],
                ['xavier', 'Xavier X', 'xavier@search.test', 'public'],
                ['wendy', 'Wendy W', 'wendy@limited.test', 'limited'],
            ]) {
                const response = await createUser({
                    username: name,
                    email,
                    password: 'password-123',
                    full_name: fullName,
                    must_change_password: false,
                    visibility,
                });
                expect(response.statusCode).to.equal(201);
            }
        });

        it("lists users sorted by name with Gitea's paging headers", async () => {
            const all = await request('GET', '/admin/users?limit=50');
            const names = (all.result as ApiUser[]).map((user) => user.login);
            expect(names).to.include(['root', ...SEARCHED]);
            // By the lower-case name, as Gitea's lower_name: other tests rename a user to 'Rory2'.
            expect(names).to.equal([...names].sort(byLowerName));
            const response = await request('GET', '/admin/users?limit=2&page=1');
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('adminSearchUsers', 200, response.result)).to.equal([]);
            expect(Number(response.headers['x-total-count'])).to.equal(names.length);
            expect((response.result as ApiUser[]).map((user) => user.login)).to.equal(names.slice(0, 2));
            expect(response.headers.link).to.contain('rel="next"');
        });

        it('searches q over user name, full name and e-mail, case-insensitively', async () => {
            const byFullName = await request('GET', '/admin/users?q=search-TARGET');
            expect((byFullName.result as ApiUser[]).map((user) => user.login)).to.equal(['yvonne']);
            const byEmail = await request('GET', '/admin/users?q=search.test');
            expect((byEmail.result as ApiUser[]).map((user) => user.login)).to.equal(['xavier', 'yvonne', 'zed']);
            const byName = await request('GET', '/admin/users?q=ZE');
            expect((byName.result as ApiUser[]).map((user) => user.login)).to.include('zed');
            const literal = await request('GET', '/admin/users?q=%25');
            expect(literal.result).to.equal([]);
        });

        it('filters by is_admin, is_active, visibility, login_name and source_id', async () => {
            // Other tests make administrators and limited users of their own: these are told apart by the flags shown.
            const admins = (await request('GET', '/admin/users?is_admin=true&limit=50')).result as ApiUser[];
            expect(admins.map((user) => user.login)).to.include('root');
            expect(admins.filter((user) => !user.is_admin)).to.equal([]);
            expect(admins.filter((user) => SEARCHED.includes(user.login))).to.equal([]);
            const limited = (await request('GET', '/admin/users?visibility=limited&limit=50')).result as ApiUser[];
            expect(limited.filter((user) => user.visibility !== 'limited')).to.equal([]);
            expect(limited.map((user) => user.login).filter((login) => SEARCHED.includes(login))).to.equal(['wendy']);
            const local = await request('GET', '/admin/users?source_id=0&is_active=true&is_2fa_enabled=false&q=zed');
            expect((local.result as ApiUser[]).map((user) => user.login)).to.equal(['zed']);
            const twoFactor = await request('GET', '/admin/users?is_2fa_enabled=true');
            expect(twoFactor.result).to.equal([]);
        });

        it('sorts by id, created or updated, ascending or descending', async () => {
            const descending = await request('GET', '/admin/users?sort=id&order=desc&limit=50');
            const ids = (descending.result as ApiUser[]).map((user) => user.id);
            expect(ids).to.equal([...ids].sort((a, b) => b - a));
            const ignoredOrder = await request('GET', '/admin/users?order=desc&limit=50');
            const names = (ignoredOrder.result as ApiUser[]).map((user) => user.login);
            expect(names).to.equal([...names].sort(byLowerName));
        });

        it("answers 422 for an unknown sort, order or visibility, in Gitea's words", async () => {
            const cases: Array<[string, string]> = [
                ['sort=age', 'Invalid sort mode: "age"'],
                ['sort=id&order=sideways', 'Invalid sort order: "sideways"'],
                ['sort=age&order=sideways', 'Invalid sort order: "sideways"'],
                ['sort=%22n%C3%A4me%0A%22', 'Invalid sort mode: "\\"näme\\n\\""'],
            ];
            for (const [query, message] of cases) {
                const response = await request('GET', `/admin/users?${query}`);
                expect(response.statusCode, query).to.equal(422);
                expect((response.result as { message: string }).message, query).to.equal(message);
            }

            expect((await request('GET', '/admin/users?visibility=secret')).statusCode).to.equal(422);
        });

        it('ignores the order when no sort is given, as Gitea does', async () => {
            expect((await request('GET', '/admin/users?order=sideways')).statusCode).to.equal(200);
        });
    });

    describe('edit', () => {
        it('changes the fields given, and needs login_name as Gitea does', async () => {
            await createTestUser(context.server, { name: 'edna' });
            const response = await request('PATCH', '/admin/users/edna', {
                login_name: 'edna',
                source_id: 0,
                full_name: 'Edna Changed',
                location: 'Lisbon',
                admin: true,
                visibility: 'private',
            });
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('adminEditUser', 200, response.result)).to.equal([]);
            expect(response.result).to.include({ full_name: 'Edna Changed', location: 'Lisbon', is_admin: true, visibility: 'private' });
            const missing = await request('PATCH', '/admin/users/edna', { full_name: 'x' });
            expect(missing.statusCode).to.equal(422);
            expect((missing.result as { message: string }).message).to.equal('[LoginName]: Required');
        });

        it('answers 400 for an invalid or taken e-mail and a short password, 404 for an unknown user', async () => {
            await createTestUser(context.server, { name: 'ezra' });
            await createTestUser(context.server, { name: 'elias', email: 'elias@edit.test' });
            const invalid = await request('PATCH', '/admin/users/ezra', { login_name: 'x', source_id: 0, email: '' });
            expect(invalid.statusCode).to.equal(400);
            const taken = await request('PATCH', '/admin/users/ezra', { login_name: 'x', source_id: 0, email: 'elias@edit.test' });
            expect(taken.statusCode).to.equal(400);
            const short = await request('PATCH', '/admin/users/ezra', { login_name: 'x', source_id: 0, password: 'short' });
            expect(short.statusCode).to.equal(400);
            const unknown = await request('PATCH', '/admin/users/nobody-here', { login_name: 'x', source_id: 0 });
            expect(unknown.statusCode).to.equal(404);
            expect((unknown.result as { message: string }).message).to.equal('user redirect does not exist [name: nobody-here]');
        });

        it("looks the user up before reading the body, as Gitea's middleware runs before binding", async () => {
            const unknown = await request('PATCH', '/admin/users/nobody-here', { full_name: 'x' });
            expect(unknown.statusCode).to.equal(404);
            expect((unknown.result as { message: string }).message).to.equal('user redirect does not exist [name: nobody-here]');
        });

        it("ends the user's tokens when the password changes", async () => {
            const henry = await createTestUser(context.server, { name: 'henry' });
            expect((await context.server.inject({ url: '/api/v1/orgs', headers: henry.headers })).statusCode).to.equal(200);
            await request('PATCH', '/admin/users/henry', { login_name: 'henry', source_id: 0, password: 'a-new-password' });
            expect((await context.server.inject({ url: '/api/v1/orgs', headers: henry.headers })).statusCode).to.equal(401);
        });

        it('will not take the admin flag from the last administrator', async () => {
            // Root is made the last administrator: any other (another test may have made one) loses the flag first.
            const admins = (await request('GET', '/admin/users?is_admin=true&limit=50')).result as ApiUser[];
            for (const other of admins.filter((user) => user.login !== 'root')) {
                const demoted = await request('PATCH', `/admin/users/${other.login}`, {
                    login_name: other.login,
                    source_id: 0,
                    admin: false,
                });
                expect(demoted.statusCode).to.equal(200);
            }

            const response = await request('PATCH', '/admin/users/root', { login_name: 'root', source_id: 0, admin: false });
            expect(response.statusCode).to.equal(400);
            expect((response.result as { message: string }).message).to.startWith('can not delete the last admin user');
        });
    });

    describe('rename', () => {
        it('renames (204), and the old name answers 307 to the new one with the query kept', async () => {
            await createTestUser(context.server, { name: 'rory' });
            const response = await request('POST', '/admin/users/rory/rename', { new_username: 'rory2' });
            expect(response.statusCode).to.equal(204);
            const moved = await request('PATCH', '/admin/users/rory?x=1', { login_name: 'rory2', source_id: 0 });
            expect(moved.statusCode).to.equal(307);
            expect(moved.headers.location).to.equal('/api/v1/admin/users/rory2?x=1');
            const same = await request('POST', '/admin/users/rory2/rename', { new_username: 'rory2' });
            expect(same.statusCode).to.equal(204);
            const caseOnly = await request('POST', '/admin/users/rory2/rename', { new_username: 'Rory2' });
            expect(caseOnly.statusCode).to.equal(204);
        });

        it('answers 422 for a taken, reserved, invalid or empty name, and for an organisation', async () => {
            await createTestUser(context.server, { name: 'Rhea' });
            await createTestUser(context.server, { name: 'ruth' });
            for (const newName of ['ruth', 'login', 'bad name', '']) {
                const response = await request('POST', '/admin/users/Rhea/rename', { new_username: newName });
                expect(response.statusCode, newName).to.equal(422);
            }

            await organizations(context.server).create(admin.user, { username: 'renamed-org' }, admin.user);
            const org = await request('POST', '/admin/users/renamed-org/rename', { new_username: 'other-org' });
            expect(org.statusCode).to.equal(422);
            expect((org.result as { message: string }).message).to.equal('target is an organization but not user');
        });
    });

    describe('delete', () => {
        it('deletes a user (204), refuses yourself and organisations (422), and 404s the unknown', async () => {
            await createTestUser(context.server, { name: 'dexter' });
            await organizations(context.server).create(admin.user, { username: 'kept-org' }, admin.user);
            expect((await request('DELETE', '/admin/users/dexter')).statusCode).to.equal(204);
            expect((await request('DELETE', '/admin/users/dexter')).statusCode).to.equal(404);
            const self = await request('DELETE', '/admin/users/root');
            expect(self.statusCode).to.equal(422);
            expect((self.result as { message: string }).message).to.equal('you cannot delete yourself');
            const org = await request('DELETE', '/admin/users/kept-org');
            expect(org.statusCode).to.equal(422);
        });

        it('refuses a member of an organisation without purge, and with purge removes the user and the orgs they alone own', async () => {
            const ivan = await createTestUser(context.server, { name: 'ivan' });
            await organizations(context.server).create(ivan.user, { username: 'ivans-org' }, admin.user);
            const refused = await request('DELETE', '/admin/users/ivan');
            expect(refused.statusCode).to.equal(422);
            expect((refused.result as { message: string }).message).to.startWith('user still has membership of organizations');
            const purged = await request('DELETE', '/admin/users/ivan?purge=true');
            expect(purged.statusCode).to.equal(204);
            expect(await context.database.knex('users').whereIn('lower_name', ['ivan', 'ivans-org'])).to.equal([]);
            expect(await context.database.knex('access_tokens').where({ uid: ivan.user.id })).to.equal([]);
        });
    });

    describe('through the gitea-js client', () => {
        it('searches, creates, edits, renames and deletes', async () => {
            await context.server.start();
            const api = giteaClient(context.server, admin);
            const created = await api.admin.adminCreateUser({
                username: 'jsuser',
                email: 'jsuser@example.com',
                password: 'js-password-1',
                must_change_password: false,
            });
            expect(created.status).to.equal(201);
            // gitea-js 1.23 predates the q filter in its types; the query goes through all the same.
            const found = await api.admin.adminSearchUsers({ q: 'jsuser' } as { login_name?: string });
            expect(found.data.map((user) => user.login)).to.equal(['jsuser']);
            const edited = await api.admin.adminEditUser('jsuser', { login_name: 'jsuser', source_id: 0, full_name: 'JS User' });
            expect(edited.data.full_name).to.equal('JS User');
            const renamed = await api.admin.adminRenameUser('jsuser', { new_username: 'jsuser2' });
            expect(renamed.status).to.equal(204);
            const deleted = await api.admin.adminDeleteUser('jsuser2');
            expect(deleted.status).to.equal(204);
        });

        it("leaves login_name empty when none is given: the document's default describes Gitea, it is not a value", async () => {
            await context.server.start();
            const api = giteaClient(context.server, admin);
            const created = await api.admin.adminCreateUser({ username: 'nologin', email: 'nologin@example.com', password: 'no-login-1' });
            expect(created.status).to.equal(201);
            expect(created.data.login_name).to.equal('');
            const row = await context.database.knex('users').where({ lower_name: 'nologin' }).first();
            expect(row.login_name).to.equal('');
        });
    });
});
