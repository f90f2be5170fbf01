import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { users } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SWAGGER_URL = 'http://127.0.0.1:3000/api/swagger';

interface ApiEmail {
    email: string;
    verified: boolean;
    primary: boolean;
    user_id: number;
    username: string;
}

describe('admin: e-mail addresses', () => {
    let context: TestServer;
    let admin: TestUser;
    let userId: Record<string, number>;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'root', admin: true, email: 'zz-root@example.com' });
        userId = { root: admin.user.id };
        const people = [
            { username: 'Alice', email: 'Alice.Liddell@Wonder.example', full_name: 'Alice Liddell' },
            { username: 'bob', email: 'bob@builders.example', full_name: 'Robert Percent%Sign' },
            { username: 'carol', email: 'carol@example.com', full_name: '' },
        ];
        for (const person of people) {
            const user = await users(context.server).create({ ...person, password: 'correct-horse-battery', must_change_password: false });
            userId[person.username] = user.id;
        }

        // A second, unconfirmed address of bob's.
        await context.server.app.knex('email_addresses').insert({
            uid: userId.bob,
            email: 'b.second@elsewhere.example',
            lower_email: 'b.second@elsewhere.example',
            is_activated: false,
            is_primary: false,
        });
    });

    after(async () => {
        await context.cleanup();
    });

    const get = (url: string, headers: Record<string, string> = admin.headers) => context.server.inject({ url: `/api/v1${url}`, headers });

    const addresses = (result: unknown) => (result as ApiEmail[]).map((entry) => entry.email);

    describe('GET /admin/emails', () => {
        it('lists every address, ordered by address, with Email fields', async () => {
            const response = await get('/admin/emails');
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('adminGetAllEmails', 200, response.result)).to.equal([]);
            expect(addresses(response.result)).to.equal([
                'Alice.Liddell@Wonder.example',
                'b.second@elsewhere.example',
                'bob@builders.example',
                'carol@example.com',
                'zz-root@example.com',
            ]);
            expect(response.headers['x-total-count']).to.equal('5');
            const second = (response.result as ApiEmail[])[1];
            expect(second).to.equal({
                email: 'b.second@elsewhere.example',
                verified: false,
                primary: false,
                user_id: userId.bob,
                username: 'bob',
            });
            const alice = (response.result as ApiEmail[])[0];
            expect(alice).to.equal({
                email: 'Alice.Liddell@Wonder.example',
                verified: true,
                primary: true,
                user_id: userId.Alice,
                username: 'Alice',
            });
        });

        it('pages with limit and page, with Link and X-Total-Count', async () => {
            const response = await get('/admin/emails?limit=2&page=2');
            expect(response.statusCode).to.equal(200);
            expect(addresses(response.result)).to.equal(['bob@builders.example', 'carol@example.com']);
            expect(response.headers['x-total-count']).to.equal('5');
            expect(response.headers.link).to.equal(
                [
                    '<http://127.0.0.1:3000/api/v1/admin/emails?limit=2&page=3>; rel="next"',
                    '<http://127.0.0.1:3000/api/v1/admin/emails?limit=2&page=3>; rel="last"',
                    '<http://127.0.0.1:3000/api/v1/admin/emails?limit=2&page=1>; rel="first"',
                    '<http://127.0.0.1:3000/api/v1/admin/emails?limit=2&page=1>; rel="prev"',
                ].join(','),
            );
            const past = await get('/admin/emails?limit=2&page=9');
            expect(past.result).to.equal([]);
            expect(past.headers['x-total-count']).to.equal('5');
        });

        it('ignores q, as Gitea does on this list', async () => {
            const response = await get('/admin/emails?q=alice');
            expect(response.headers['x-total-count']).to.equal('5');
        });

        it('answers 403 to a caller who is not a site administrator, 401 without credentials', async () => {
            const someone = await createTestUser(context.server, { name: 'someone', email: 'someone@example.com' });
            const refused = await get('/admin/emails', someone.headers);
            expect(refused.statusCode).to.equal(403);
            expect(refused.result).to.equal({ message: 'user should be the site admin', url: SWAGGER_URL });
            const anonymous = await get('/admin/emails', {});
            expect(anonymous.statusCode).to.equal(401);
            await users(context.server).delete(someone.user, admin.user, false);
        });
    });

    describe('GET /admin/emails/search', () => {
        const search = async (q: string) => {
            const response = await get(`/admin/emails/search?q=${encodeURIComponent(q)}`);
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('adminSearchEmails', 200, response.result)).to.equal([]);
            return response;
        };

        it('matches the address without regard to case', async () => {
            expect(addresses((await search('WONDER')).result)).to.equal(['Alice.Liddell@Wonder.example']);
            expect(addresses((await search('example.com')).result)).to.equal(['carol@example.com', 'zz-root@example.com']);
        });

        it("matches the user's name and full name, returning all of that user's addresses", async () => {
            expect(addresses((await search('BOB')).result)).to.equal(['b.second@elsewhere.example', 'bob@builders.example']);
            expect(addresses((await search('robert')).result)).to.equal(['b.second@elsewhere.example', 'bob@builders.example']);
            expect(addresses((await search('liddell')).result)).to.equal(['Alice.Liddell@Wonder.example']);
        });

        it('takes % and _ literally, and trims q', async () => {
            expect(addresses((await search('%')).result)).to.equal(['b.second@elsewhere.example', 'bob@builders.example']);
            expect((await search('_')).result).to.equal([]);
            expect(addresses((await search('  carol  ')).result)).to.equal(['carol@example.com']);
        });

        it('lists everything for an empty q, and pages with Link and X-Total-Count', async () => {
            expect((await search('')).headers['x-total-count']).to.equal('5');
            const response = await get('/admin/emails/search?q=example&limit=1');
            expect(response.headers['x-total-count']).to.equal('5');
            expect(addresses(response.result)).to.equal(['Alice.Liddell@Wonder.example']);
            expect(response.headers.link).to.contain(
                '<http://127.0.0.1:3000/api/v1/admin/emails/search?limit=1&page=2&q=example>; rel="next"',
            );
        });

        it('answers 403 to a caller who is not a site administrator', async () => {
            const someone = await createTestUser(context.server, { name: 'nosy', email: 'nosy@example.com' });
            const refused = await get('/admin/emails/search?q=a', someone.headers);
            expect(refused.statusCode).to.equal(403);
            await users(context.server).delete(someone.user, admin.user, false);
        });
    });

    it('works through the gitea-js client', async () => {
        await context.server.start();
        try {
            const api = giteaClient(context.server, admin);
            const all = await api.admin.adminGetAllEmails({ page: 1, limit: 50 });
            expect(all.status).to.equal(200);
            expect(swaggerErrors('adminGetAllEmails', 200, all.data)).to.equal([]);
            expect(all.data).to.have.length(5);
            const found = await api.admin.adminSearchEmails({ q: 'carol' });
            expect(swaggerErrors('adminSearchEmails', 200, found.data)).to.equal([]);
            expect(found.data.map((entry) => entry.username)).to.equal(['carol']);
            expect(found.headers.get('x-total-count')).to.equal('1');
        } finally {
            await context.server.stop();
        }
    });
});
