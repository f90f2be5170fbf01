import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ApiIssue {
    id: number;
    number: number;
    title: string;
    body: string;
    state: string;
    comments: number;
    url: string;
    html_url: string;
    user: { login: string };
    repository: { full_name: string };
    closed_at?: string;
}

describe('issues: the minimum of Gitea issue API', () => {
    let context: TestServer;
    let admin: TestUser;
    let owner: TestUser;
    let other: TestUser;
    let stranger: TestUser;

    const request = async (method: string, url: string, headers: object | undefined, payload?: object) =>
        await context.server.inject({ method, url: `/api/v1${url}`, headers: headers as Record<string, string>, payload });

    /** A repository of iowner's, made by the administrator. */
    const makeRepo = async (name: string, isPrivate: boolean) => {
        const response = await request('POST', '/admin/users/iowner/repos', admin.headers, { name, private: isPrivate });
        expect(response.statusCode).to.equal(201);
    };

    /** An issue the test opens for itself; its number, whatever other tests opened in the repository. */
    const openIssue = async (repository: string, user: TestUser, payload: object) => {
        const response = await request('POST', `/repos/iowner/${repository}/issues`, user.headers, payload);
        expect(response.statusCode).to.equal(201);
        return (response.result as ApiIssue).number;
    };

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'issueadmin', admin: true });
        owner = await createTestUser(context.server, { name: 'iowner' });
        other = await createTestUser(context.server, { name: 'iother' });
        stranger = await createTestUser(context.server, { name: 'istranger' });
        await makeRepo('public-repo', false);
        await makeRepo('secret-repo', true);
    });

    after(async () => {
        await context.cleanup();
    });

    it('creates issues numbered from 1 in each repository (201)', async () => {
        // Repositories no other test opens issues in.
        await makeRepo('numbered-repo', false);
        await makeRepo('numbered-secret', true);
        const first = await request('POST', '/repos/iowner/numbered-repo/issues', other.headers, { title: 'First', body: 'Body' });
        expect(first.statusCode).to.equal(201);
        expect(swaggerErrors('issueCreateIssue', 201, first.result)).to.equal([]);
        const issue = first.result as ApiIssue;
        expect(issue).to.include({ number: 1, title: 'First', body: 'Body', state: 'open', comments: 0 });
        expect(issue.user.login).to.equal('iother');
        expect(issue.url).to.equal('http://127.0.0.1:3000/api/v1/repos/iowner/numbered-repo/issues/1');
        expect(issue.html_url).to.equal('http://127.0.0.1:3000/iowner/numbered-repo/issues/1');
        expect(issue.repository.full_name).to.equal('iowner/numbered-repo');
        const second = await request('POST', '/repos/iowner/numbered-repo/issues', owner.headers, { title: 'Second', closed: true });
        expect((second.result as ApiIssue).number).to.equal(2);
        expect((second.result as ApiIssue).state).to.equal('closed');
        expect((second.result as ApiIssue).closed_at).to.exist();
        const elsewhere = await request('POST', '/repos/iowner/numbered-secret/issues', owner.headers, { title: 'Elsewhere' });
        expect((elsewhere.result as ApiIssue).number).to.equal(1);
    });

    it('refuses a missing title (422), an unknown or hidden repository (404), anonymous callers (401)', async () => {
        const missing = await request('POST', '/repos/iowner/public-repo/issues', other.headers, { body: 'no title' });
        expect(missing.statusCode).to.equal(422);
        expect((missing.result as { message: string }).message).to.equal('[Title]: Required');
        expect((await request('POST', '/repos/iowner/nothing/issues', other.headers, { title: 'x' })).statusCode).to.equal(404);
        expect((await request('POST', '/repos/nobody/public-repo/issues', other.headers, { title: 'x' })).statusCode).to.equal(404);
        expect((await request('POST', '/repos/iowner/secret-repo/issues', other.headers, { title: 'x' })).statusCode).to.equal(404);
        expect((await request('POST', '/repos/iowner/public-repo/issues', undefined, { title: 'x' })).statusCode).to.equal(401);
        const noScope = await createTestUser(context.server, { name: 'noissuescope', scopes: ['read:user'] });
        expect((await request('POST', '/repos/iowner/public-repo/issues', noScope.headers, { title: 'x' })).statusCode).to.equal(403);
    });

    it('gets an issue (200), anonymously on a public repository; 404 for an unknown index or a hidden repository', async () => {
        const index = await openIssue('public-repo', other, { title: 'To read', body: 'Body' });
        const response = await request('GET', `/repos/iowner/public-repo/issues/${index}`, undefined);
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('issueGetIssue', 200, response.result)).to.equal([]);
        expect(response.result).to.include({ number: index, title: 'To read', body: 'Body' });
        const unknown = await request('GET', '/repos/iowner/public-repo/issues/99', other.headers);
        expect(unknown.statusCode).to.equal(404);
        expect((unknown.result as { message: string }).message).to.contain('issue does not exist');
        const hidden = await openIssue('secret-repo', owner, { title: 'Hidden' });
        expect((await request('GET', `/repos/iowner/secret-repo/issues/${hidden}`, stranger.headers)).statusCode).to.equal(404);
        const own = await request('GET', `/repos/iowner/secret-repo/issues/${hidden}`, owner.headers);
        expect(own.statusCode).to.equal(200);
        expect((own.result as ApiIssue).title).to.equal('Hidden');
    });

    it('edits title, body and state by the author or a writer (201), 403 for anyone else', async () => {
        const index = await openIssue('public-repo', other, { title: 'To edit', body: 'Old' });
        const url = `/repos/iowner/public-repo/issues/${index}`;
        const edited = await request('PATCH', url, other.headers, { title: 'Renamed', body: 'New' });
        expect(edited.statusCode).to.equal(201);
        expect(swaggerErrors('issueEditIssue', 201, edited.result)).to.equal([]);
        expect(edited.result).to.include({ title: 'Renamed', body: 'New' });
        const closed = await request('PATCH', url, owner.headers, { state: 'closed' });
        expect((closed.result as ApiIssue).state).to.equal('closed');
        const reopened = await request('PATCH', url, owner.headers, { state: 'open' });
        expect((reopened.result as ApiIssue).state).to.equal('open');
        expect((await request('PATCH', url, stranger.headers, { title: 'Mine' })).statusCode).to.equal(403);
        expect((await request('PATCH', url, owner.headers, { state: 'sideways' })).statusCode).to.equal(422);
        expect(((await request('GET', url, owner.headers)).result as ApiIssue).title).to.equal('Renamed');
        expect((await request('PATCH', '/repos/iowner/public-repo/issues/42', owner.headers, { title: 'x' })).statusCode).to.equal(404);
    });

    it('comments on an issue (201) and counts the comments; 422 without a body, 404 for an unknown issue', async () => {
        const index = await openIssue('public-repo', other, { title: 'To comment on' });
        const url = `/repos/iowner/public-repo/issues/${index}`;
        const response = await request('POST', `${url}/comments`, stranger.headers, { body: 'Me too' });
        expect(response.statusCode).to.equal(201);
        expect(swaggerErrors('issueCreateComment', 201, response.result)).to.equal([]);
        const comment = response.result as { id: number; body: string; html_url: string; issue_url: string; user: { login: string } };
        expect(comment).to.include({ body: 'Me too', issue_url: `http://127.0.0.1:3000/iowner/public-repo/issues/${index}` });
        expect(comment.html_url).to.equal(`http://127.0.0.1:3000/iowner/public-repo/issues/${index}#issuecomment-${comment.id}`);
        expect(comment.user.login).to.equal('istranger');
        expect(((await request('GET', url, owner.headers)).result as ApiIssue).comments).to.equal(1);
        expect((await request('POST', `${url}/comments`, owner.headers, {})).statusCode).to.equal(422);
        expect((await request('POST', '/repos/iowner/public-repo/issues/77/comments', owner.headers, { body: 'x' })).statusCode).to.equal(
            404,
        );
    });

    it('works through the gitea-js client', async () => {
        await context.server.start();
        const api = giteaClient(context.server, other);
        const created = await api.repos.issueCreateIssue('iowner', 'public-repo', { title: 'From gitea-js' });
        expect(created.status).to.equal(201);
        const index = created.data.number as number;
        expect((await api.repos.issueGetIssue('iowner', 'public-repo', index)).data.title).to.equal('From gitea-js');
        expect((await api.repos.issueEditIssue('iowner', 'public-repo', index, { body: 'edited' })).data.body).to.equal('edited');
        expect((await api.repos.issueCreateComment('iowner', 'public-repo', index, { body: 'hello' })).data.body).to.equal('hello');
    });
});

