import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ROOT_DIR } from '../../../../../server.ts';
import { defaultSite, normalizeSite, type SiteSpec } from '../../../../../plugins/deploy/domain/nginx/site-model.ts';
import { Browser, signIn } from '../../../../helpers/browser.ts';
import { createTestServer, temporaryDirectory, type TestServer } from '../../../../helpers/server.ts';
import { ensureNginx } from '../../../../support/nginx.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ADMIN = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };
const PASSWORD = 'user-password-1';
const FIXTURES = Path.join(ROOT_DIR, 'test', 'fixtures', 'nginx');
const nginx = ensureNginx();
const needsNginx = { skip: nginx === undefined };

interface ValidateBody {
    ok: boolean;
    errors: Array<{ path: string; level: string; message: string; line?: number }>;
    lint: Array<{ path: string; level: string; message: string }>;
}

async function setUpAccounts(context: TestServer, baseUrl: string): Promise<{ editor: Browser; viewer: Browser }> {
    const token = Fs.readFileSync(Path.join(context.dataDir, 'setup-token'), 'utf8').trim();
    const setup = new Browser(baseUrl);
    await setup.get('/api/setup/status');
    expect((await setup.post('/api/setup', { token, ...ADMIN })).status).to.equal(201);
    const admin = await signIn(baseUrl, ADMIN.email, ADMIN.password);
    for (const role of ['editor', 'viewer']) {
        const created = await admin.post('/api/admin/users', { email: `${role}@example.com`, name: role, password: PASSWORD, role });
        expect(created.status, created.text).to.equal(201);
    }

    return {
        editor: await signIn(baseUrl, 'editor@example.com', PASSWORD),
        viewer: await signIn(baseUrl, 'viewer@example.com', PASSWORD),
    };
}

