// needs: docker, chromium
import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser, BrowserResponse } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../../../../support/authentik/index.ts';
import { launchChromium } from '../../../../support/chromium.ts';
import { buildTestImage, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
/** A name of its own on the shared Docker engine, for the test of a draft's groups. */
const LEDGER = `ledger-${Crypto.randomBytes(3).toString('hex')}`;
const REFUSED = `refused-${Crypto.randomBytes(3).toString('hex')}`;
/** The app deployed without a provider, and the app deleted with its access: each its own test's. */
const OPEN = `open-${Crypto.randomBytes(3).toString('hex')}`;
const DIARY = `diary-${Crypto.randomBytes(3).toString('hex')}`;
/** ghost last: its container publishes the port after its own (upstreamPortShift), which no app of the file is given. */
const APPS = ['journal', 'board', LEDGER, REFUSED, OPEN, DIARY, 'ghost'];

interface AccessBody {
    app: { draft: { adminUser?: string; auth?: unknown }; access: { groups: unknown[]; mode: string } };
}

/** Prints who nginx says the visitor is, and what a visitor-sent identity header became. */
const WHO_SCRIPT = [
    '#!/bin/sh',
    'echo "Content-Type: text/plain"',
    'echo ""',
    'echo "user=$HTTP_X_AUTHENTIK_USERNAME"',
    'echo "groups=$HTTP_X_AUTHENTIK_GROUPS"',
    'echo "remote=$HTTP_REMOTE_USER"',
    '',
].join('\n');

describe('deploy manager: authentik in front of every app, for real through nginx', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let httpsPort: number;
    let image: string;
    let adminToken: string;
    const groups: Record<string, string> = {};

    const appUrl = (name: string, path = '/') => `https://${name}.${BASE_DOMAIN}:${httpsPort}${path}`;

    const run = async (method: 'post' | 'delete', path: string, payload: unknown) =>
        await runToEnd(admin, await admin[method](path, payload));

    const createApp = async (name: string, upstreamPortShift = 0) => {
        const created = await admin.post('/api/apps', { name, image: image.replace(/:1$/, ''), tag: '1' });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort + upstreamPortShift;
        const compose = ['services:', '  web:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n');
        const saved = await admin.put(`/api/apps/${name}/draft`, { compose });
        expect(saved.status, saved.text).to.equal(200);
    };

    const signIn = signInThroughProvider;

    /** The provider connected (again), as the tests behind authentik need it. */
    const haveConnection = async () => {
        const connected = await admin.put('/api/admin/idp', { url: authentik.url, token: adminToken });
        expect(connected.status, connected.text).to.equal(200);
    };

    /** No provider, as on a server that never connected one: what an earlier test connected is forgotten. */
    const haveNoConnection = async () => {
        await server.context.server.app.knex('instance_settings').where('name', 'like', 'idp.%').delete();
    };

    const outpostProviders = () =>
        (authentik.state.outposts.find((outpost) => outpost.managed === 'goauthentik.io/outposts/embedded')?.providers as
            number[] | undefined) ?? [];
    type RunEnd = Awaited<ReturnType<typeof run>>;
    type Providers = unknown[];
    const providerNamed = (name: string) => authentik.state.providers.find((provider) => provider.name === name);
    const bindingsOf = (slug: string) => {
        const application = authentik.state.applications.find((candidate) => candidate.slug === slug);
        return authentik.state.bindings.filter((binding) => binding.target === application?.pk).map((binding) => binding.group);
    };

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        // What a killed run of this file left under the same names goes first.
        await removeProjects(APPS);
        httpsPort = Number(services.exports.NGINX_HTTPS_PORT);
        image = buildTestImage(
            `${services.exports.REGISTRY_URL}/gatehouse-test/guarded:1`,
            {
                files: { '/www/index.html': '<h1>guarded app</h1>\n', '/www/cgi-bin/who': WHO_SCRIPT },
                lines: [
                    'RUN ["/bin/chmod", "755", "/www/cgi-bin/who"]',
                    'EXPOSE 80',
                    'CMD ["httpd", "-f", "-v", "-p", "80", "-h", "/www"]',
                ],
            },
            true,
        );
        authentik = await startAuthentikStandIn();
        groups.readers = authentik.addGroup('journal-readers');
        groups.team = authentik.addGroup('board-team');
        authentik.addUser({ username: 'reader', password: 'reader-password', email: 'reader@example.com', groups: ['journal-readers'] });
        authentik.addUser({ username: 'member', password: 'member-password', email: 'member@example.com', groups: ['board-team'] });
        authentik.addUser({ username: 'operator', password: 'operator-password', isSuperuser: true });
        adminToken = authentik.addToken({ username: 'operator', identifier: 'operator-api' });
        const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
        server = await deployTestServer({ ...withoutAcme, BASE_DOMAIN, APPS_FIRST_HOST_PORT: String(await appHostPorts()) });
        admin = server.admin;
        for (const name of APPS) {
            await createApp(name, name === 'ghost' ? 1 : 0);
        }
    });

    /**
     * journal deployed behind the provider for journal-readers, by the first test that needs it. The tests that change
     * its access put it back; the delete test deletes an app of its own.
     */
    let journalDeploy:
        Promise<{ access: BrowserResponse; deployed: RunEnd; outpostBefore: Providers; outpostAfter: Providers }> | undefined;
    const haveJournal = async () => {
        const made = await (journalDeploy ??= (async () => {
            await haveConnection();
            const access = await admin.put('/api/apps/journal/access', { groups: [{ pk: groups.readers, name: 'journal-readers' }] });
            const outpostBefore = outpostProviders();
            const deployed = await run('post', '/api/apps/journal/deploy', {});
            return { access, deployed, outpostBefore, outpostAfter: outpostProviders() };
        })());
        // Connected again if a test has forgotten the provider since.
        await haveConnection();
        return made;
    };

    /**
     * board deployed public while no provider is connected, then, with the provider connected, refused until its
     * draft says signed-in and deployed behind the provider: made by the first test that needs board behind it.
     */
    let boardDeploys: Promise<{ refused: BrowserResponse; first: RunEnd; outpostBefore: Providers; outpostAfter: Providers }> | undefined;
    const haveBoard = async () => {
        const made = await (boardDeploys ??= (async () => {
            await haveNoConnection();
            const open = await admin.put('/api/apps/board/draft', { auth: { access: 'public' } });
            expect(open.status, open.text).to.equal(200);
            const asPublic = await run('post', '/api/apps/board/deploy', {});
            expect(asPublic.state, JSON.stringify(asPublic.lines)).to.equal('succeeded');
            await haveConnection();
            const refused = await admin.post('/api/apps/board/deploy', {});
            const said = await admin.put('/api/apps/board/draft', { auth: { access: 'signed-in' } });
            expect(said.status, said.text).to.equal(200);
            const outpostBefore = outpostProviders();
            const first = await run('post', '/api/apps/board/deploy', {});
            return { refused, first, outpostBefore, outpostAfter: outpostProviders() };
        })());
        await haveConnection();
        return made;
    };

    after(async () => {
        await removeProjects(APPS, image ? [image] : []);
        await server?.context.cleanup();
        await authentik?.close();
        services?.stop();
    });

    it('without a connected provider, refuses the deploy until the draft says public, then deploys it as public and says so', async () => {
        await haveNoConnection();
        const refused = await admin.post(`/api/apps/${OPEN}/deploy`, {});
        expect(refused.status, refused.text).to.equal(422);
        expect((refused.body as { error: string }).error).to.contain('no identity provider is connected');
        expect((refused.body as { error: string }).error).to.contain('auth.access: public');
        expect(await server.context.server.app.knex('dp_runs').where({ app_name: OPEN }).select('id')).to.equal([]);

        const said = await admin.put(`/api/apps/${OPEN}/draft`, { auth: { access: 'public' } });
        expect(said.status, said.text).to.equal(200);
        const deployed = await run('post', `/api/apps/${OPEN}/deploy`, {});
        expect(deployed.state, JSON.stringify(deployed.lines)).to.equal('succeeded');
        expect(
            deployed.lines.some(
                (line) =>
                    line.step === 'access' &&
                    line.level === 'warning' &&
                    line.text === 'No identity provider is connected: the app is public, anyone who reaches its domain gets in',
            ),
        ).to.be.true();
        const app = (await admin.get(`/api/apps/${OPEN}`)).body as { app: { access: { mode: string } } };
        expect(app.app.access.mode).to.equal('public');
        const open = await new Visitor(BASE_DOMAIN).request('GET', appUrl(OPEN));
        expect(open.status).to.equal(200);
        expect(open.body).to.contain('guarded app');
    });

    it('deploys behind authentik: forward_single provider, application, group binding, outpost entry, and the sign-in checked', async () => {
        const connected = await admin.put('/api/admin/idp', { url: authentik.url, token: adminToken });
        expect(connected.status, connected.text).to.equal(200);
        const { access, deployed, outpostBefore, outpostAfter } = await haveJournal();
        expect(access.status, access.text).to.equal(200);
        expect((access.body as { access: { applied: boolean } }).access.applied).to.be.false();

        expect(deployed.state, JSON.stringify(deployed.lines)).to.equal('succeeded');
        const check = deployed.lines.find((line) => line.step === 'sign-in');
        expect(check?.level).to.equal('info');
        expect(check?.text ?? '').to.startWith('Checking the sign-in: an anonymous request to');

        const provider = providerNamed('dp-journal');
        expect(provider).to.include({ mode: 'forward_single', external_host: `https://journal.${BASE_DOMAIN}:${httpsPort}` });
        const application = authentik.state.applications.find((candidate) => candidate.slug === 'dp-journal');
        expect(application).to.include({ provider: provider?.pk, meta_launch_url: `${appUrl('journal')}` });
        expect(bindingsOf('dp-journal')).to.equal([groups.readers]);
        // The deploy added journal's provider to the outpost, and nothing else.
        expect(outpostAfter).to.equal([...outpostBefore, provider?.pk]);
        expect(outpostProviders()).to.include(provider?.pk as number);
        const shown = (await admin.get('/api/apps/journal')).body as { app: { access: unknown } };
        expect(shown.app.access).to.equal({ groups: [{ pk: groups.readers, name: 'journal-readers' }], mode: 'groups' });
    });

    it('a re-deploy puts a public app behind the provider, and a second re-deploy changes nothing at the provider', async () => {
        // Now that a provider is connected, no group lets every user in: the draft must say so.
        const { refused, first, outpostBefore, outpostAfter } = await haveBoard();
        expect(refused.status, refused.text).to.equal(422);
        expect((refused.body as { error: string }).error).to.contain('auth.access: signed-in');
        expect(first.state, JSON.stringify(first.lines)).to.equal('succeeded');
        const board = providerNamed('dp-board');
        expect(outpostAfter).to.equal([...outpostBefore, board?.pk]);
        expect(bindingsOf('dp-board')).to.equal([]);
        expect(((await admin.get('/api/apps/board')).body as { app: { access: { mode: string } } }).app.access.mode).to.equal('signed-in');

        await haveJournal();
        const before = JSON.stringify(authentik.state);
        const again = await run('post', '/api/apps/journal/deploy', {});
        expect(again.state, JSON.stringify(again.lines)).to.equal('succeeded');
        const after = authentik.state;
        expect(after.providers.filter((provider) => provider.name === 'dp-journal')).to.have.length(1);
        expect(after.applications.filter((candidate) => candidate.slug === 'dp-journal')).to.have.length(1);
        expect(bindingsOf('dp-journal')).to.equal([groups.readers]);
        expect(JSON.stringify(after)).to.equal(before);
    });

    it('sends a visitor without a session to sign in, lets a member of the group through, and refuses another group', async () => {
        await haveJournal();
        await haveBoard();
        for (const name of ['journal', 'board']) {
            const anonymous = await new Visitor(BASE_DOMAIN).request('GET', appUrl(name));
            expect(anonymous.status).to.equal(302);
            expect(anonymous.location ?? '').to.startWith(appUrl(name, '/outpost.goauthentik.io/start?rd='));
        }

        const reader = new Visitor(BASE_DOMAIN);
        const hops = await signIn(reader, appUrl('journal'), 'reader', 'reader-password');
        expect(last(hops).status, last(hops).body).to.equal(200);
        expect(last(hops).body).to.contain('guarded app');
        // The visitor's own identity header does not reach the app; the provider's does.
        const who = await reader.request('GET', appUrl('journal', '/cgi-bin/who'), undefined, {
            'Remote-User': 'someone-else',
            'X-authentik-username': 'someone-else',
        });
        expect(who.body).to.contain('user=reader');
        expect(who.body).to.contain('groups=journal-readers');
        expect(who.body).to.contain('remote=\n');
        expect(who.body).to.not.contain('someone-else');

        const member = new Visitor(BASE_DOMAIN);
        const refused = await signIn(member, appUrl('journal'), 'member', 'member-password');
        expect(last(refused).status).to.equal(403);
        expect(last(refused).body).to.contain('Permission denied');
        expect((await member.request('GET', appUrl('journal'))).status).to.equal(302);
        // board binds no group: every signed-in user passes, and the provider's session spares a second password.
        const onBoard = await member.follow(appUrl('board'));
        expect(last(onBoard).status).to.equal(200);
        expect(last(onBoard).body).to.contain('guarded app');
    });

    it('a change of access applies at once to new sign-ins, and is audited', async () => {
        await haveJournal();
        try {
            const changed = await admin.put('/api/apps/journal/access', { groups: [{ pk: groups.team, name: 'board-team' }] });
            expect(changed.status, changed.text).to.equal(200);
            expect(changed.body).to.equal({ access: { groups: [{ pk: groups.team, name: 'board-team' }], mode: 'groups', applied: true } });
            expect(bindingsOf('dp-journal')).to.equal([groups.team]);

            const member = await signIn(new Visitor(BASE_DOMAIN), appUrl('journal'), 'member', 'member-password');
            expect(last(member).status).to.equal(200);
            const reader = await signIn(new Visitor(BASE_DOMAIN), appUrl('journal'), 'reader', 'reader-password');
            expect(last(reader).status).to.equal(403);

            const audit = await admin.get('/api/admin/audit?action=apps.access');
            expect(audit.text).to.contain('board-team');
        } finally {
            // journal's readers back, which the other tests of journal find.
            const restored = await admin.put('/api/apps/journal/access', { groups: [{ pk: groups.readers, name: 'journal-readers' }] });
            expect(restored.status, restored.text).to.equal(200);
        }
    });

    it('an access change that cannot be verified through nginx is undone, and the answer says why', async () => {
        await haveJournal();
        // With no provider on the outpost, it knows no app host: the sign-in cannot start.
        const embedded = authentik.state.outposts.find((outpost) => outpost.managed === 'goauthentik.io/outposts/embedded');
        const saved = [...((embedded?.providers as number[] | undefined) ?? [])];
        const patch = (providers: number[]) =>
            fetch(`${authentik.url}/api/v3/outposts/instances/${embedded?.pk}/`, {
                method: 'PATCH',
                headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
                body: JSON.stringify({ providers }),
            });
        expect((await patch([])).status).to.equal(200);
        try {
            const refused = await admin.put('/api/apps/journal/access', { groups: [] });
            expect(refused.status, refused.text).to.equal(422);
            expect(refused.text).to.contain('could not be verified');
            expect(bindingsOf('dp-journal')).to.equal([groups.readers]);
            expect(
                ((await admin.get('/api/apps/journal')).body as { app: { access: { groups: unknown[] } } }).app.access.groups,
            ).to.have.length(1);
        } finally {
            expect((await patch(saved)).status).to.equal(200);
        }
    });

    it('a deploy whose outpost update authentik refuses is rolled back, leaving nothing of the app at the provider', async () => {
        expect((await admin.put('/api/admin/idp', { url: authentik.url, token: adminToken })).status).to.equal(200);
        const access = await admin.put(`/api/apps/${REFUSED}/access`, { groups: [{ pk: groups.readers, name: 'journal-readers' }] });
        expect(access.status, access.text).to.equal(200);
        const outpostBefore = outpostProviders();
        authentik.failures.add({ method: 'PATCH', path: /^\/outposts\/instances\//, status: 500 });

        const failed = await run('post', `/api/apps/${REFUSED}/deploy`, {});
        expect(authentik.failures.pending).to.equal(0);
        expect(failed.state, JSON.stringify(failed.lines)).to.equal('rolled back');
        expect(failed.lines.some((line) => line.level === 'error' && line.text.includes('authentik answered 500'))).to.be.true();
        expect(failed.lines.some((line) => line.text.includes(`removed dp-${REFUSED} from the identity provider`))).to.be.true();
        expect(authentik.state.providers.filter((provider) => String(provider.name).startsWith(`dp-${REFUSED}`))).to.equal([]);
        expect(authentik.state.applications.filter((candidate) => String(candidate.slug).startsWith(`dp-${REFUSED}`))).to.equal([]);
        const applicationPks = authentik.state.applications.map((candidate) => candidate.pk);
        expect(authentik.state.bindings.filter((binding) => !applicationPks.includes(binding.target))).to.equal([]);
        expect(outpostProviders()).to.equal(outpostBefore);
        const recorded = await server.context.server.app.knex('dp_app_resources').where({ app_name: REFUSED, kind: 'access' });
        expect(recorded).to.equal([]);
        expect(authentik.violations).to.equal([]);
    });

    it('a deploy that fails after making the objects removes them again with its rollback', async () => {
        await haveConnection();
        expect((await admin.put('/api/apps/ghost/draft', { auth: { access: 'signed-in' } })).status).to.equal(200);
        const outpostBefore = outpostProviders();
        const failed = await run('post', '/api/apps/ghost/deploy', {});
        expect(failed.state, JSON.stringify(failed.lines)).to.equal('rolled back');
        expect(failed.lines.some((line) => line.text.includes('removed dp-ghost from the identity provider'))).to.be.true();
        expect(providerNamed('dp-ghost')).to.not.exist();
        expect(authentik.state.applications.some((candidate) => candidate.slug === 'dp-ghost')).to.be.false();
        expect(outpostProviders()).to.equal(outpostBefore);
        const recorded = await server.context.server.app.knex('dp_app_resources').where({ app_name: 'ghost' }).select('kind');
        expect(recorded).to.equal([]);
    });

    it('in a real browser: the sign-in page of the provider, then the app', async () => {
        await haveBoard();
        await haveJournal();
        const chromium = await launchChromium({ loopbackDomain: BASE_DOMAIN });
        try {
            const page = await chromium.context.newPage();
            await page.goto(appUrl('board'));
            // member is in board-team, not in journal-readers: board lets every signed-in user in, journal does not.
            await page.getByLabel('Username').fill('member');
            await page.getByLabel('Password').fill('member-password');
            await Promise.all([page.waitForURL(appUrl('board')), page.getByRole('button').click()]);
            expect(await page.locator('h1').textContent()).to.equal('guarded app');
            await page.goto(appUrl('journal'));
            expect(await page.textContent('body')).to.contain('Permission denied');
        } finally {
            await chromium.close();
        }
    });

    it("deleting with removeAccess removes exactly the app's objects; the other app keeps its own", async () => {
        // An app of its own behind the provider, bound to board-team, so that the other tests keep journal.
        await haveConnection();
        const access = await admin.put(`/api/apps/${DIARY}/access`, { groups: [{ pk: groups.team, name: 'board-team' }] });
        expect(access.status, access.text).to.equal(200);
        const deployed = await run('post', `/api/apps/${DIARY}/deploy`, {});
        expect(deployed.state, JSON.stringify(deployed.lines)).to.equal('succeeded');
        const provider = providerNamed(`dp-${DIARY}`);
        const application = authentik.state.applications.find((candidate) => candidate.slug === `dp-${DIARY}`);
        expect(bindingsOf(`dp-${DIARY}`)).to.equal([groups.team]);
        const applicationsBefore = authentik.state.applications.map((candidate) => candidate.slug);
        const outpostBefore = outpostProviders();
        const bindingsBefore = [...authentik.state.bindings];

        const deleted = await run('delete', `/api/apps/${DIARY}`, { confirm: DIARY, removeAccess: true });
        expect(deleted.state, JSON.stringify(deleted.lines)).to.equal('succeeded');
        expect(deleted.lines.some((line) => line.step === 'access' && line.text.includes(`removed application dp-${DIARY}`))).to.be.true();
        expect(providerNamed(`dp-${DIARY}`)).to.not.exist();
        expect(authentik.state.applications.map((candidate) => candidate.slug)).to.equal(
            applicationsBefore.filter((slug) => slug !== `dp-${DIARY}`),
        );
        expect(outpostProviders()).to.equal(outpostBefore.filter((pk) => pk !== provider?.pk));
        expect(authentik.state.bindings).to.equal(bindingsBefore.filter((binding) => binding.target !== application?.pk));
        expect(authentik.violations).to.equal([]);
    });
    it("a draft's auth.groups are its access: checked at the provider, bound by the deploy, then refused changed once deployed", async () => {
        const appAccess = async () => ((await admin.get(`/api/apps/${LEDGER}`)).body as AccessBody).app;
        const connected = await admin.put('/api/admin/idp', { url: authentik.url, token: adminToken });
        expect(connected.status, connected.text).to.equal(200);
        const unknown = await admin.put(`/api/apps/${LEDGER}/draft`, {
            adminUser: 'reader',
            auth: { groups: [{ pk: 'no-such-group', name: 'ghosts' }] },
        });
        expect(unknown.status, unknown.text).to.equal(422);
        expect(unknown.text).to.contain('no-such-group');
        const untouched = await appAccess();
        expect(untouched.draft.adminUser).to.not.exist();
        expect(untouched.draft.auth).to.not.exist();
        expect(untouched.access.groups).to.equal([]);

        const both = [
            { pk: groups.readers, name: 'journal-readers' },
            { pk: groups.team, name: 'board-team' },
        ];
        const saved = await admin.put(`/api/apps/${LEDGER}/draft`, {
            auth: { groups: [{ pk: groups.readers, name: 'renamed' }, both[1]] },
        });
        expect(saved.status, saved.text).to.equal(200);
        const draft = await appAccess();
        expect(draft.draft.auth).to.equal({ groups: both });
        expect(draft.access).to.equal({ groups: both, mode: 'groups' });

        const deployed = await run('post', `/api/apps/${LEDGER}/deploy`, {});
        expect(deployed.state, JSON.stringify(deployed.lines)).to.equal('succeeded');
        expect(bindingsOf(`dp-${LEDGER}`).sort()).to.equal([groups.readers, groups.team].sort());

        const changed = await admin.put(`/api/apps/${LEDGER}/draft`, { auth: { groups: [both[1]] } });
        expect(changed.status, changed.text).to.equal(409);
        expect(changed.text).to.contain('/access');
        expect((await appAccess()).access.groups).to.equal(both);
        expect(bindingsOf(`dp-${LEDGER}`)).to.have.length(2);
        const unchanged = await admin.put(`/api/apps/${LEDGER}/draft`, { auth: { groups: both }, adminUser: 'reader' });
        expect(unchanged.status, unchanged.text).to.equal(200);
        expect((await appAccess()).draft.adminUser).to.equal('reader');
    });
});