describe("issues: the owner's visibility gates its repositories", () => {
    let context: TestServer;
    let admin: TestUser;
    let boss: TestUser;
    let member: TestUser;
    let outsider: TestUser;
    let loner: TestUser;

    const request = async (method: string, url: string, user: TestUser | undefined, payload?: object) =>
        await context.server.inject({ method, url: `/api/v1${url}`, headers: user?.headers, payload });
    const issueCount = async (ownerName: string) => {
        const knex = context.database.knex;
        const owner = await knex('users').where({ lower_name: ownerName }).first('id');
        const row = await knex('issues')
            .whereIn('repo_id', knex('repositories').where({ owner_id: owner.id }).select('id'))
            .count({ count: '*' })
            .first();
        return Number(row?.count);
    };
    /** Every route of the issue API on a repository: read an issue, open one, edit one, comment on one. */
    const everyRoute = async (repository: string, user: TestUser | undefined) => [
        (await request('GET', `/repos/${repository}/issues/1`, user)).statusCode,
        (await request('POST', `/repos/${repository}/issues`, user, { title: 'Probe' })).statusCode,
        (await request('PATCH', `/repos/${repository}/issues/1`, user, { title: 'Probed' })).statusCode,
        (await request('POST', `/repos/${repository}/issues/1/comments`, user, { body: 'Probe' })).statusCode,
    ];

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'visadmin', admin: true });
        boss = await createTestUser(context.server, { name: 'visboss' });
        member = await createTestUser(context.server, { name: 'vismember' });
        outsider = await createTestUser(context.server, { name: 'visoutsider' });
        loner = await createTestUser(context.server, { name: 'visloner' });
        const knex = context.database.knex;
        for (const [org, visibility] of [
            ['vis-private', 'private'],
            ['vis-limited', 'limited'],
            ['vis-public', 'public'],
        ] as const) {
            expect((await request('POST', '/orgs', boss, { username: org, visibility })).statusCode).to.equal(201);
            expect((await request('POST', `/org/${org}/repos`, boss, { name: 'open' })).statusCode).to.equal(201);
            expect((await request('POST', `/repos/${org}/open/issues`, boss, { title: 'Seed' })).statusCode).to.equal(201);
        }

        const org = await knex('users').where({ lower_name: 'vis-private' }).first('id');
        const [teamId] = await knex('teams').insert({ org_id: org.id, lower_name: 'readers', name: 'Readers', authorize: 'read' });
        await knex('org_users').insert({ org_id: org.id, uid: member.user.id, is_public: false });
        await knex('team_users').insert({ org_id: org.id, team_id: teamId, uid: member.user.id });
        await knex('users').where({ id: loner.user.id }).update({ visibility: 2 });
        expect((await request('POST', '/admin/users/visloner/repos', admin, { name: 'diary' })).statusCode).to.equal(201);
        expect((await request('POST', '/repos/visloner/diary/issues', loner, { title: 'Seed' })).statusCode).to.equal(201);
    });

    after(async () => {
        await context.cleanup();
    });

    it('answers 404 to anonymous readers of a public repository whose owner is private or limited', async () => {
        for (const repository of ['vis-private/open', 'vis-limited/open', 'visloner/diary']) {
            const response = await request('GET', `/repos/${repository}/issues/1`, undefined);
            expect(response.statusCode, repository).to.equal(404);
            expect((response.result as { message: string }).message).to.equal('not found');
        }

        expect((await request('GET', '/repos/vis-public/open/issues/1', undefined)).statusCode).to.equal(200);
    });

    it('answers 404 to signed-in outsiders of a private organisation or private user, for reads and writes, and writes nothing', async () => {
        for (const [repository, owner] of [
            ['vis-private/open', 'vis-private'],
            ['visloner/diary', 'visloner'],
        ]) {
            const before = await issueCount(owner as string);
            expect(await everyRoute(repository as string, outsider), repository).to.equal([404, 404, 404, 404]);
            expect(await issueCount(owner as string)).to.equal(before);
        }
    });

    it("lets a private organisation's members, a private user themself and administrators read and write", async () => {
        // A reader opens issues and comments; editing another's issue takes a writing team.
        expect(await everyRoute('vis-private/open', member)).to.equal([200, 201, 403, 201]);
        expect(await everyRoute('vis-private/open', admin)).to.equal([200, 201, 201, 201]);
        expect(await everyRoute('visloner/diary', loner)).to.equal([200, 201, 201, 201]);
        expect(await everyRoute('visloner/diary', admin)).to.equal([200, 201, 201, 201]);
    });

    it("shows a limited organisation's repositories to any signed-in user, not to anonymous callers", async () => {
        expect((await request('GET', '/repos/vis-limited/open/issues/1', undefined)).statusCode).to.equal(404);
        const [read, opened, , commented] = await everyRoute('vis-limited/open', outsider);
        expect([read, opened, commented]).to.equal([200, 201, 201]);
    });

    it('shows a restricted user only the repositories of organisations they belong to', async () => {
        const restricted = await createTestUser(context.server, { name: 'visrestricted' });
        await context.database.knex('users').where({ id: restricted.user.id }).update({ is_restricted: true });
        expect(await everyRoute('vis-public/open', restricted)).to.equal([404, 404, 404, 404]);
        expect(await everyRoute('vis-limited/open', restricted)).to.equal([404, 404, 404, 404]);
        const knex = context.database.knex;
        const org = await knex('users').where({ lower_name: 'vis-limited' }).first('id');
        const [teamId] = await knex('teams').insert({ org_id: org.id, lower_name: 'guests', name: 'Guests', authorize: 'read' });
        await knex('org_users').insert({ org_id: org.id, uid: restricted.user.id, is_public: false });
        await knex('team_users').insert({ org_id: org.id, team_id: teamId, uid: restricted.user.id });
        const [read, opened] = await everyRoute('vis-limited/open', restricted);
        expect([read, opened]).to.equal([200, 201]);
    });
});