describe('deploy manager: /api/nginx', () => {
    let context: TestServer;
    let baseUrl: string;
    let editor: Browser;
    let viewer: Browser;
    let spec: SiteSpec;

    before(async () => {
        context = await createTestServer();
        await context.server.start();
        baseUrl = `http://127.0.0.1:${context.server.info.port}`;
        ({ editor, viewer } = await setUpAccounts(context, baseUrl));
        // The certificates and the challenge root where Gatehouse keeps them: a site may use those.
        spec = defaultSite({
            domain: 'app.example.com',
            upstreamPort: 8080,
            forwardAuth: { outpostUrl: 'http://127.0.0.1:9000' },
            certificateDir: context.config.apps.certificatesDir,
            acmeChallengeRoot: context.config.host.acmeWebroot,
        });
    });

    after(async () => {
        await context.cleanup();
    });

    it('renders a model and parses it back to an equal model, with the text as given', async () => {
        const rendered = await editor.post('/api/nginx/render', { spec });
        expect(rendered.status, rendered.text).to.equal(200);
        const { text } = rendered.body as { text: string };
        expect(text).to.contain('proxy_pass http://127.0.0.1:8080;');
        const parsed = await editor.post('/api/nginx/parse', { text });
        expect(parsed.status).to.equal(200);
        expect(parsed.body).to.equal({ spec: normalizeSite(spec), text });
    });

    it('parses hand-edited text and keeps it as written', async () => {
        const text = Fs.readFileSync(Path.join(FIXTURES, 'hand-edited.conf'), 'utf8');
        const parsed = await editor.post('/api/nginx/parse', { text });
        expect(parsed.status).to.equal(200);
        const body = parsed.body as { spec: SiteSpec; text: string };
        expect(body.text).to.equal(text);
        expect(body.spec.serverNames).to.equal(['wiki.example.org', 'www.wiki.example.org']);
        expect(body.spec.extra).to.contain('location ~* \\.(png|jpg)$ {');
    });

    it('answers 422 naming the field for text that does not parse and for an injection attempt', async () => {
        const broken = await editor.post('/api/nginx/parse', { text: 'server {\n  listen 80;\n}\n}' });
        expect(broken.status).to.equal(422);
        expect(broken.body).to.equal({ error: 'text: line 4: unexpected "}"' });
        const injected = { ...spec, serverNames: ['app.example.com; include /etc/shadow'] };
        const render = await editor.post('/api/nginx/render', { spec: injected });
        expect(render.status).to.equal(422);
        expect((render.body as { error: string }).error).to.startWith('spec.serverNames[0]: must be a DNS name');
        const proxy = await editor.post('/api/nginx/render', {
            spec: { ...spec, locations: [{ path: '/', proxyPass: 'http://10.0.0.1:80' }] },
        });
        expect((proxy.body as { error: string }).error).to.startWith('spec.locations[0].proxyPass: ');
        expect((await editor.post('/api/nginx/render', { spec: 'server {}' })).status).to.equal(422);
        expect((await editor.post('/api/nginx/parse', {})).body).to.equal({ error: 'text is required' });
        expect((await editor.post('/api/nginx/validate', {})).body).to.equal({ error: 'give either text or spec' });
    });

    it('validates a model: injection attempts are errors with their path, and nothing reaches nginx', async () => {
        const response = await editor.post('/api/nginx/validate', { spec: { ...spec, clientMaxBodySize: '10m; autoindex on' } });
        expect(response.status).to.equal(200);
        const body = response.body as ValidateBody;
        expect(body.ok).to.be.false();
        expect(body.errors).to.equal([
            { path: 'spec.clientMaxBodySize', level: 'error', message: 'must be a size such as 10m, 512k or 1g' },
        ]);
    });

    it('validates a good model and good text with nginx -t', needsNginx, async () => {
        const fromSpec = (await editor.post('/api/nginx/validate', { spec })).body as ValidateBody;
        expect(fromSpec.ok, JSON.stringify(fromSpec)).to.be.true();
        expect(fromSpec.errors).to.equal([]);
        const { text } = (await editor.post('/api/nginx/render', { spec })).body as { text: string };
        const fromText = (await editor.post('/api/nginx/validate', { text })).body as ValidateBody;
        expect(fromText).to.equal({ ok: true, errors: [], lint: [] });
        const plain = (await editor.post('/api/nginx/validate', { spec: { ...spec, https: undefined } })).body as ValidateBody;
        expect(plain.ok).to.be.true();
        expect(plain.lint.map((finding) => finding.path)).to.equal(['spec.https']);
    });

    it("catches a broken site with nginx's message and the site's line", needsNginx, async () => {
        const text = Fs.readFileSync(Path.join(FIXTURES, 'broken.conf'), 'utf8');
        const response = await editor.post('/api/nginx/validate', { text });
        expect(response.status).to.equal(200);
        const body = response.body as ValidateBody;
        expect(body.ok).to.be.false();
        expect(body.errors).to.have.length(1);
        expect(body.errors[0]).to.include({ path: 'text', level: 'error', line: 8 });
        expect(body.errors[0]?.message).to.contain('"proxy_buffering" directive');
    });

    it('is for editors: viewers get 403, anonymous callers 401', async () => {
        const anonymous = new Browser(baseUrl);
        await anonymous.get('/api/auth/me');
        const calls: Array<[string, object]> = [
            ['/api/nginx/parse', { text: 'server {}' }],
            ['/api/nginx/render', { spec }],
            ['/api/nginx/validate', { spec }],
        ];
        for (const [path, payload] of calls) {
            expect((await viewer.post(path, payload)).status).to.equal(403);
            expect((await anonymous.post(path, payload)).status).to.equal(401);
        }
    });

    /** A plain site on port 80 with one line added inside its server block, at line 4. */
    const siteWith = (line: string): string => `server {\n    listen 80;\n    server_name a.example.com;\n    ${line}\n}\n`;

    it('refuses text that would make nginx read, write or run host files (422), and never echoes them', async () => {
        const secrets = temporaryDirectory('gatehouse-nginx-secret-');
        const secret = Path.join(secrets, 'secret.conf');
        Fs.writeFileSync(secret, 'hunter2-first-word and the rest;\n');
        const made = Path.join(secrets, 'made');
        const refused = [
            [`include ${secret};`, 'include'],
            [`include ${Path.relative('/etc/nginx', secret)};`, 'include'],
            [`include ${Path.dirname(secret)}/.?/${Path.basename(secrets)}/secret.conf;`, 'include'],
            [`ssl_dhparam ${secret};`, 'ssl_dhparam'],
            [`ssl_certificate_key ${secret};`, 'ssl_certificate_key'],
            [`proxy_temp_path ${made};`, 'proxy_temp_path'],
            ['access_log /etc/cron.d/gatehouse-test;', 'access_log'],
            ['location / { content_by_lua_file /tmp/evil.lua; }', 'content_by_lua_file'],
        ];
        try {
            for (const [line, directive] of refused) {
                const response = await editor.post('/api/nginx/validate', { text: siteWith(line as string) });
                expect(response.status, `${line} → ${response.text}`).to.equal(422);
                expect((response.body as { error: string }).error).to.startWith(`text: line 4: ${directive}`);
                expect(response.text).to.not.contain('hunter2');
            }

            expect(Fs.existsSync(made)).to.be.false();
        } finally {
            Fs.rmSync(secrets, { recursive: true, force: true });
        }
    });

    it('hides what nginx says about a file outside the test prefix, even one the site may include', needsNginx, async () => {
        const included = Path.join(context.config.apps.nginxSitesDir, 'shared.inc');
        Fs.mkdirSync(Path.dirname(included), { recursive: true });
        Fs.writeFileSync(included, 'hunter2-first-word and the rest;\n');
        const response = await editor.post('/api/nginx/validate', { text: siteWith(`include ${included};`) });
        expect(response.status).to.equal(200);
        const body = response.body as ValidateBody;
        expect(body.ok).to.be.false();
        expect(response.text).to.not.contain('hunter2');
        expect(response.text).to.not.contain(included);
        expect(body.errors).to.equal([
            {
                path: 'text',
                level: 'error',
                message: 'nginx reported a problem with a file outside the test prefix; its message is not shown',
            },
        ]);
    });

    it(
        "lints what nginx's workers would serve outside the app's folders as risks, in text and in the model's extra",
        needsNginx,
        async () => {
            const text = (await editor.post('/api/nginx/validate', { text: siteWith('location / { root /; autoindex on; }') }))
                .body as ValidateBody;
            expect(text.ok).to.be.true();
            expect(text.lint.filter((finding) => finding.level === 'risk')).to.equal([
                {
                    path: 'text',
                    level: 'risk',
                    message: `line 4: root / serves host files outside the app's folders (${context.config.apps.appsDir}) and the ACME webroot`,
                },
            ]);
            const extra = 'location /files/ {\n    alias /;\n    autoindex on;\n}';
            const model = (await editor.post('/api/nginx/validate', { spec: { ...spec, extra } })).body as ValidateBody;
            expect(model.ok).to.be.true();
            expect(model.lint.filter((finding) => finding.level === 'risk').map((finding) => [finding.path, finding.message])).to.equal([
                [
                    'spec.extra',
                    `line 2: alias / serves host files outside the app's folders (${context.config.apps.appsDir}) and the ACME webroot`,
                ],
            ]);
            const inside = siteWith(`location / { root ${Path.join(context.config.apps.appsDir, 'wiki', 'static')}; }`);
            const allowed = (await editor.post('/api/nginx/validate', { text: inside })).body as ValidateBody;
            expect(allowed.lint.filter((finding) => finding.level === 'risk')).to.equal([]);
        },
    );

    it('answers 422 for blocks nested too deep, on every route that reads site text', async () => {
        const deep = `server {\n${'location / {\n'.repeat(10_000)}${'}\n'.repeat(10_000)}}\n`;
        const expected = { error: 'text: line 33: blocks nested more than 32 deep' };
        for (const path of ['/api/nginx/parse', '/api/nginx/validate']) {
            const response = await editor.post(path, { text: deep });
            expect(response.status, `${path} → ${response.text}`).to.equal(422);
            expect(response.body).to.equal(expected);
        }

        expect((await editor.post('/api/apps', { name: 'deep', image: 'nginx' })).status).to.equal(201);
        // An app's site text is at most 65,535 characters, so the app route gets a deep one that fits.
        const deepSite = `server {\n${'location / {\n'.repeat(2_000)}${'}\n'.repeat(2_000)}}\n`;
        const put = await editor.put('/api/apps/deep/nginx', { mode: 'text', text: deepSite });
        expect(put.status, put.text).to.equal(422);
        expect((put.body as { error: string }).error).to.contain('line 33: blocks nested more than 32 deep');
        const written = await editor.put('/api/apps/deep/nginx', {
            mode: 'text',
            text: siteWith('access_log /etc/cron.d/gatehouse-test;'),
        });
        expect(written.status, written.text).to.equal(422);
        expect((written.body as { error: string }).error).to.contain('line 4: access_log /etc/cron.d/gatehouse-test');
    });

    it('needs the CSRF header', async () => {
        const response = await editor.post('/api/nginx/render', { spec }, { csrf: false });
        expect(response.status).to.equal(403);
    });
});
