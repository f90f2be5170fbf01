import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Finding } from '../../../../../plugins/deploy/domain/findings/finding.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface AppBody {
    app: {
        name: string;
        domain: string;
        hostPort: number;
        state: string;
        draft: {
            compose: string;
            nginx: string;
            secrets: Record<string, string>;
            hasSharedPassword: boolean;
            account: string;
            title: string;
            step: string;
        };
    };
    identity?: { account: string };
}

/** A PUT with a JSON body written by hand: some bodies (thousands of levels deep) are more than JSON.stringify can make. */
async function putRawJson(browser: Browser, baseUrl: string, path: string, body: string): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${baseUrl}${path}`, {
        method: 'PUT',
        headers: {
            'content-type': 'application/json',
            cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
            'x-csrf-token': browser.cookies.get('dp_csrf') ?? '',
        },
        body,
    });
    return { status: response.status, body: (await response.json()) as unknown };
}

function nested(depth: number): string {
    return `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`;
}

describe('deploy manager: apps as drafts', () => {
    let server: DeployTestServer;
    let editor: Browser;
    let viewer: Browser;

    before(async () => {
        server = await deployTestServer();
        editor = await server.signInAs('editor');
        viewer = await server.signInAs('viewer');
    });

    after(async () => {
        await server.context.cleanup();
    });

    const WIKI = { name: 'wiki', image: 'ghcr.io/example/wiki', tag: '1.2.3', title: 'Team wiki' };
    const WIKI_DRAFT = {
        title: 'Wiki',
        account: 'oidc',
        adminUser: 'akadmin',
        step: 'account',
        secrets: { DB_PASSWORD: 'hunter2-hunter2' },
        sharedUser: 'shared',
        sharedPassword: 'the-shared-password',
    };
    /** The wiki app with its draft saved, made by the first test that needs it: each test also passes alone. */
    const haveWiki = async () => {
        const created = await editor.post('/api/apps', WIKI);
        expect([201, 409], created.text).to.include(created.status);
        const saved = await editor.put('/api/apps/wiki/draft', WIKI_DRAFT);
        expect(saved.status, saved.text).to.equal(200);
        return saved;
    };

    it("checks a name's availability everywhere it would be used", async () => {
        // A name no other test file deploys: the check asks the Docker engine, which files running at once share.
        const free = await editor.post('/api/apps/check', { name: 'handbook' });
        expect(free.status).to.equal(200);
        const body = free.body as { available: boolean; domain: string; checks: Record<string, { ok: boolean | null; reason: string }> };
        expect(body.domain).to.equal('handbook.localhost');
        expect(body.available).to.be.true();
        expect(Object.keys(body.checks).sort()).to.equal(['certificate', 'container', 'dns', 'folder', 'name', 'site']);
        for (const check of Object.values(body.checks)) {
            expect(check.reason).to.be.a.string();
        }

        const invalid = await editor.post('/api/apps/check', { name: '../etc' });
        expect((invalid.body as { available: boolean }).available).to.be.false();
        Fs.mkdirSync(Path.join(server.context.config.apps.appsDir, 'taken'), { recursive: true });
        const taken = await editor.post('/api/apps/check', { name: 'taken' });
        expect((taken.body as { checks: { folder: { ok: boolean } } }).checks.folder.ok).to.be.false();
    });

    it('creates a draft from an image (201) with a compose file and an nginx site of its own', async () => {
        // On a server of its own: the first app made there takes the first host port, whichever apps the other tests made here.
        const fresh = await deployTestServer();
        try {
            const own = await fresh.signInAs('editor');
            const response = await own.post('/api/apps', WIKI);
            expect(response.status, response.text).to.equal(201);
            const { app } = response.body as AppBody;
            expect(app).to.include({ name: 'wiki', domain: 'wiki.localhost', state: 'draft', url: 'https://wiki.localhost/' });
            expect(app.hostPort).to.equal(20000);
            expect(app.draft.compose).to.contain('image: ghcr.io/example/wiki:1.2.3');
            expect(app.draft.compose).to.contain(`127.0.0.1:${app.hostPort}:80`);
            expect(app.draft.nginx).to.contain('server_name wiki.localhost');
            const second = await own.post('/api/apps', { name: 'blog', image: 'nginx' });
            expect((second.body as AppBody).app.hostPort).to.equal(20001);
        } finally {
            await fresh.context.cleanup();
        }
    });

    it("gives each app the address a visitor opens, with nginx's HTTPS port when it is not 443", async () => {
        const onAPort = await deployTestServer({ NGINX_HTTPS_PORT: '8443' });
        try {
            const other = await onAPort.signInAs('editor');
            expect(((await other.post('/api/apps', { name: 'atlas', image: 'nginx' })).body as { app: { url: string } }).app.url).to.equal(
                'https://atlas.localhost:8443/',
            );
            expect(((await other.get('/api/apps/atlas')).body as { app: { url: string } }).app.url).to.equal(
                'https://atlas.localhost:8443/',
            );
            const listed = (await other.get('/api/apps')).body as { apps: Array<{ name: string; url: string }> };
            expect(listed.apps.find((item) => item.name === 'atlas')?.url).to.equal('https://atlas.localhost:8443/');
        } finally {
            await onAPort.context.cleanup();
        }
    });

    it('refuses taken (409), invalid, reserved or traversing names and a missing image (422)', async () => {
        await haveWiki();
        expect((await editor.post('/api/apps', { name: 'wiki', image: 'nginx' })).status).to.equal(409);
        for (const name of ['Wiki', 'under_score', '../x', 'api', '-dash', 'a'.repeat(64)]) {
            const response = await editor.post('/api/apps', { name, image: 'nginx' });
            expect(response.status, name).to.equal(422);
            expect(Object.keys(response.body as object)).to.equal(['error']);
        }

        expect((await editor.post('/api/apps', { name: 'noimage' })).status).to.equal(422);
        expect((await editor.post('/api/apps', { name: 'badimage', image: 'UPPER/Case:tag' })).status).to.equal(422);
        expect((await editor.post('/api/apps', { name: 'tpl', templateId: 'unknown' })).status).to.equal(422);
    });

    it('saves any subset of the draft and answers the app and its identity', async () => {
        const saved = await haveWiki();
        const body = saved.body as AppBody;
        expect(body.identity?.account).to.equal('oidc');
        expect(body.app.draft).to.include({ title: 'Wiki', account: 'oidc', step: 'account', hasSharedPassword: true });
        expect(body.app.draft.secrets).to.equal({ DB_PASSWORD: 'hunter2-hunter2' });
        expect(saved.text).to.not.contain('the-shared-password');
        const partial = await editor.put('/api/apps/wiki/draft', { step: 'review' });
        expect((partial.body as AppBody).app.draft).to.include({ title: 'Wiki', account: 'oidc', step: 'review' });
        const stored = JSON.stringify(await server.context.database.knex('dp_apps').select('*'));
        expect(stored).to.not.contain('hunter2-hunter2');
        expect(stored).to.not.contain('the-shared-password');
    });

    it('refuses a draft that does not parse, an unknown field, a bad secret name or account (422)', async () => {
        await haveWiki();
        expect((await editor.put('/api/apps/wiki/draft', { compose: 'services: [not: valid' })).status).to.equal(422);
        expect((await editor.put('/api/apps/wiki/draft', { colour: 'blue' })).status).to.equal(422);
        expect((await editor.put('/api/apps/wiki/draft', { secrets: { 'bad-name': 'x' } })).status).to.equal(422);
        expect((await editor.put('/api/apps/wiki/draft', { account: 'magic' })).status).to.equal(422);
        expect((await editor.put('/api/apps/nope/draft', { title: 'x' })).status).to.equal(404);
    });

    describe('draft bounds', () => {
        const appRow = async (name: string) => await server.context.database.knex('dp_apps').where({ name }).first();

        /** Every body is refused with a 422 in the deploy API's shape, and the app's row stays as it was. */
        const expectRefused = async (name: string, bodies: Array<object | string>) => {
            const before = await appRow(name);
            for (const body of bodies) {
                const response =
                    typeof body === 'string'
                        ? await putRawJson(editor, server.baseUrl, `/api/apps/${name}/draft`, body)
                        : await editor.put(`/api/apps/${name}/draft`, body);
                const label = typeof body === 'string' ? body.slice(0, 80) : JSON.stringify(body).slice(0, 80);
                expect(response.status, label).to.equal(422);
                expect(Object.keys(response.body as object), label).to.equal(['error']);
            }

            expect(await appRow(name)).to.equal(before);
        };

        it('refuses a draft nested thousands deep (422) and writes nothing', async () => {
            expect((await editor.post('/api/apps', { name: 'deep', image: 'nginx' })).status).to.equal(201);
            await expectRefused('deep', [
                `{"auth":{"groups":[],"x":${nested(5000)}}}`,
                `{"auth":${nested(100_000)}}`,
                `{"auth":{"groups":[{"pk":"1","name":"staff","x":${nested(5000)}}]}}`,
                `{"auth":{"groups":[${'['.repeat(5000)}${']'.repeat(5000)}]}}`,
                `{"secrets":{"A":${nested(5000)}}}`,
            ]);
        });

        it('refuses unknown keys anywhere in the draft (422) and writes nothing', async () => {
            expect((await editor.post('/api/apps', { name: 'closed', image: 'nginx' })).status).to.equal(201);
            await expectRefused('closed', [
                { colour: 'blue' },
                { auth: { groups: [], owner: 'me' } },
                { auth: { groups: [{ pk: 'a1', name: 'staff', role: 'admin' }] } },
                { auth: { groups: [{ pk: 'a1' }] } },
                { auth: { groups: ['staff'] } },
                { compose: { services: {} } },
                { step: { name: 'review' } },
            ]);
            const saved = await editor.put('/api/apps/closed/draft', { auth: { groups: [{ pk: 'a1b2', name: 'staff' }] } });
            expect(saved.status, saved.text).to.equal(200);
            expect((saved.body as { app: { draft: { auth: unknown } } }).app.draft.auth).to.equal({
                groups: [{ pk: 'a1b2', name: 'staff' }],
            });
        });

        it('refuses oversize strings, too many groups or secrets and a draft too large to store (422), writing nothing', async () => {
            expect((await editor.post('/api/apps', { name: 'sizes', image: 'nginx' })).status).to.equal(201);
            const { app } = (await editor.get('/api/apps/sizes')).body as AppBody;
            const groups = (count: number) => Array.from({ length: count }, (_, index) => ({ pk: `pk${index}`, name: `group ${index}` }));
            const secrets = (count: number, length: number) =>
                Object.fromEntries(Array.from({ length: count }, (_, index) => [`SECRET_${index}`, 'x'.repeat(length)]));
            await expectRefused('sizes', [
                { title: 't'.repeat(256) },
                { adminUser: 'a'.repeat(256) },
                { samlAcs: `https://example.com/${'a'.repeat(2048)}` },
                { samlAudience: 'a'.repeat(2049) },
                { sharedUser: 'u'.repeat(256) },
                { sharedPassword: 'p'.repeat(1025) },
                { step: 's'.repeat(65) },
                { compose: `${app.draft.compose}# ${'x'.repeat(70_000)}\n` },
                { nginx: `${app.draft.nginx}# ${'x'.repeat(70_000)}\n` },
                { auth: { groups: [{ pk: 'p'.repeat(65), name: 'staff' }] } },
                { auth: { groups: [{ pk: 'a1', name: 'n'.repeat(256) }] } },
                { auth: { groups: groups(101) } },
                { secrets: { TOKEN: 'x'.repeat(16_385) } },
                { secrets: secrets(201, 1) },
                { secrets: secrets(4, 16_000) },
                // Fewer characters than the limit, more bytes than a draft may take once stored as UTF-8.
                { compose: `${app.draft.compose}# ${'€'.repeat(30_000)}\n` },
                { compose: `${app.draft.compose}# ${'x'.repeat(40_000)}\n`, nginx: `${app.draft.nginx}# ${'x'.repeat(40_000)}\n` },
            ]);
            const largest = await editor.put('/api/apps/sizes/draft', { auth: { groups: groups(100) }, secrets: secrets(200, 200) });
            expect(largest.status, largest.text).to.equal(200);
        });

        it('refuses a SAML ACS that would open more than that one path, in the draft and for the sign-in method (422)', async () => {
            expect((await editor.post('/api/apps', { name: 'acs', image: 'nginx' })).status).to.equal(201);
            const opening = ['/', '//', '/saml/../admin', '/saml/./acs', '/saml//acs', '/saml%2Facs', '/saml acs', '/saml;acs', 'saml/acs'];
            await expectRefused(
                'acs',
                opening.map((samlAcs) => ({ samlAcs })),
            );
            for (const samlAcs of opening.filter((path) => path.startsWith('/'))) {
                const refused = await editor.post('/api/apps/acs/sso', { account: 'saml', samlAcs });
                expect(refused.status, samlAcs).to.equal(422);
                expect((refused.body as { error: string }).error, samlAcs).to.contain('samlAcs');
            }

            const saved = await editor.put('/api/apps/acs/draft', { samlAcs: '/saml2/acs/' });
            expect(saved.status, saved.text).to.equal(200);
            expect((await editor.put('/api/apps/acs/draft', { samlAcs: '' })).status).to.equal(200);
        });

        it('reads a stored draft of an odd, older shape without failing, keeping only what fits the draft', async () => {
            expect((await editor.post('/api/apps', { name: 'legacy', image: 'nginx' })).status).to.equal(201);
            const { app } = (await editor.get('/api/apps/legacy')).body as AppBody;
            const longAcs = `/saml/${'a'.repeat(3000)}`;
            const legacy = {
                title: 'Legacy',
                compose: app.draft.compose,
                samlAcs: longAcs,
                nginx: 42,
                account: 'magic',
                step: 'review',
                sharedPassword: 'legacy-shared-password',
                secrets: { OLD: 'legacy-secret-value' },
                colour: 'blue',
            };
            const stored = `${JSON.stringify(legacy).slice(0, -1)},"auth":{"groups":[{"pk":"1","name":"x","y":${nested(3000)}}]}}`;
            await server.context.database.knex('dp_apps').where({ name: 'legacy' }).update({ draft: stored });
            const read = await viewer.get('/api/apps/legacy');
            expect(read.status, read.text).to.equal(200);
            const { draft, identity } = (read.body as { app: { draft: Record<string, unknown>; identity: { account: string } } }).app;
            // Longer than a draft may be saved with now, but of the right shape: kept rather than lost.
            expect(draft).to.include({ title: 'Legacy', compose: app.draft.compose, samlAcs: longAcs, nginx: '', step: 'review' });
            expect(Object.keys(draft).sort()).to.equal(['compose', 'hasSharedPassword', 'nginx', 'samlAcs', 'secrets', 'step', 'title']);
            expect(identity.account).to.equal('');
            expect(read.text).to.not.contain('legacy-shared-password');
            expect(read.text).to.not.contain('legacy-secret-value');
            expect((await viewer.get('/api/apps')).status).to.equal(200);
            await server.context.database.knex('dp_apps').where({ name: 'legacy' }).update({ draft: '{not json' });
            expect((await viewer.get('/api/apps/legacy')).status).to.equal(200);
            const saved = await editor.put('/api/apps/legacy/draft', { title: 'Mended' });
            expect(saved.status, saved.text).to.equal(200);
            expect((saved.body as AppBody).app.draft).to.include({ title: 'Mended', compose: '', nginx: '' });
        });
    });

    it('shows secrets to editors and masks them for viewers', async () => {
        await haveWiki();
        const forEditor = await editor.get('/api/apps/wiki');
        expect((forEditor.body as AppBody).app.draft.secrets.DB_PASSWORD).to.equal('hunter2-hunter2');
        const forViewer = await viewer.get('/api/apps/wiki');
        expect((forViewer.body as AppBody).app.draft.secrets.DB_PASSWORD).to.equal('••••••••');
        expect(forViewer.text).to.not.contain('hunter2');
        const listed = await viewer.get('/api/apps');
        expect((listed.body as { apps: Array<{ name: string }> }).apps.map((app) => app.name)).to.include('wiki');
        expect(listed.text).to.not.contain('hunter2');
    });

    it('previews the plan, the files (secrets masked) and lint, and changes nothing', async () => {
        await haveWiki();
        const before = Fs.existsSync(Path.join(server.context.config.apps.appsDir, 'wiki'));
        const response = await editor.post('/api/apps/wiki/preview');
        expect(response.status, response.text).to.equal(200);
        const body = response.body as {
            plan: {
                files: Array<{ kind: string; action: string }>;
                containers: Array<Record<string, unknown>>;
                site: { action: string };
                certificate: { action: string };
            };
            files: Array<{ kind: string; content: string; masked: boolean }>;
            lint: Array<{ level: string; message: string }>;
            availability: { name: string; checks: { name: { ok: boolean; reason: string } } };
        };
        expect(body.plan.files.map((file) => `${file.kind}:${file.action}`)).to.equal(['compose:create', 'secrets:create', 'nginx:create']);
        // The draft is judged for itself: its own record is no conflict; no provider is connected, so nothing is made there.
        expect(body.availability.checks.name).to.equal({ ok: true, reason: "the name is this app's" });
        expect((body.plan as unknown as { access: unknown[] }).access).to.equal([]);
        expect(body.plan.containers).to.equal([
            { service: 'app', container: 'wiki-app-1', image: 'ghcr.io/example/wiki:1.2.3', action: 'create' },
        ]);
        expect(body.plan.certificate.action).to.equal('obtain');
        const secrets = body.files.find((file) => file.kind === 'secrets');
        expect(secrets?.masked).to.be.true();
        expect(secrets?.content).to.equal('DB_PASSWORD=••••••••\n');
        expect(response.text).to.not.contain('hunter2');
        expect(body.lint.some((finding) => finding.level === 'warning')).to.be.true();
        expect(Fs.existsSync(Path.join(server.context.config.apps.appsDir, 'wiki'))).to.equal(before);
        expect(Fs.existsSync(Path.join(server.context.config.apps.nginxSitesDir, 'wiki.conf'))).to.be.false();
    });

    it("previews a compose file that does not publish the port the app's nginx site proxies to as an error", async () => {
        const created = await editor.post('/api/apps', { name: 'moved', image: 'nginx', tag: '1.25' });
        expect(created.status, created.text).to.equal(201);
        const { hostPort, draft } = (created.body as AppBody).app;
        const aboutSite = <T extends { message: string }>(findings: T[]) =>
            findings.filter((finding) => finding.message.includes('nginx site'));
        const before = await editor.post('/api/apps/moved/preview');
        expect(aboutSite((before.body as { lint: Array<{ message: string }> }).lint)).to.equal([]);

        const other = hostPort + 1000;
        const compose = draft.compose.replace(`127.0.0.1:${hostPort}:80`, `127.0.0.1:${other}:80`);
        expect((await editor.put('/api/apps/moved/draft', { compose })).status).to.equal(200);
        const response = await editor.post('/api/apps/moved/preview');
        expect(response.status, response.text).to.equal(200);
        const lint = (response.body as { lint: Finding[] }).lint;
        expect(aboutSite(lint)).to.equal([
            {
                path: 'services.app.ports[0]',
                level: 'error',
                message:
                    `the app's nginx site proxies / to 127.0.0.1:${hostPort}, which no service publishes (app publishes 127.0.0.1:${other}): ` +
                    'the deploy would fail when nginx answers 502 Bad Gateway',
                service: 'app',
                field: 'ports',
                fix: `publish "127.0.0.1:${hostPort}:80", or point the site's location / at http://127.0.0.1:${other}`,
            },
        ]);
    });

    it('lists the files on disk, masking secret values for viewers', async () => {
        // An app of its own: files on disk would turn the wiki's previewed creates into updates.
        expect((await editor.post('/api/apps', { name: 'shelf', image: 'nginx' })).status).to.equal(201);
        const dir = Path.join(server.context.config.apps.appsDir, 'shelf');
        Fs.mkdirSync(dir, { recursive: true });
        Fs.writeFileSync(Path.join(dir, 'compose.yaml'), 'services: {}\n');
        Fs.writeFileSync(Path.join(dir, 'secrets.env'), 'DB_PASSWORD=hunter2-hunter2\n', { mode: 0o600 });
        const forEditor = await editor.get('/api/apps/shelf/files');
        const editorFiles = (forEditor.body as { files: Array<{ path: string; content: string }> }).files;
        expect(editorFiles.find((file) => file.path.endsWith('secrets.env'))?.content).to.equal('DB_PASSWORD=hunter2-hunter2\n');
        const forViewer = await viewer.get('/api/apps/shelf/files');
        expect(forViewer.text).to.not.contain('hunter2');
        expect(
            (forViewer.body as { files: Array<{ path: string; content: string }> }).files.map((file) => Path.basename(file.path)),
        ).to.equal(['compose.yaml', 'secrets.env']);
    });

    it('generates random secrets of each kind', async () => {
        const password = (await editor.get('/api/secrets/generate?kind=password')).body as { value: string };
        expect(password.value).to.match(/^[\w-]{24}$/);
        expect(((await editor.get('/api/secrets/generate?kind=hex16')).body as { value: string }).value).to.match(/^[0-9a-f]{32}$/);
        expect(((await editor.get('/api/secrets/generate?kind=hex32')).body as { value: string }).value).to.match(/^[0-9a-f]{64}$/);
        const other = (await editor.get('/api/secrets/generate?kind=password')).body as { value: string };
        expect(other.value).to.not.equal(password.value);
        expect((await editor.get('/api/secrets/generate?kind=pin')).status).to.equal(422);
    });

    it('lets viewers read but not change, and nobody in without a session', async () => {
        expect((await viewer.post('/api/apps', { name: 'mine', image: 'nginx' })).status).to.equal(403);
        expect((await viewer.put('/api/apps/wiki/draft', { title: 'x' })).status).to.equal(403);
        expect((await viewer.post('/api/apps/wiki/preview')).status).to.equal(403);
        expect((await viewer.get('/api/secrets/generate?kind=hex16')).status).to.equal(403);
        const anonymous = await fetch(`${server.baseUrl}/api/apps`);
        expect(anonymous.status).to.equal(401);
    });
});
