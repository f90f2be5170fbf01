import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface Thread {
    id: number;
    unread: boolean;
    pinned: boolean;
    updated_at: string;
    url: string;
    repository: { full_name: string; permissions?: unknown };
    subject: {
        title: string;
        url: string;
        html_url: string;
        latest_comment_url: string;
        latest_comment_html_url: string;
        type: string;
        state: string;
    };
}

const pause = async (ms = 1100) => await new Promise((resolve) => setTimeout(resolve, ms));

/** The people of an organisation of a test's own, to whom its notifications go. */
interface Crew {
    /** The organisation's owner. */
    boss: TestUser;
    /** Members, in a team that writes. */
    alice: TestUser;
    bob: TestUser;
}

describe('notifications', () => {
    let context: TestServer;
    let admin: TestUser;
    /** In no organisation: reads no one's threads. */
    let stranger: TestUser;

    const request = async (method: string, url: string, headers: object | undefined, payload?: object) =>
        await context.server.inject({ method, url: `/api/v1${url}`, headers: headers as Record<string, string>, payload });
    const threads = async (user: TestUser, query = '') => (await request('GET', `/notifications${query}`, user.headers)).result as Thread[];
    const unread = async (user: TestUser) => ((await request('GET', '/notifications/new', user.headers)).result as { new: number }).new;

    /**
     * The organisation `org` with a private repository tracker and a public one open-source, and people of its own
     * (named after it): the threads a test looks at are those of its own activity, whatever the other tests did.
     */
    const makeCrew = async (org: string): Promise<Crew> => {
        const person = async (name: string) => await createTestUser(context.server, { name: `${org}-${name}` });
        const [boss, alice, bob] = await Promise.all([person('boss'), person('alice'), person('bob')]);
        expect((await request('POST', '/orgs', boss.headers, { username: org })).statusCode).to.equal(201);
        const knex = context.database.knex;
        const { id } = await knex('users').where({ lower_name: org }).first('id');
        const [teamId] = await knex('teams').insert({ org_id: id, lower_name: 'devs', name: 'Devs', authorize: 'write' });
        for (const member of [alice, bob]) {
            await knex('org_users').insert({ org_id: id, uid: member.user.id, is_public: false });
            await knex('team_users').insert({ org_id: id, team_id: teamId, uid: member.user.id });
        }

        for (const [name, isPrivate] of [
            ['tracker', true],
            ['open-source', false],
        ] as const) {
            expect((await request('POST', `/org/${org}/repos`, boss.headers, { name, private: isPrivate })).statusCode).to.equal(201);
        }

        return { boss, alice, bob };
    };

    const openIssue = async (repository: string, user: TestUser, payload: object) =>
        expect((await request('POST', `/repos/${repository}/issues`, user.headers, payload)).statusCode).to.equal(201);

    /** Marks one of the user's threads read, as the thread's page does. */
    const markRead = async (user: TestUser, thread: Thread | undefined) =>
        expect((await request('PATCH', `/notifications/threads/${thread?.id}`, user.headers)).statusCode).to.equal(205);

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'nadmin', admin: true });
        stranger = await createTestUser(context.server, { name: 'nstranger' });
    });

    after(async () => {
        await context.cleanup();
    });

    it('gives the other members of an organisation an unread thread when one opens an issue, and PUT marks them read', async () => {
        const { boss, alice, bob } = await makeCrew('opened');
        await openIssue('opened/tracker', alice, { title: 'Outage', body: 'Down' });
        expect(await threads(alice)).to.equal([]);
        expect(await unread(alice)).to.equal(0);
        for (const member of [boss, bob]) {
            const response = await request('GET', '/notifications', member.headers);
            expect(response.statusCode).to.equal(200);
            expect(swaggerErrors('notifyGetList', 200, response.result)).to.equal([]);
            const [thread] = response.result as Thread[];
            expect(thread).to.include({ unread: true, pinned: false });
            expect(thread?.subject).to.include({
                title: 'Outage',
                type: 'Issue',
                state: 'open',
                url: 'http://127.0.0.1:3000/api/v1/repos/opened/tracker/issues/1',
                html_url: 'http://127.0.0.1:3000/opened/tracker/issues/1',
                latest_comment_url: '',
            });
            expect(thread?.repository.full_name).to.equal('opened/tracker');
            expect(thread?.repository.permissions).to.not.exist();
            expect(thread?.url).to.equal(`http://127.0.0.1:3000/api/v1/notifications/threads/${thread?.id}`);
            const count = await request('GET', '/notifications/new', member.headers);
            expect(swaggerErrors('notifyNewAvailable', 200, count.result)).to.equal([]);
            expect(count.result).to.equal({ new: 1 });
        }

        const marked = await request('PUT', '/notifications', bob.headers);
        expect(marked.statusCode).to.equal(205);
        expect(swaggerErrors('notifyReadList', 205, marked.result)).to.equal([]);
        expect((marked.result as Thread[]).map((thread) => thread.unread)).to.equal([false]);
        expect(await unread(bob)).to.equal(0);
        expect(await threads(bob)).to.equal([]);
        expect((await threads(bob, '?status-types=read')).length).to.equal(1);
        expect(await unread(boss)).to.equal(1);
    });

    it('makes a read thread unread again on a new comment, pointing at that comment', async () => {
        const { boss, alice, bob } = await makeCrew('reopened');
        await openIssue('reopened/tracker', alice, { title: 'Outage', body: 'Down' });
        expect((await request('PUT', '/notifications', bob.headers)).statusCode).to.equal(205);
        expect(await threads(bob)).to.equal([]);
        await pause(10);
        const comment = await request('POST', '/repos/reopened/tracker/issues/1/comments', alice.headers, { body: 'Still down' });
        const commentId = (comment.result as { id: number }).id;
        const [thread] = await threads(bob);
        expect(thread?.unread).to.be.true();
        expect(thread?.subject.latest_comment_url).to.equal(
            `http://127.0.0.1:3000/api/v1/repos/reopened/tracker/issues/comments/${commentId}`,
        );
        expect(thread?.subject.latest_comment_html_url).to.equal(
            `http://127.0.0.1:3000/reopened/tracker/issues/1#issuecomment-${commentId}`,
        );
        expect(await unread(boss)).to.equal(1);
        expect(await threads(alice)).to.equal([]);
    });

    it('makes authors and commenters participants: outsiders who comment on a public repository hear of later activity', async () => {
        const { alice, bob } = await makeCrew('chatter');
        const carol = await createTestUser(context.server, { name: 'chatter-carol' });
        await request('POST', '/repos/chatter/open-source/issues', alice.headers, { title: 'Feature' });
        expect(await threads(carol)).to.equal([]);
        await request('POST', '/repos/chatter/open-source/issues/1/comments', carol.headers, { body: '+1' });
        expect(await threads(carol)).to.equal([]);
        expect((await threads(alice)).map((thread) => thread.subject.title)).to.equal(['Feature']);
        await request('POST', '/repos/chatter/open-source/issues/1/comments', bob.headers, { body: 'On it' });
        expect((await threads(carol)).map((thread) => thread.subject.title)).to.equal(['Feature']);
        await request('PATCH', '/repos/chatter/open-source/issues/1', bob.headers, { state: 'closed' });
        expect((await threads(carol))[0]?.subject.state).to.equal('closed');
    });

    it('gets a thread (200): 403 for another user, allowed for an administrator, 404 when unknown', async () => {
        const { boss, alice } = await makeCrew('getter');
        await openIssue('getter/tracker', alice, { title: 'Outage' });
        const [thread] = await threads(boss);
        expect(thread).to.exist();
        const own = await request('GET', `/notifications/threads/${thread?.id}`, boss.headers);
        expect(own.statusCode).to.equal(200);
        expect(swaggerErrors('notifyGetThread', 200, own.result)).to.equal([]);
        expect((own.result as Thread).id).to.equal(thread?.id as number);
        const foreign = await request('GET', `/notifications/threads/${thread?.id}`, stranger.headers);
        expect(foreign.statusCode).to.equal(403);
        expect((foreign.result as { message: string }).message).to.equal(
            `only user itself and admin are allowed to read/change this thread ${thread?.id}`,
        );
        expect((await request('GET', `/notifications/threads/${thread?.id}`, admin.headers)).statusCode).to.equal(200);
        expect((await request('GET', '/notifications/threads/99999', boss.headers)).statusCode).to.equal(404);
        expect((await request('GET', '/notifications/threads/abc', boss.headers)).statusCode).to.equal(404);
    });

    it('PATCH changes one thread (205): pinned is neither unread nor hidden, and stays pinned on new activity', async () => {
        const { boss, alice } = await makeCrew('pinner');
        await openIssue('pinner/tracker', alice, { title: 'Outage' });
        const [thread] = await threads(boss, '?subject-type=issue');
        const pinned = await request('PATCH', `/notifications/threads/${thread?.id}?to-status=pinned`, boss.headers);
        expect(pinned.statusCode).to.equal(205);
        expect(swaggerErrors('notifyReadThread', 205, pinned.result)).to.equal([]);
        expect(pinned.result).to.include({ unread: false, pinned: true });
        expect((await threads(boss)).find((item) => item.id === thread?.id)?.pinned).to.be.true();
        const before = await unread(boss);
        // New activity on the pinned thread's own issue.
        await request('POST', `/repos/pinner/tracker/issues/1/comments`, alice.headers, { body: 'ping' });
        expect((await threads(boss)).find((item) => item.id === thread?.id)).to.include({ pinned: true, unread: false });
        expect(await unread(boss)).to.equal(before);
        const read = await request('PATCH', `/notifications/threads/${thread?.id}`, boss.headers);
        expect(read.result).to.include({ unread: false, pinned: false });
        expect((await request('PATCH', `/notifications/threads/${thread?.id}`, stranger.headers)).statusCode).to.equal(403);
        expect((await request('PATCH', `/notifications/threads/${thread?.id}`, admin.headers)).statusCode).to.equal(403);
        expect((await request('PATCH', '/notifications/threads/99999', boss.headers)).statusCode).to.equal(404);
    });

    it('filters by status, subject type and update time, pages newest first with Link and X-Total-Count', async () => {
        const { boss, alice } = await makeCrew('filter');
        await openIssue('filter/tracker', alice, { title: 'Outage' });
        await openIssue('filter/open-source', alice, { title: 'Feature' });
        // One thread read, one unread.
        await markRead(
            boss,
            (await threads(boss)).find((thread) => thread.subject.title === 'Outage'),
        );
        expect((await threads(boss)).map((thread) => thread.subject.title)).to.equal(['Feature']);
        const all = await threads(boss, '?all=true');
        expect(all.length).to.equal(2);
        expect(Date.parse(all[0]?.updated_at ?? '')).to.be.at.least(Date.parse(all[1]?.updated_at ?? ''));
        const knex = context.database.knex;
        const org = await knex('users').where({ lower_name: 'filter' }).first('id');
        const openSource = await knex('repositories').where({ owner_id: org.id, lower_name: 'open-source' }).first('id');
        await knex('issues').where({ repo_id: openSource.id, index: 1 }).update({ is_pull: true });
        await knex('notifications')
            .whereIn('issue_id', knex('issues').where({ repo_id: openSource.id }).select('id'))
            .update({ source: 2 });
        const pulls = await threads(boss, '?all=true&subject-type=pull');
        expect(pulls.map((thread) => thread.subject.type)).to.equal(['Pull']);
        expect(pulls[0]?.subject.html_url).to.equal('http://127.0.0.1:3000/filter/open-source/pulls/1');
        expect((await threads(boss, '?all=true&subject-type=issue&subject-type=pull')).length).to.equal(2);
        expect(await threads(boss, '?all=true&since=2999-01-01T00:00:00Z')).to.equal([]);
        expect((await threads(boss, '?all=true&before=2999-01-01T00:00:00Z')).length).to.equal(2);
        expect((await threads(boss, '?status-types=bogus')).length).to.equal(2);
        const page = await request('GET', '/notifications?all=true&limit=1&page=2', boss.headers);
        expect((page.result as Thread[])[0]?.id).to.equal(all[1]?.id);
        expect(page.headers['x-total-count']).to.equal('2');
        expect(page.headers.link).to.contain('rel="prev"');
        expect((await request('GET', '/notifications?since=yesterday', boss.headers)).statusCode).to.equal(422);
    });

    it("answers a malformed time with Go's time.Parse error: 422 on the list, 400 on PUT, as Gitea does", async () => {
        const { boss, alice } = await makeCrew('clock');
        await openIssue('clock/tracker', alice, { title: 'Outage' });
        const list = await request('GET', '/notifications?since=yesterday', boss.headers);
        expect(list.statusCode).to.equal(422);
        expect((list.result as { message: string }).message).to.equal(
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        );
        // `before` is read first.
        const both = await request('GET', '/notifications?since=2024-13-01T00:00:00Z&before=2024-01-01T00:00:00', boss.headers);
        expect((both.result as { message: string }).message).to.equal(
            'parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
        );
        const month = await request('GET', '/notifications?since=2024-13-01T00:00:00Z', boss.headers);
        expect((month.result as { message: string }).message).to.equal('parsing time "2024-13-01T00:00:00Z": month out of range');
        const put = await request('PUT', '/notifications?last_read_at=2024-02-30T10:00:00%2B02:00', boss.headers);
        expect(put.statusCode).to.equal(400);
        expect((put.result as { message: string }).message).to.equal('parsing time "2024-02-30T10:00:00+02:00": day out of range');
        expect(await unread(boss)).to.equal(1);
        const trimmed = await request('PUT', '/notifications?last_read_at=%202000-01-01T00:00:00Z%20&all=true', boss.headers);
        expect(trimmed.statusCode).to.equal(205);
        expect(trimmed.result).to.equal([]);
        expect(await unread(boss)).to.equal(1);
    });

    it('drops unknown subject types rather than refusing them, as Gitea does', async () => {
        const { boss, alice } = await makeCrew('typed');
        await openIssue('typed/tracker', alice, { title: 'Outage' });
        const all = await threads(boss, '?all=true');
        expect(all.length).to.equal(1);
        const response = await request('GET', '/notifications?all=true&subject-type=bogus', boss.headers);
        expect(response.statusCode).to.equal(200);
        expect((response.result as Thread[]).length).to.equal(all.length);
        expect((await threads(boss, '?all=true&subject-type=bogus&subject-type=commit')).length).to.equal(0);
    });

    it('PUT honours status-types, to-status and last_read_at', async () => {
        const { boss, alice } = await makeCrew('bulk');
        await openIssue('bulk/tracker', alice, { title: 'Outage' });
        await openIssue('bulk/open-source', alice, { title: 'Feature' });
        // One thread read, one unread.
        await markRead(
            boss,
            (await threads(boss)).find((thread) => thread.subject.title === 'Outage'),
        );
        expect(await unread(boss)).to.equal(1);
        const past = await request('PUT', '/notifications?all=true&last_read_at=2000-01-01T00:00:00Z', boss.headers);
        expect(past.statusCode).to.equal(205);
        expect(past.result).to.equal([]);
        const back = await request('PUT', '/notifications?status-types=read&to-status=unread', boss.headers);
        expect((back.result as Thread[]).map((thread) => [thread.subject.title, thread.unread])).to.equal([['Outage', true]]);
        expect(await unread(boss)).to.equal(2);
        const pin = await request('PUT', '/notifications?to-status=pinned', boss.headers);
        expect((pin.result as Thread[]).length).to.equal(2);
        expect((pin.result as Thread[]).every((thread) => thread.pinned)).to.be.true();
        expect(await unread(boss)).to.equal(0);
        expect((await threads(boss)).length).to.equal(2);
    });

    it('needs a signed-in caller (401) whose token has the notification scope (403)', async () => {
        expect((await request('GET', '/notifications', undefined)).statusCode).to.equal(401);
        const noScope = await createTestUser(context.server, { name: 'nonotes', scopes: ['read:user'] });
        expect((await request('GET', '/notifications/new', noScope.headers)).statusCode).to.equal(403);
        const readOnly = await createTestUser(context.server, { name: 'readnotes', scopes: ['read:notification'] });
        expect((await request('GET', '/notifications', readOnly.headers)).statusCode).to.equal(200);
        expect((await request('PUT', '/notifications', readOnly.headers)).statusCode).to.equal(403);
    });

    it('works through the gitea-js client', async () => {
        const { alice, bob } = await makeCrew('client');
        await context.server.start();
        const api = giteaClient(context.server, bob);
        await request('POST', '/repos/client/tracker/issues', alice.headers, { title: 'For gitea-js' });
        const list = await api.notifications.notifyGetList();
        expect(list.status).to.equal(200);
        const id = list.data.find((thread) => thread.subject?.title === 'For gitea-js')?.id as number;
        expect(id).to.be.a.number();
        expect((await api.notifications.notifyNewAvailable()).data.new ?? 0).to.be.at.least(1);
        expect((await api.notifications.notifyGetThread(String(id))).data.subject?.title).to.equal('For gitea-js');
        expect((await api.notifications.notifyReadThread(String(id), { 'to-status': 'read' })).status).to.equal(205);
        const marked = await api.notifications.notifyReadList({ 'to-status': 'read' });
        expect(marked.status).to.equal(205);
        expect((await api.notifications.notifyNewAvailable()).data.new).to.equal(0);
    });
});

