import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, freePort } from '../../../../helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../../../../support/authentik/index.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface IdpView {
    connected: boolean;
    kind: string;
    url: string | null;
    outpostUrl: string | null;
    outpost: { pk: string; name: string } | null;
    authorizationFlow: { pk: string; slug: string } | null;
    invalidationFlow: { pk: string; slug: string } | null;
    signingKey: { pk: string; name: string } | null;
    tokenSet: boolean;
    version: string | null;
    health: { status: string; message: string };
}

/** A loopback HTTP server that answers every request with `answer(path)` as JSON, and keeps the requests it got. */
async function jsonListener(answer: (path: string) => unknown) {
    const requests: Array<{ path: string; authorization: string | undefined }> = [];
    const listener = Http.createServer((request, response) => {
        const path = new URL(request.url ?? '/', 'http://listener.invalid').pathname;
        requests.push({ path, authorization: request.headers.authorization });
        request.resume();
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(path)));
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}`,
        requests,
        close: () => {
            listener.closeAllConnections();
            return new Promise((resolve) => listener.close(resolve));
        },
    };
}

const ME = { user: { pk: 1, username: 'akadmin', is_superuser: true } };
const VERSION = { version_current: '2026.8.3' };
const page = (results: unknown[]) => ({ pagination: { next: 0 }, results });

describe('deploy manager: connecting the identity provider (authentik)', { timeout: 60_000 }, () => {
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let adminToken: string;
    let plainUserToken: string;

    const view = async () => (await admin.get('/api/admin/idp')).body as IdpView;
    const storedSettings = async () =>
        (await server.context.server.app.knex('instance_settings').where('name', 'like', 'idp.%').select('name', 'value')) as Array<{
            name: string;
            value: string;
        }>;

    before(async () => {
        authentik = await startAuthentikStandIn();
        authentik.addUser({ username: 'operator', password: 'operator-password', isSuperuser: true });
        authentik.addUser({ username: 'plain', password: 'plain-password' });
        adminToken = authentik.addToken({ username: 'operator', identifier: 'operator-api' });
        plainUserToken = authentik.addToken({ username: 'plain', identifier: 'plain-api' });
        // addUser makes the group wiki-editors too.
        authentik.addUser({
            username: 'alice',
            password: 'alice-password',
            name: 'Alice',
            email: 'alice@example.com',
            groups: ['wiki-editors'],
        });
        // The group the access test gives its own app: wiki-editors opens no app in the directory test.
        authentik.addGroup('notes-editors');
        server = await deployTestServer();
        admin = server.admin;
    });

    /** The connection and the draft app the directory tests use, made by the first test that needs them: each passes alone. */
    const haveConnection = async () => {
        if (!(await view()).connected) {
            const connected = await admin.put('/api/admin/idp', { url: authentik.url, token: adminToken });
            expect(connected.status, connected.text).to.equal(200);
        }
    };
    /** No provider, as on a server that never connected one: what an earlier test connected is forgotten. */
    const haveNoConnection = async () => {
        await server.context.server.app.knex('instance_settings').where('name', 'like', 'idp.%').delete();
        expect(await storedSettings()).to.equal([]);
    };
    const haveWiki = async () => {
        const created = await admin.post('/api/apps', { name: 'wiki', image: 'example/wiki' });
        expect([201, 409], created.text).to.include(created.status);
    };

    after(async () => {
        await server?.context.cleanup();
        await authentik?.close();
    });

    it('shows no provider before one is connected, and its health as not configured', async () => {
        await haveNoConnection();
        const shown = await view();
        expect(shown).to.include({ connected: false, kind: 'authentik', url: null, tokenSet: false, outpost: null });
        expect(shown.health.status).to.equal('not-configured');
        const system = await admin.get('/api/system');
        const integrations = (system.body as { integrations: { identityProvider: { configured: boolean; health: { status: string } } } })
            .integrations;
        expect(integrations.identityProvider.configured).to.be.false();
    });

    it('discover names the cause when the URL does not answer, the token is refused, or its user is no administrator', async () => {
        await haveNoConnection();
        const closed = `http://127.0.0.1:${await freePort()}`;
        const unreachable = await admin.post('/api/admin/idp/discover', { url: closed, token: adminToken });
        expect(unreachable.status).to.equal(422);
        expect(unreachable.text).to.contain('could not be reached');

        const refused = await admin.post('/api/admin/idp/discover', { url: authentik.url, token: 'not-a-token' });
        expect(refused.status).to.equal(422);
        expect(refused.text).to.contain('refused the token');

        const notAdmin = await admin.post('/api/admin/idp/discover', { url: authentik.url, token: plainUserToken });
        expect(notAdmin.status).to.equal(422);
        expect(notAdmin.text).to.contain('not an authentik administrator');
        expect(notAdmin.text).to.not.contain(plainUserToken);

        const notAuthentik = await admin.post('/api/admin/idp/discover', { url: `${server.baseUrl}/api/health`, token: adminToken });
        expect(notAuthentik.status).to.equal(422);
        expect(await storedSettings()).to.equal([]);
    });

    it('discover lists the outposts, the authorization and invalidation flows and the signing keys', async () => {
        const response = await admin.post('/api/admin/idp/discover', { url: authentik.url, token: adminToken });
        expect(response.status, response.text).to.equal(200);
        const found = response.body as {
            version: string;
            outposts: Array<{ pk: string; name: string; type: string; managed: string | null }>;
            flows: { authorization: Array<{ slug: string }>; invalidation: Array<{ slug: string }> };
            signingKeys: Array<{ name: string }>;
        };
        expect(found.version).to.equal('2026.8.3');
        expect(found.outposts).to.contain({
            pk: found.outposts[0]?.pk ?? '',
            name: 'authentik Embedded Outpost',
            type: 'proxy',
            managed: 'goauthentik.io/outposts/embedded',
        });
        expect(found.flows.authorization.map((flow) => flow.slug)).to.include('default-provider-authorization-implicit-consent');
        expect(found.flows.invalidation.map((flow) => flow.slug)).to.include('default-provider-invalidation-flow');
        expect(found.signingKeys.map((key) => key.name)).to.include('authentik Self-signed Certificate');
    });

    it('PUT saves nothing when the provider does not accept the connection, and 422 names the cause', async () => {
        await haveNoConnection();
        const refused = await admin.put('/api/admin/idp', { url: authentik.url, token: 'wrong' });
        expect(refused.status).to.equal(422);
        expect(refused.text).to.contain('refused the token');
        const unknownOutpost = await admin.put('/api/admin/idp', { url: authentik.url, token: adminToken, outpost: 'no-such-outpost' });
        expect(unknownOutpost.status).to.equal(422);
        expect(unknownOutpost.text).to.contain('outpost');
        const badUrl = await admin.put('/api/admin/idp', { url: 'ftp://example', token: adminToken });
        expect(badUrl.status).to.equal(422);
        expect(await storedSettings()).to.equal([]);
        expect((await view()).connected).to.be.false();
    });

    it('PUT connects with a token, picks the embedded outpost and the default flows, and never shows the token', async () => {
        // From no connection: a saved one's choices would be kept instead of the defaults.
        await haveNoConnection();
        const response = await admin.put('/api/admin/idp', { url: `${authentik.url}/`, token: adminToken });
        expect(response.status, response.text).to.equal(200);
        expect(response.text).to.not.contain(adminToken);
        const shown = response.body as IdpView;
        expect(shown).to.include({ connected: true, url: authentik.url, outpostUrl: authentik.url, tokenSet: true, version: '2026.8.3' });
        expect(shown.outpost?.name).to.equal('authentik Embedded Outpost');
        expect(shown.authorizationFlow?.slug).to.equal('default-provider-authorization-implicit-consent');
        expect(shown.invalidationFlow?.slug).to.equal('default-provider-invalidation-flow');
        expect(shown.signingKey?.name).to.equal('authentik Self-signed Certificate');
        expect(shown.health.status).to.equal('ok');

        const stored = await storedSettings();
        expect(stored.map((row) => row.name).sort()).to.equal(['idp.connection', 'idp.token']);
        expect(JSON.stringify(stored)).to.not.contain(adminToken);

        // A later change may leave the token out: the saved one is used.
        const flows = (await admin.post('/api/admin/idp/discover', { url: authentik.url, token: adminToken })).body as {
            flows: { authorization: Array<{ pk: string; slug: string }> };
        };
        const explicit = flows.flows.authorization.find((flow) => flow.slug === 'default-provider-authorization-explicit-consent');
        const changed = await admin.put('/api/admin/idp', {
            url: authentik.url,
            authorizationFlow: explicit?.pk ?? '',
            outpostUrl: 'http://127.0.0.1:9000',
        });
        expect(changed.status, changed.text).to.equal(200);
        expect((changed.body as IdpView).authorizationFlow?.slug).to.equal('default-provider-authorization-explicit-consent');
        expect((changed.body as IdpView).outpostUrl).to.equal('http://127.0.0.1:9000');

        const system = await admin.get('/api/system');
        const provider = (system.body as { integrations: { identityProvider: { configured: boolean; health: { status: string } } } })
            .integrations.identityProvider;
        expect(provider.configured).to.be.true();
        expect(provider.health.status).to.equal('ok');
        const audit = await admin.get('/api/admin/audit?action=idp.update');
        expect(audit.text).to.contain('idp.update');
        expect(audit.text).to.not.contain(adminToken);
    });

    it('only administrators reach the connection; editors read the directory, viewers do not', async () => {
        await haveConnection();
        const editor = await server.signInAs('editor');
        expect((await editor.get('/api/admin/idp')).status).to.equal(403);
        expect((await editor.post('/api/admin/idp/bootstrap', { url: authentik.url, bootstrapToken: 'x' })).status).to.equal(403);
        expect((await editor.get('/api/idp/groups')).status).to.equal(200);
        const viewer = await server.signInAs('viewer');
        expect((await viewer.get('/api/idp/groups')).status).to.equal(403);
        expect((await viewer.get('/api/idp/users?q=op')).status).to.equal(403);
    });

    it('lists the groups with their members, suggestions for an app, and the users matching a query', async () => {
        await haveConnection();
        await haveWiki();
        const response = await admin.get('/api/idp/groups?app=wiki');
        expect(response.status, response.text).to.equal(200);
        const body = response.body as {
            groups: Array<{ pk: string; name: string; members: Array<{ username: string; email: string }>; apps: string[] }>;
            suggestions: Array<{ pk: string; name: string; reason: string }>;
        };
        const editors = body.groups.find((group) => group.name === 'wiki-editors');
        expect(editors?.members.map((member) => member.username)).to.equal(['alice']);
        expect(editors?.apps).to.equal([]);
        expect(body.suggestions[0]).to.include({ pk: editors?.pk ?? '', name: 'wiki-editors' });

        const users = await admin.get('/api/idp/users?q=alice');
        expect(users.status).to.equal(200);
        expect(users.body).to.equal([
            {
                pk: (users.body as Array<{ pk: number }>)[0]?.pk ?? 0,
                username: 'alice',
                name: 'Alice',
                email: 'alice@example.com',
                active: true,
            },
        ]);

        expect((await admin.get('/api/idp/groups?app=nope')).status).to.equal(404);
        expect((await admin.get('/api/idp/groups?unknown=1')).status).to.be.within(400, 422);
    });

    it("saves a draft app's groups for its deploy; an unknown group is a 422 that changes nothing", async () => {
        await haveConnection();
        // An app and a group of its own: the directory test expects wiki-editors to open no app.
        const created = await admin.post('/api/apps', { name: 'notes', image: 'example/notes' });
        expect(created.status, created.text).to.equal(201);
        const groups = ((await admin.get('/api/idp/groups')).body as { groups: Array<{ pk: string; name: string }> }).groups;
        const listedEditors = groups.find((group) => group.name === 'notes-editors') as { pk: string; name: string };
        const editors = { pk: listedEditors.pk, name: listedEditors.name };
        const unknown = await admin.put('/api/apps/notes/access', {
            groups: [editors, { pk: '00000000-0000-4000-8000-000000000000', name: 'ghosts' }],
        });
        expect(unknown.status).to.equal(422);
        expect(unknown.text).to.contain('ghosts');
        expect(((await admin.get('/api/apps/notes')).body as { app: { access: { groups: unknown[] } } }).app.access.groups).to.equal([]);

        const saved = await admin.put('/api/apps/notes/access', { groups: [{ pk: editors.pk, name: 'stale name' }] });
        expect(saved.status, saved.text).to.equal(200);
        expect(saved.body).to.equal({ access: { groups: [{ pk: editors.pk, name: 'notes-editors' }], mode: 'groups', applied: false } });
        const app = (await admin.get('/api/apps/notes')).body as { app: { access: { groups: unknown[]; mode: string } } };
        expect(app.app.access).to.equal({ groups: [{ pk: editors.pk, name: 'notes-editors' }], mode: 'groups' });
        const listed = (await admin.get('/api/idp/groups')).body as { groups: Array<{ name: string; apps: string[] }> };
        expect(listed.groups.find((group) => group.name === 'notes-editors')?.apps).to.equal(['notes']);
        expect((await admin.put('/api/apps/notes/access', { groups: 'all' })).status).to.equal(422);
        expect((await admin.put('/api/apps/nope/access', { groups: [] })).status).to.equal(404);
    });

    it('bootstrap keeps only a new token of its own; disconnecting revokes it at the provider', async () => {
        const response = await admin.post('/api/admin/idp/bootstrap', { url: authentik.url, bootstrapToken: authentik.bootstrapToken });
        expect(response.status, response.text).to.equal(200);
        expect(response.text).to.not.contain(authentik.bootstrapToken);
        const shown = response.body as IdpView;
        expect(shown).to.include({ connected: true, tokenSet: true });
        expect(shown.outpost?.name).to.equal('authentik Embedded Outpost');
        expect(shown.authorizationFlow?.slug).to.equal('default-provider-authorization-implicit-consent');
        expect(shown.outpostUrl).to.equal(authentik.url);
        const made = authentik.state.tokens.find((token) => token.identifier === 'gatehouse-deploy-manager');
        expect(made).to.exist();
        expect(made?.expiring).to.be.false();
        expect(JSON.stringify(await storedSettings())).to.not.contain(authentik.bootstrapToken);

        const disconnected = await admin.delete('/api/admin/idp/token');
        expect(disconnected.status, disconnected.text).to.equal(200);
        expect(disconnected.body).to.include({ connected: false, tokenSet: false, tokenRevoked: true });
        expect(authentik.state.tokens.some((token) => token.identifier === 'gatehouse-deploy-manager')).to.be.false();
        expect((await admin.get('/api/idp/groups')).status).to.equal(422);
        expect(authentik.violations).to.equal([]);
    });

    it('a changed URL without its token is a 422, and the saved token is sent nowhere', async () => {
        expect((await admin.put('/api/admin/idp', { url: authentik.url, token: adminToken })).status).to.equal(200);
        const before = await storedSettings();
        const elsewhere = await jsonListener(() => ME);
        try {
            const moved = await admin.put('/api/admin/idp', { url: elsewhere.url });
            expect(moved.status, moved.text).to.equal(422);
            expect(moved.text).to.contain('a new URL needs its token');
            expect(elsewhere.requests).to.equal([]);
            expect(await storedSettings()).to.equal(before);

            // The same URL may leave the token out; a new URL with a token of its own is tried with that token only.
            expect((await admin.put('/api/admin/idp', { url: `${authentik.url}/` })).status).to.equal(200);
            const saved = await storedSettings();
            const withToken = await admin.put('/api/admin/idp', { url: elsewhere.url, token: 'token-of-the-new-url' });
            expect(withToken.status).to.equal(422);
            expect(elsewhere.requests.length).to.be.above(0);
            expect(elsewhere.requests.every((request) => request.authorization === 'Bearer token-of-the-new-url')).to.be.true();
            expect(await storedSettings()).to.equal(saved);
        } finally {
            await elsewhere.close();
        }
    });

    it("answers that do not fit authentik's schema are a 422 naming the provider, never a 500, and save nothing", async () => {
        const before = await storedSettings();
        const offered = ['Bearer token-for-hostile', 'Bearer bootstrap-for-hostile'];
        const seen: Array<string | undefined> = [];
        const wrongShapes: unknown[] = [null, [], 'x', 42, { user: null }, { user: { username: 7, is_superuser: 'yes' } }];
        const scenes: Array<{ what: string; answer: (path: string) => unknown }> = [
            ...wrongShapes.map((shape) => ({ what: `users/me answering ${JSON.stringify(shape)}`, answer: () => shape })),
            ...[null, [], 'x', { version_current: 5 }].map((shape) => ({
                what: `the version answering ${JSON.stringify(shape)}`,
                answer: (path: string) => (path.endsWith('/users/me/') ? ME : shape),
            })),
            ...[null, [], 'x', { results: [] }, page(['x']), page([{ pk: 5 }]), page([null])].map((shape) => ({
                what: `the lists answering ${JSON.stringify(shape)}`,
                answer: (path: string) => (path.endsWith('/users/me/') ? ME : path.endsWith('/admin/version/') ? VERSION : shape),
            })),
        ];
        for (const scene of scenes) {
            const hostile = await jsonListener(scene.answer);
            try {
                const discovered = await admin.post('/api/admin/idp/discover', { url: hostile.url, token: 'token-for-hostile' });
                expect(discovered.status, `discover, ${scene.what}: ${discovered.text}`).to.equal(422);
                expect(discovered.text, scene.what).to.contain(`authentik at ${hostile.url}`);
                const connected = await admin.put('/api/admin/idp', { url: hostile.url, token: 'token-for-hostile' });
                expect(connected.status, `PUT, ${scene.what}: ${connected.text}`).to.equal(422);
                const bootstrapped = await admin.post('/api/admin/idp/bootstrap', {
                    url: hostile.url,
                    bootstrapToken: 'bootstrap-for-hostile',
                });
                expect(bootstrapped.status, `bootstrap, ${scene.what}: ${bootstrapped.text}`).to.equal(422);
                expect(bootstrapped.text, scene.what).to.contain(`authentik at ${hostile.url}`);
            } finally {
                seen.push(...hostile.requests.map((request) => request.authorization));
                await hostile.close();
            }
        }

        // A bootstrap whose new token comes back without its key keeps nothing, and never sends the saved token instead.
        for (const key of [null, '', { key: null }, { key: '' }, {}]) {
            const keyless = await jsonListener((path) => {
                if (path.endsWith('/users/me/')) return ME;
                if (path.endsWith('/admin/version/')) return VERSION;
                if (path.includes('/view_key/')) return key;
                return path.endsWith('/core/tokens/') ? page([]) : {};
            });
            try {
                const bootstrapped = await admin.post('/api/admin/idp/bootstrap', {
                    url: keyless.url,
                    bootstrapToken: 'bootstrap-for-hostile',
                });
                expect(bootstrapped.status, `key ${JSON.stringify(key)}: ${bootstrapped.text}`).to.equal(422);
                expect(bootstrapped.text).to.contain(`authentik at ${keyless.url}`);
            } finally {
                seen.push(...keyless.requests.map((request) => request.authorization));
                await keyless.close();
            }
        }

        expect(seen.length).to.be.above(0);
        expect(seen.filter((authorization) => !offered.includes(String(authorization)))).to.equal([]);
        expect(await storedSettings()).to.equal(before);
    });

    it('connects at first start from AUTHENTIK_URL and AUTHENTIK_BOOTSTRAP_TOKEN', async () => {
        const context = await createTestServer({ AUTHENTIK_URL: authentik.url, AUTHENTIK_BOOTSTRAP_TOKEN: authentik.bootstrapToken });
        try {
            const rows = await context.server.app.knex('instance_settings').where({ name: 'idp.connection' }).first('value');
            expect(JSON.parse(String(rows?.value))).to.include({
                kind: 'authentik',
                url: authentik.url,
                tokenIdentifier: 'gatehouse-deploy-manager',
            });
        } finally {
            await context.cleanup();
        }

        expect(authentik.violations).to.equal([]);
    });
});
