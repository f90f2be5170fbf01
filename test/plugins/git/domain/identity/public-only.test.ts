import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { organizations } from '../../../../../plugins/git/domain/orgs/org-service.ts';
import { repositories } from '../../../../../plugins/git/domain/repositories/repository-service.ts';
import { tokens } from '../../../../../plugins/git/domain/identity/token-service.ts';
import { type UserRow, users } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { seedRuns } from '../actions/fixtures.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SWAGGER_URL = 'http://127.0.0.1:3000/api/swagger';
const VISIBILITY = { public: 0, limited: 1, private: 2 } as const;

const refusal = (message: string) => ({ message, url: SWAGGER_URL });

describe('git API: public-only tokens', () => {
    let context: TestServer;
    let owner: TestUser;
    let admin: TestUser;
    /** A token of the owner, with every scope at write level and `public-only`. */
    let publicOnly: Record<string, string>;
    /** The same scopes without `public-only`. */
    let unlimited: Record<string, string>;
    let adminPublicOnly: Record<string, string>;

    const tokenHeaders = async (user: UserRow, name: string, scopes: string[]) => {
        const { token } = await tokens(context.server).create(user, name, scopes);
        return { authorization: `token ${token}` };
    };

    const orgNamed = async (name: string): Promise<UserRow> => {
        const org = await users(context.server).byName(name);
        if (!org) {
            throw new Error(`no organisation ${name}`);
        }

        return org;
    };

    const request = async (method: string, url: string, headers: Record<string, string>, payload?: string | object) =>
        await context.server.inject({ method, url, headers, payload });

    const EVERY_SCOPE = ['write:notification', 'write:organization', 'write:issue', 'write:repository', 'write:package', 'write:admin'];

    before(async () => {
        context = await createTestServer();
        owner = await createTestUser(context.server, { name: 'pat' });
        admin = await createTestUser(context.server, { name: 'poroot', admin: true });
        publicOnly = await tokenHeaders(owner.user, 'public-only', [...EVERY_SCOPE, 'public-only']);
        unlimited = await tokenHeaders(owner.user, 'unlimited', EVERY_SCOPE);
        adminPublicOnly = await tokenHeaders(admin.user, 'admin-public-only', [...EVERY_SCOPE, 'public-only']);

        const orgs = organizations(context.server);
        for (const visibility of ['public', 'limited', 'private']) {
            await orgs.create(owner.user, { username: `${visibility}-org`, visibility }, owner.user);
        }

        const hiddenOwner = await createTestUser(context.server, { name: 'hideme' });
        await orgs.create(hiddenOwner.user, { username: 'unseen-org', visibility: 'private' }, hiddenOwner.user);

        const repos = repositories(context.server);
        await repos.create(owner.user, { name: 'open' }, owner.user);
        await repos.create(owner.user, { name: 'closed', private: true }, owner.user);
        await repos.create(await orgNamed('limited-org'), { name: 'open-in-limited' }, owner.user);
        for (const path of ['pat/open', 'pat/closed', 'limited-org/open-in-limited']) {
            const created = await request('POST', `/api/v1/repos/${path}/issues`, unlimited, { title: 'An issue' });
            expect(created.statusCode, path).to.equal(201);
        }
    });

    after(async () => {
        await context.cleanup();
    });

    describe('notifications', () => {
        const operations = [
            ['GET', '/api/v1/notifications'],
            ['PUT', '/api/v1/notifications'],
            ['GET', '/api/v1/notifications/new'],
            ['GET', '/api/v1/notifications/threads/1'],
            ['PATCH', '/api/v1/notifications/threads/1'],
        ] as const;

        it('refuses every notification operation to a public-only token (403)', async () => {
            for (const [method, url] of operations) {
                const response = await request(method, url, publicOnly);
                expect(response.statusCode, `${method} ${url}`).to.equal(403);
                expect(response.result, `${method} ${url}`).to.equal(refusal('this endpoint is not available for public-only tokens'));
            }
        });

        it('serves them to the same scopes without public-only, and checks the scope first', async () => {
            expect((await request('GET', '/api/v1/notifications', unlimited)).statusCode).to.equal(200);
            expect((await request('GET', '/api/v1/notifications/new', unlimited)).statusCode).to.equal(200);
            const withoutScope = await tokenHeaders(owner.user, 'no-notification', ['read:user', 'public-only']);
            const response = await request('GET', '/api/v1/notifications', withoutScope);
            expect(response.statusCode).to.equal(403);
            expect((response.result as { message: string }).message).to.contain('required=[read:notification]');
        });
    });

    describe('organisations', () => {
        it('serves a public organisation', async () => {
            expect((await request('GET', '/api/v1/orgs/public-org', publicOnly)).statusCode).to.equal(200);
            const edited = await request('PATCH', '/api/v1/orgs/public-org', publicOnly, { description: 'still public' });
            expect(edited.statusCode).to.equal(200);
        });

        it('refuses a limited or private organisation, reads and writes alike, even to its owner (403)', async () => {
            for (const name of ['limited-org', 'private-org']) {
                for (const [method, url, payload] of [
                    ['GET', `/api/v1/orgs/${name}`, undefined],
                    ['PATCH', `/api/v1/orgs/${name}`, { description: 'x' }],
                    ['DELETE', `/api/v1/orgs/${name}`, undefined],
                    ['GET', `/api/v1/orgs/${name}/actions/runs`, undefined],
                    ['GET', `/api/v1/orgs/${name}/actions/secrets`, undefined],
                    ['POST', `/api/v1/org/${name}/repos`, { name: 'never' }],
                ] as const) {
                    const response = await request(method, url, publicOnly, payload);
                    expect(response.statusCode, `${method} ${url}`).to.equal(403);
                    expect(response.result, `${method} ${url}`).to.equal(refusal('token scope is limited to public orgs'));
                }

                expect((await request('GET', `/api/v1/orgs/${name}`, unlimited)).statusCode, name).to.equal(200);
            }

            expect(await context.database.knex('repositories').where({ lower_name: 'never' })).to.have.length(0);
            expect(await context.database.knex('users').whereIn('lower_name', ['limited-org', 'private-org'])).to.have.length(2);
        });

        it('refuses a private organisation the caller cannot see with the same 403, as Gitea does, and 404s an unknown one', async () => {
            const hidden = await request('GET', '/api/v1/orgs/unseen-org', publicOnly);
            expect(hidden.statusCode).to.equal(403);
            expect(hidden.result).to.equal(refusal('token scope is limited to public orgs'));
            expect((await request('GET', '/api/v1/orgs/unseen-org', unlimited)).statusCode).to.equal(404);
            expect((await request('GET', '/api/v1/orgs/no-such-org', publicOnly)).statusCode).to.equal(404);
        });

        it("lists only the runs of a public organisation's public repositories, to its owner and to a site administrator", async () => {
            const org = await orgNamed('public-org');
            await seedRuns(context.server, org, owner.user, 'public-app');
            await seedRuns(context.server, org, owner.user, 'secret-app', true);
            const count = async (headers: Record<string, string>) => {
                const response = await request('GET', '/api/v1/orgs/public-org/actions/runs', headers);
                expect(response.statusCode).to.equal(200);
                return (response.result as { total_count: number }).total_count;
            };

            expect(await count(unlimited)).to.equal(6);
            expect(await count(admin.headers)).to.equal(6);
            expect(await count(publicOnly)).to.equal(3);
            expect(await count(adminPublicOnly)).to.equal(3);
        });
    });

    describe('repositories', () => {
        it("serves the issues of a public user's public repository", async () => {
            expect((await request('GET', '/api/v1/repos/pat/open/issues/1', publicOnly)).statusCode).to.equal(200);
            const commented = await request('POST', '/api/v1/repos/pat/open/issues/1/comments', publicOnly, { body: 'hello' });
            expect(commented.statusCode).to.equal(201);
        });

        it('hides a private repository, and a public one of an owner that is not public, as Gitea does (404)', async () => {
            for (const path of ['pat/closed', 'limited-org/open-in-limited']) {
                for (const [method, url, payload] of [
                    ['GET', `/api/v1/repos/${path}/issues/1`, undefined],
                    ['PATCH', `/api/v1/repos/${path}/issues/1`, { title: 'renamed' }],
                    ['POST', `/api/v1/repos/${path}/issues`, { title: 'new' }],
                    ['POST', `/api/v1/repos/${path}/issues/1/comments`, { body: 'x' }],
                ] as const) {
                    const response = await request(method, url, publicOnly, payload);
                    expect(response.statusCode, `${method} ${url}`).to.equal(404);
                }

                expect((await request('GET', `/api/v1/repos/${path}/issues/1`, unlimited)).statusCode, path).to.equal(200);
            }

            const titles = await context.database.knex('issues').pluck('title');
            expect(titles).to.not.include('renamed');
            expect(titles).to.not.include('new');
        });

        it('hides the repositories of a user who became private, and 404s an unknown one as before', async () => {
            const other = await createTestUser(context.server, { name: 'shy' });
            await repositories(context.server).create(other.user, { name: 'shy-repo' }, other.user);
            const own = await tokenHeaders(other.user, 'shy-public-only', ['write:issue', 'public-only']);
            expect((await request('POST', '/api/v1/repos/shy/shy-repo/issues', own, { title: 'mine' })).statusCode).to.equal(201);
            await context.database.knex('users').where({ id: other.user.id }).update({ visibility: VISIBILITY.private });
            expect((await request('GET', '/api/v1/repos/shy/shy-repo/issues/1', own)).statusCode).to.equal(404);
            expect((await request('GET', '/api/v1/repos/shy/no-such-repo/issues/1', own)).statusCode).to.equal(404);
        });
    });

    describe('packages', () => {
        const fileUrl = (ownerName: string, name: string) => `/api/packages/${ownerName}/generic/${name}/1.0/file.txt`;

        it("stores and serves a public owner's packages", async () => {
            expect((await request('PUT', fileUrl('pat', 'shared'), publicOnly, 'content')).statusCode).to.equal(201);
            expect((await request('GET', fileUrl('pat', 'shared'), publicOnly)).payload).to.equal('content');
        });

        it('refuses the packages of a limited or private owner, even its own (403)', async () => {
            for (const visibility of ['limited', 'private'] as const) {
                const user = await createTestUser(context.server, { name: `pkg-${visibility}` });
                const own = await tokenHeaders(user.user, `${visibility}-public-only`, ['write:package', 'public-only']);
                await context.database.knex('users').where({ id: user.user.id }).update({ visibility: VISIBILITY[visibility] });
                const url = fileUrl(user.user.name, 'mine');
                expect((await request('PUT', url, user.headers, 'content')).statusCode, visibility).to.equal(201);
                for (const [method, payload] of [
                    ['GET', undefined],
                    ['PUT', 'again'],
                    ['DELETE', undefined],
                ] as const) {
                    const response = await request(method, url, own, payload);
                    expect(response.statusCode, `${visibility} ${method}`).to.equal(403);
                    expect(response.result, `${visibility} ${method}`).to.equal(refusal('token scope is limited to public packages'));
                }

                expect((await request('GET', url, user.headers)).payload).to.equal('content');
            }
        });
    });

    describe('where Gitea does not restrict it', () => {
        it('serves the site administration and the organisation list to a public-only administrator token', async () => {
            expect((await request('GET', '/api/v1/admin/users', adminPublicOnly)).statusCode).to.equal(200);
            expect((await request('GET', '/api/v1/admin/orgs', adminPublicOnly)).statusCode).to.equal(200);
            // Gitea checks the scope of GET /orgs after answering it: public-only does not apply there.
            expect((await request('GET', '/api/v1/orgs', publicOnly)).statusCode).to.equal(200);
        });

        it('leaves operations that ask for no scope alone', async () => {
            expect((await request('GET', '/api/v1/licenses', publicOnly)).statusCode).to.equal(200);
            const rendered = await request('POST', '/api/v1/markdown', publicOnly, { Text: 'hi' });
            expect(rendered.statusCode).to.equal(200);
        });
    });
});
