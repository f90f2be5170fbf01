import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { tokens } from '../../../../../plugins/git/domain/identity/token-service.ts';
import { users } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ApiOrg {
    name: string;
    email: string;
    visibility: string;
    full_name: string;
}

describe('organizations', () => {
    let context: TestServer;
    let admin: TestUser;
    let owner: TestUser;
    let outsider: TestUser;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'root', admin: true });
        owner = await createTestUser(context.server, { name: 'olga' });
        outsider = await createTestUser(context.server, { name: 'otto' });
    });

    after(async () => {
        await context.cleanup();
    });

    const request = async (method: string, url: string, headers: Record<string, string> | undefined, payload?: object) =>
        await context.server.inject({ method, url: `/api/v1${url}`, headers, payload });

    const names = (result: unknown) => (result as ApiOrg[]).map((org) => org.name);

    /** An organisation of olga's, made through the API when no test has made it yet. */
    const haveOrg = async (username: string, fields: Record<string, string> = {}) => {
        if (!(await context.database.knex('users').where({ lower_name: username }).first('id'))) {
            expect((await request('POST', '/orgs', owner.headers, { username, ...fields })).statusCode).to.equal(201);
        }
    };

    /** One organisation of each visibility, for the tests that look at who sees what. */
    const haveVisibilityOrgs = async () => {
        await haveOrg('see-pub', { email: 'org@example.com', visibility: 'public' });
        await haveOrg('see-lim', { visibility: 'limited' });
        await haveOrg('see-priv', { visibility: 'private' });
    };

    /** An organisation that owns a repository named site. */
    const haveRepoOrg = async () => {
        await haveOrg('repo-org');
        const org = await context.database.knex('users').where({ lower_name: 'repo-org' }).first('id');
        if (!(await context.database.knex('repositories').where({ owner_id: org.id, lower_name: 'site' }).first('id'))) {
            expect((await request('POST', '/org/repo-org/repos', owner.headers, { name: 'site' })).statusCode).to.equal(201);
        }
    };

    describe('create', () => {
        it('creates an organisation whose creator is its owner (201)', async () => {
            const response = await request('POST', '/orgs', owner.headers, {
                username: 'pub-org',
                full_name: 'Public Org',
                email: 'org@example.com',
                visibility: 'public',
            });
            expect(response.statusCode).to.equal(201);
            expect(swaggerErrors('orgCreate', 201, response.result)).to.equal([]);
            expect(response.result).to.include({ name: 'pub-org', username: 'pub-org', full_name: 'Public Org', visibility: 'public' });
            for (const [name, visibility] of [
                ['lim-org', 'limited'],
                ['priv-org', 'private'],
            ]) {
                expect((await request('POST', '/orgs', owner.headers, { username: name, visibility })).statusCode).to.equal(201);
            }

            const team = await context.database
                .knex('teams')
                .join('users', 'users.id', 'teams.org_id')
                .where('users.lower_name', 'pub-org')
                .first('teams.name', 'teams.authorize');
            expect(team).to.equal({ name: 'Owners', authorize: 'owner' });
        });

        it('answers 422 for a taken, reserved or missing name and a bad visibility', async () => {
            await haveOrg('taken-org');
            const cases: Array<[object, string | undefined]> = [
                [{ username: 'TAKEN-ORG' }, 'user already exists [name: TAKEN-ORG]'],
                [{ username: 'olga' }, 'user already exists [name: olga]'],
                [{ username: 'explore' }, 'name is reserved [name: explore]'],
                [{}, '[UserName]: Required'],
                [{ username: 'vis-org', visibility: 'hidden' }, undefined],
            ];
            for (const [payload, message] of cases) {
                const response = await request('POST', '/orgs', owner.headers, payload);
                expect(response.statusCode, JSON.stringify(payload)).to.equal(422);
                if (message) {
                    expect((response.result as { message: string }).message).to.equal(message);
                }
            }
        });

        it('answers 403 to a user who may not create organisations, and 401 without a token', async () => {
            const limited = await createTestUser(context.server, { name: 'nocreate' });
            await users(context.server).edit(limited.user, { allow_create_organization: false });
            const response = await request('POST', '/orgs', limited.headers, { username: 'not-made' });
            expect(response.statusCode).to.equal(403);
            expect((response.result as { message: string }).message).to.equal('not allowed to create org');
            expect((await request('POST', '/orgs', undefined, { username: 'not-made' })).statusCode).to.equal(401);
        });
    });

    describe('visibility', () => {
        it('lists public organisations to anonymous callers, limited ones to anyone signed in, private ones to members and admins', async () => {
            await haveVisibilityOrgs();
            // Other tests make organisations too: each list is looked at for this test's own.
            const ours = (result: unknown) => names(result).filter((name) => name.startsWith('see-'));
            const anonymous = await request('GET', '/orgs?limit=50', undefined);
            expect(anonymous.statusCode).to.equal(200);
            expect(swaggerErrors('orgGetAll', 200, anonymous.result)).to.equal([]);
            expect(ours(anonymous.result)).to.equal(['see-pub']);
            expect((anonymous.result as ApiOrg[]).find((org) => org.name === 'see-pub')?.email).to.equal('');
            expect(ours((await request('GET', '/orgs?limit=50', outsider.headers)).result)).to.equal(['see-lim', 'see-pub']);
            expect(ours((await request('GET', '/orgs?limit=50', owner.headers)).result)).to.equal(['see-lim', 'see-priv', 'see-pub']);
            const everything = await request('GET', '/orgs?limit=50', admin.headers);
            expect(ours(everything.result)).to.equal(['see-lim', 'see-priv', 'see-pub']);
            expect(names(everything.result)).to.not.part.include(['root', 'olga', 'otto']);
        });

        it('pages the list with X-Total-Count and Link', async () => {
            await haveVisibilityOrgs();
            const all = names((await request('GET', '/orgs?limit=50', owner.headers)).result);
            expect(all).to.include('see-priv');
            const response = await request('GET', '/orgs?limit=1&page=2', owner.headers);
            expect(names(response.result)).to.equal([all[1]]);
            expect(response.headers['x-total-count']).to.equal(String(all.length));
            expect(response.headers.link).to.contain('rel="prev"');
        });

        it('gets an organisation only where it may be seen (404 otherwise)', async () => {
            await haveVisibilityOrgs();
            const publicOrg = await request('GET', '/orgs/SEE-PUB', undefined);
            expect(publicOrg.statusCode).to.equal(200);
            expect(swaggerErrors('orgGet', 200, publicOrg.result)).to.equal([]);
            expect((publicOrg.result as ApiOrg).email).to.equal('');
            expect(((await request('GET', '/orgs/see-pub', outsider.headers)).result as ApiOrg).email).to.equal('org@example.com');
            expect((await request('GET', '/orgs/see-lim', undefined)).statusCode).to.equal(404);
            expect((await request('GET', '/orgs/see-lim', outsider.headers)).statusCode).to.equal(200);
            expect((await request('GET', '/orgs/see-priv', outsider.headers)).statusCode).to.equal(404);
            expect((await request('GET', '/orgs/see-priv', owner.headers)).statusCode).to.equal(200);
            expect((await request('GET', '/orgs/see-priv', admin.headers)).statusCode).to.equal(200);
            expect((await request('GET', '/orgs/olga', owner.headers)).statusCode).to.equal(404);
            expect((await request('GET', '/orgs/no-such-org', owner.headers)).statusCode).to.equal(404);
        });
    });

    describe('edit and delete', () => {
        it('lets the owner edit (200), clears the e-mail with "", and refuses others (403)', async () => {
            await haveOrg('edit-org', { full_name: 'Edited Org', email: 'edit@example.com' });
            const response = await request('PATCH', '/orgs/edit-org', owner.headers, {
                full_name: 'Renamed Org',
                location: 'Porto',
                email: '',
            });
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('orgEdit', 200, response.result)).to.equal([]);
            expect(response.result).to.include({ full_name: 'Renamed Org', location: 'Porto', email: '' });
            expect((await request('PATCH', '/orgs/edit-org', outsider.headers, { full_name: 'x' })).statusCode).to.equal(403);
            expect((await request('PATCH', '/orgs/edit-org', owner.headers, { email: 'bad' })).statusCode).to.equal(422);
            expect((await request('PATCH', '/orgs/edit-org', owner.headers, { visibility: 'bad' })).statusCode).to.equal(422);
            expect((await request('PATCH', '/orgs/no-such-org', owner.headers, {})).statusCode).to.equal(404);
        });

        it('lets the owner delete (204), refuses others (403), 404s the unknown', async () => {
            await haveOrg('doomed-org', { visibility: 'limited' });
            expect((await request('DELETE', '/orgs/doomed-org', outsider.headers)).statusCode).to.equal(403);
            expect((await request('DELETE', '/orgs/doomed-org', owner.headers)).statusCode).to.equal(204);
            expect((await request('DELETE', '/orgs/doomed-org', owner.headers)).statusCode).to.equal(404);
        });

        it("checks the organisation before the body, as Gitea's middleware runs before binding", async () => {
            await haveOrg('guard-org');
            const notOwner = await request('PATCH', '/orgs/guard-org', outsider.headers, { visibility: 'bad' });
            expect(notOwner.statusCode).to.equal(403);
            expect((notOwner.result as { message: string }).message).to.equal('Must be an organization owner');
            const unknown = await request('PATCH', '/orgs/no-such-org', owner.headers, { visibility: 'bad' });
            expect(unknown.statusCode).to.equal(404);
            expect((unknown.result as { message: string }).message).to.equal('user redirect does not exist [name: no-such-org]');
        });
    });

    describe('admin', () => {
        it('lists every organisation, whatever its visibility', async () => {
            await haveOrg('every-pub', { visibility: 'public' });
            await haveOrg('every-lim', { visibility: 'limited' });
            await haveOrg('every-priv', { visibility: 'private' });
            const response = await request('GET', '/admin/orgs?limit=50', admin.headers);
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('adminGetAllOrgs', 200, response.result)).to.equal([]);
            expect(names(response.result).filter((name) => name.startsWith('every-'))).to.equal(['every-lim', 'every-priv', 'every-pub']);
            expect(names(response.result)).to.not.part.include(['root', 'olga', 'otto']);
            expect((await request('GET', '/admin/orgs', owner.headers)).statusCode).to.equal(403);
        });

        it('creates an organisation owned by a given user', async () => {
            const response = await request('POST', '/admin/users/otto/orgs', admin.headers, {
                username: 'ottos-org',
                visibility: 'private',
            });
            expect(response.statusCode).to.equal(201);
            expect(swaggerErrors('adminCreateOrg', 201, response.result)).to.equal([]);
            expect((await request('GET', '/orgs/ottos-org', outsider.headers)).statusCode).to.equal(200);
            expect((await request('POST', '/admin/users/otto/orgs', admin.headers, { username: 'ottos-org' })).statusCode).to.equal(422);
            expect((await request('POST', '/admin/users/nobody/orgs', admin.headers, { username: 'x-org' })).statusCode).to.equal(404);
        });
    });

    describe('repositories through the deprecated /org/{org}/repos', () => {
        it('lets an owner create a real repository in the organisation (201)', async () => {
            await haveOrg('site-org');
            const response = await request('POST', '/org/site-org/repos', owner.headers, {
                name: 'Site',
                auto_init: true,
                description: 'the site',
            });
            expect(response.statusCode).to.equal(201);
            expect(swaggerErrors('createOrgRepoDeprecated', 201, response.result)).to.equal([]);
            expect(response.result).to.include({ name: 'Site', full_name: 'site-org/Site', empty: false });
            expect(Fs.existsSync(Path.join(context.config.repositoriesDir, 'site-org', 'site.git', 'HEAD'))).to.be.true();
        });

        it('answers 409 for a taken name, 422 for a bad one, 403 to non-owners, 404 for unknown or hidden organisations', async () => {
            await haveRepoOrg();
            await haveOrg('hidden-org', { visibility: 'private' });
            expect((await request('POST', '/org/repo-org/repos', owner.headers, { name: 'site' })).statusCode).to.equal(409);
            expect((await request('POST', '/org/repo-org/repos', owner.headers, { name: 'bad name' })).statusCode).to.equal(422);
            const outsiderAttempt = await request('POST', '/org/repo-org/repos', outsider.headers, { name: 'mine' });
            expect(outsiderAttempt.statusCode).to.equal(403);
            expect((outsiderAttempt.result as { message: string }).message).to.equal(
                'User is not allowed to create repositories in this organization.',
            );
            expect((await request('POST', '/org/hidden-org/repos', outsider.headers, { name: 'mine' })).statusCode).to.equal(404);
            expect((await request('POST', '/org/no-such-org/repos', owner.headers, { name: 'mine' })).statusCode).to.equal(404);
        });

        it('needs both the organization and the repository scopes', async () => {
            await haveOrg('scope-org');
            const { token } = await tokens(context.server).create(owner.user, 'org-only', ['write:organization']);
            const response = await request('POST', '/org/scope-org/repos', { authorization: `token ${token}` }, { name: 'scoped' });
            expect(response.statusCode).to.equal(403);
            expect((response.result as { message: string }).message).to.contain('write:repository');
        });

        it('refuses to delete an organisation that still owns repositories', async () => {
            await haveRepoOrg();
            const response = await request('DELETE', '/orgs/repo-org', owner.headers);
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.contain('repositories');
            expect((await request('GET', '/orgs/repo-org', owner.headers)).statusCode).to.equal(200);
        });
    });

    describe('through the gitea-js client', () => {
        it('creates, gets, lists, edits and deletes', async () => {
            await context.server.start();
            const api = giteaClient(context.server, owner);
            expect((await api.orgs.orgCreate({ username: 'js-org' })).status).to.equal(201);
            expect((await api.orgs.orgGet('js-org')).data.name).to.equal('js-org');
            expect((await api.orgs.orgGetAll({ limit: 50 })).data.map((org) => org.name)).to.include('js-org');
            expect((await api.orgs.orgEdit('js-org', { description: 'made by gitea-js' })).data.description).to.equal('made by gitea-js');
            expect((await api.orgs.orgDelete('js-org')).status).to.equal(204);
            const adminApi = giteaClient(context.server, admin);
            expect((await adminApi.admin.adminGetAllOrgs()).status).to.equal(200);
            expect((await adminApi.admin.adminCreateOrg('olga', { username: 'js-admin-org' })).status).to.equal(201);
            expect((await api.org.createOrgRepoDeprecated('js-admin-org', { name: 'from-js' })).status).to.equal(201);
        });
    });
});