describe("notifications: threads follow the repository's visibility to their user", () => {
    let context: TestServer;
    let admin: TestUser;
    let boss: TestUser;
    let dave: TestUser;

    const request = async (method: string, url: string, user: TestUser, payload?: object) =>
        await context.server.inject({ method, url: `/api/v1${url}`, headers: user.headers, payload });
    const threads = async (user: TestUser) => (await request('GET', '/notifications?all=true', user)).result as Thread[];
    const unread = async (user: TestUser) => ((await request('GET', '/notifications/new', user)).result as { new: number }).new;
    const setVisibility = async (visibility: string) =>
        expect((await request('PATCH', '/orgs/nvis', boss, { visibility })).statusCode).to.equal(200);

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'nvadmin', admin: true });
        boss = await createTestUser(context.server, { name: 'nvboss' });
        dave = await createTestUser(context.server, { name: 'nvdave' });
        expect((await request('POST', '/orgs', boss, { username: 'nvis' })).statusCode).to.equal(201);
        expect((await request('POST', '/org/nvis/repos', boss, { name: 'lib' })).statusCode).to.equal(201);
        expect((await request('POST', '/repos/nvis/lib/issues', boss, { title: 'Crash' })).statusCode).to.equal(201);
        expect((await request('POST', '/repos/nvis/lib/issues/1/comments', dave, { body: 'Here too' })).statusCode).to.equal(201);
        expect((await request('POST', '/repos/nvis/lib/issues/1/comments', boss, { body: 'Looking' })).statusCode).to.equal(201);
    });

    after(async () => {
        await context.cleanup();
    });

    it('hides the threads of a repository whose owner became private: list, count, thread (404) and PUT', async () => {
        await setVisibility('public');
        const [thread] = await threads(dave);
        expect(thread?.repository.full_name).to.equal('nvis/lib');
        await setVisibility('private');
        const list = await request('GET', '/notifications?all=true', dave);
        expect(list.result).to.equal([]);
        expect(list.headers['x-total-count']).to.equal('0');
        expect(await unread(dave)).to.equal(0);
        const hidden = await request('GET', `/notifications/threads/${thread?.id}`, dave);
        expect(hidden.statusCode).to.equal(404);
        expect((hidden.result as { message: string }).message).to.equal(`notification does not exist [id: ${thread?.id}]`);
        expect((await request('PATCH', `/notifications/threads/${thread?.id}`, dave)).statusCode).to.equal(404);
        const marked = await request('PUT', '/notifications?status-types=unread&status-types=read&to-status=pinned', dave);
        expect(marked.statusCode).to.equal(205);
        expect(marked.result).to.equal([]);
        expect((await request('GET', `/notifications/threads/${thread?.id}`, admin)).statusCode).to.equal(200);
        await setVisibility('limited');
        const [shown] = await threads(dave);
        expect(shown).to.include({ id: thread?.id as number, pinned: false });
        await setVisibility('public');
    });

    it('tells a participant nothing of activity in a repository they can no longer see', async () => {
        await setVisibility('public');
        await request('PUT', '/notifications?all=true', dave);
        expect(await unread(dave)).to.equal(0);
        await setVisibility('private');
        expect((await request('POST', '/repos/nvis/lib/issues/1/comments', boss, { body: 'Fixed in secret' })).statusCode).to.equal(201);
        await setVisibility('public');
        expect(await unread(dave)).to.equal(0);
        expect((await request('POST', '/repos/nvis/lib/issues/1/comments', boss, { body: 'Fixed' })).statusCode).to.equal(201);
        expect(await unread(dave)).to.equal(1);
    });

    it('shows the threads again once their user joins the private organisation (no stale cached page)', async () => {
        await setVisibility('private');
        expect(await threads(dave)).to.equal([]);
        const knex = context.database.knex;
        const org = await knex('users').where({ lower_name: 'nvis' }).first('id');
        const [teamId] = await knex('teams').insert({ org_id: org.id, lower_name: 'helpers', name: 'Helpers', authorize: 'read' });
        await knex('org_users').insert({ org_id: org.id, uid: dave.user.id, is_public: false });
        await knex('team_users').insert({ org_id: org.id, team_id: teamId, uid: dave.user.id });
        expect((await threads(dave)).map((thread) => thread.repository.full_name)).to.equal(['nvis/lib']);
        await knex('team_users').where({ team_id: teamId }).delete();
        await knex('org_users').where({ org_id: org.id, uid: dave.user.id }).delete();
        await knex('teams').where({ id: teamId }).delete();
        expect(await threads(dave)).to.equal([]);
        await setVisibility('public');
    });
});
