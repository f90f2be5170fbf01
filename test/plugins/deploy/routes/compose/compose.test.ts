import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-model.ts';
import type { ComposeSpec } from '../../../../../plugins/deploy/domain/compose/compose-types.ts';
import type { Finding } from '../../../../../plugins/deploy/domain/findings/finding.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import { Browser, signIn } from '../../../../helpers/browser.ts';
import { createTestServer, freePort, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ADMIN = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };
const PASSWORD = 'user-password-1';

interface ValidateBody {
    ok: boolean;
    errors: Finding[];
    lint: Finding[];
}

function fixture(name: string): string {
    return Fs.readFileSync(Path.join(ROOT_DIR, 'test', 'fixtures', 'compose', name), 'utf8');
}

async function setUpAdmin(context: TestServer, baseUrl: string): Promise<Browser> {
    const token = Fs.readFileSync(Path.join(context.dataDir, 'setup-token'), 'utf8').trim();
    const setup = new Browser(baseUrl);
    await setup.get('/api/setup/status');
    expect((await setup.post('/api/setup', { token, ...ADMIN })).status).to.equal(201);
    return await signIn(baseUrl, ADMIN.email, ADMIN.password);
}

async function createUser(admin: Browser, email: string, role: string): Promise<void> {
    const response = await admin.post('/api/admin/users', { email, name: email.split('@')[0], password: PASSWORD, role });
    expect(response.status, response.text).to.equal(201);
}

describe('deploy manager: compose model endpoints', () => {
    let context: TestServer;
    let baseUrl: string;
    let editor: Browser;
    let viewer: Browser;

    before(async () => {
        context = await createTestServer();
        await context.server.start();
        baseUrl = `http://127.0.0.1:${context.server.info.port}`;
        const admin = await setUpAdmin(context, baseUrl);
        await createUser(admin, 'editor@example.com', 'editor');
        await createUser(admin, 'viewer@example.com', 'viewer');
        editor = await signIn(baseUrl, 'editor@example.com', PASSWORD);
        viewer = await signIn(baseUrl, 'viewer@example.com', PASSWORD);
    });

    after(async () => {
        await context.cleanup();
    });

    it('parses compose YAML into the model, and renders the model back to equal YAML', async () => {
        const text = fixture('03-nextcloud.yaml');
        const parsed = await editor.post('/api/compose/parse', { text });
        expect(parsed.status, parsed.text).to.equal(200);
        const { spec } = parsed.body as { spec: ComposeSpec };
        expect(spec).to.equal(parseCompose(text));

        const rendered = await editor.post('/api/compose/render', { spec });
        expect(rendered.status, rendered.text).to.equal(200);
        expect(parseCompose((rendered.body as { text: string }).text)).to.equal(spec);
    });

    it('validates text or a model: configuration errors, schema errors and lint', async () => {
        const port = await freePort();
        const text = [
            'services:',
            '  web:',
            '    image: ghcr.io/example/web:1.0',
            '    restart: unless-stopped',
            '    environment:',
            '      DB_PASSWORD: ${DB_PASSWORD}',
            '    ports:',
            `      - "127.0.0.1:${port}:80"`,
            `      - "127.0.0.1:${context.server.info.port}:81"`,
            '    volumes: ["data:/data"]',
            '    healthcheck: {test: [CMD, "true"]}',
            'volumes:',
            '  data:',
        ].join('\n');
        const failing = await editor.post('/api/compose/validate', { text });
        expect(failing.status, failing.text).to.equal(200);
        const body = failing.body as ValidateBody;
        expect(body.ok).to.be.false();
        expect(body.errors.map((finding) => finding.path)).to.equal(['services.web.environment.DB_PASSWORD', 'services.web.ports[1]']);
        expect(body.lint).to.equal([]);

        const fixedText = text.replace(`:${context.server.info.port}:81`, `:${port}:81`).replace(`"127.0.0.1:${port}:80"`, `"80"`);
        const passing = await editor.post('/api/compose/validate', { text: fixedText, secrets: { DB_PASSWORD: 'secret' } });
        expect((passing.body as ValidateBody).ok).to.be.true();
        expect((passing.body as ValidateBody).lint.map((finding) => [finding.level, finding.path])).to.equal([
            ['risk', 'services.web.ports[0]'],
        ]);

        const spec = parseCompose('services:\n  web:\n    image: nginx:1.25\n    restart: always\n    bogus_key: 1\n');
        const fromSpec = await editor.post('/api/compose/validate', { spec });
        expect(fromSpec.status, fromSpec.text).to.equal(200);
        const specBody = fromSpec.body as ValidateBody;
        expect(specBody.ok).to.be.false();
        expect(specBody.errors.map((finding) => [finding.level, finding.path])).to.equal([['error', 'services.web.bogus_key']]);
        expect(specBody.lint.map((finding) => finding.path)).to.equal(['services.web.healthcheck', 'services.web.volumes']);
    });

    it('validates a file with mistakes in YAML or in types: 200, ok false, each mistake in errors', async () => {
        const text = [
            'services:',
            '  web:',
            '    image: 5',
            '    ports: {a: b}',
            '    environment: 5',
            '    healthcheck: {test: [CMD, "true"], retries: three}',
            '    bogus_key: 1',
            '  db:',
            '    image: postgres:16',
            '    volumes: [{type: volume}, "./data:/data"]',
            '    depends_on: {web: {condition: sometimes}}',
            '    ports: [true, "not-a-port"]',
            'volumes:',
            '  data: {driver: 5}',
        ].join('\n');
        const response = await editor.post('/api/compose/validate', { text });
        expect(response.status, response.text).to.equal(200);
        const body = response.body as ValidateBody;
        expect(body.ok).to.be.false();
        expect(body.lint).to.equal([]);
        expect(body.errors.map((finding) => [finding.path, finding.message])).to.equal([
            ['services.web.image', 'services.web.image (line 3): must be a string'],
            ['services.web.ports', 'services.web.ports (line 4): must be a list'],
            ['services.web.environment', 'services.web.environment (line 5): must be a mapping or a list of NAME=value'],
            ['services.web.healthcheck.retries', 'services.web.healthcheck.retries (line 6): must be a number'],
            ['services.db.volumes[0].target', 'services.db.volumes[0].target: is required (the path in the container)'],
            [
                'services.db.depends_on.web.condition',
                'services.db.depends_on.web.condition (line 11): must be one of service_started, service_healthy, service_completed_successfully',
            ],
            [
                'services.db.ports[0]',
                'services.db.ports[0] (line 12): must be a port ("127.0.0.1:8080:80" or 80) or a mapping (target, published, ...)',
            ],
            ['volumes.data.driver', 'volumes.data.driver (line 14): must be a string'],
            ['services.web.bogus_key', 'services.web.bogus_key: is not allowed here (unknown key, or misspelt)'],
            ['services.db.ports[1]', 'services.db.ports[1]: must match format "ports"'],
        ]);
        for (const finding of body.errors) {
            expect(finding.level).to.equal('error');
            expect(finding.fix).to.be.a.string();
        }

        expect(body.errors[0]).to.include({ service: 'web', field: 'image' });

        const model = { services: { web: { image: 5, ports: 'x', environment: 5, bogus: 1 }, db: 7 }, extra: { volumes: {} } };
        const fromSpec = await editor.post('/api/compose/validate', { spec: model });
        expect(fromSpec.status, fromSpec.text).to.equal(200);
        expect((fromSpec.body as ValidateBody).ok).to.be.false();
        expect((fromSpec.body as ValidateBody).errors.map((finding) => finding.path)).to.equal([
            'services.web.bogus',
            'services.db',
            'extra.volumes',
            'services.web.image',
            'services.web.environment',
            'services.web.ports',
        ]);

        for (const [broken, message] of [
            ['services:\n  web:\n    image: [nginx\n', /^line \d+, column \d+: /],
            ['# nothing\n', /^the compose file is empty$/],
            ['- web\n', /must be a mapping of top-level keys/],
        ] as const) {
            const syntax = await editor.post('/api/compose/validate', { text: broken });
            expect(syntax.status, syntax.text).to.equal(200);
            const syntaxBody = syntax.body as ValidateBody;
            expect(syntaxBody.ok).to.be.false();
            expect(syntaxBody.errors.map((finding) => [finding.level, finding.path])).to.equal([['error', '']]);
            expect(syntaxBody.errors[0]?.message).to.match(message);
        }
    });

    it('still refuses a file with mistakes on parse and on the compose update, naming the first', async () => {
        const text = 'services:\n  web:\n    image: 5\n    ports: {a: b}\n    environment: 5\n';
        const parsed = await editor.post('/api/compose/parse', { text });
        expect(parsed.status, parsed.text).to.equal(422);
        expect((parsed.body as { error: string }).error).to.equal('text: services.web.image (line 3): must be a string');
        const rendered = await editor.post('/api/compose/render', { spec: { services: { web: { image: 5, ports: 'x' } } } });
        expect(rendered.status, rendered.text).to.equal(422);
        expect((rendered.body as { error: string }).error).to.equal('spec: services.web.image: must be a string');

        expect((await editor.post('/api/apps', { name: 'typed', image: 'nginx', tag: '1.25' })).status).to.equal(201);
        const draftBefore = (await editor.get('/api/apps/typed')).body;
        const updated = await editor.put('/api/apps/typed/compose', { mode: 'text', text, acceptRisks: true });
        expect(updated.status, updated.text).to.equal(422);
        expect((updated.body as { error: string }).error).to.equal('compose: services.web.image (line 3): must be a string');
        expect((await editor.get('/api/apps/typed')).body).to.equal(draftBefore);
    });

    it("with an app, says when the file does not publish the port the app's nginx site proxies to", async () => {
        const created = await editor.post('/api/apps', { name: 'ported', image: 'nginx', tag: '1.25' });
        expect(created.status, created.text).to.equal(201);
        const { hostPort, draft } = (created.body as { app: { hostPort: number; draft: { compose: string } } }).app;
        const other = hostPort + 1000;
        const moved = draft.compose.replace(`127.0.0.1:${hostPort}:80`, `127.0.0.1:${other}:80`);
        expect(moved).to.not.equal(draft.compose);

        const forApp = await editor.post('/api/compose/validate', { text: moved, app: 'ported' });
        expect(forApp.status, forApp.text).to.equal(200);
        const body = forApp.body as ValidateBody;
        expect(body.ok).to.be.false();
        const finding = body.errors.find((error) => error.path === 'services.app.ports[0]');
        expect(finding?.message).to.equal(
            `the app's nginx site proxies / to 127.0.0.1:${hostPort}, which no service publishes (app publishes 127.0.0.1:${other}): ` +
                'the deploy would fail when nginx answers 502 Bad Gateway',
        );
        expect(finding?.fix).to.equal(`publish "127.0.0.1:${hostPort}:80", or point the site's location / at http://127.0.0.1:${other}`);

        const spec = parseCompose(moved);
        const fromSpec = await editor.post('/api/compose/validate', { spec, app: 'ported' });
        expect((fromSpec.body as ValidateBody).errors.map((error) => error.path)).to.include('services.app.ports[0]');

        const exposed = await editor.post('/api/compose/validate', {
            text: 'services:\n  app:\n    image: nginx:1.25\n    expose: ["80"]\n',
            app: 'ported',
        });
        expect((exposed.body as ValidateBody).errors.map((error) => [error.level, error.path])).to.equal([
            ['error', 'services.app.expose[0]'],
        ]);

        const alone = await editor.post('/api/compose/validate', { text: moved });
        expect((alone.body as ValidateBody).errors.map((error) => error.path)).to.not.include('services.app.ports[0]');
        // The draft's own file publishes what its site proxies to (other errors, a busy port say, are not under test).
        const unchanged = await editor.post('/api/compose/validate', { text: draft.compose, app: 'ported' });
        expect(unchanged.status, unchanged.text).to.equal(200);
        const aboutSite = (findings: Finding[]) => findings.filter((finding) => finding.message.includes('nginx site'));
        expect(aboutSite([...(unchanged.body as ValidateBody).errors, ...(unchanged.body as ValidateBody).lint])).to.equal([]);

        expect((await editor.post('/api/compose/validate', { text: moved, app: 'nothing-here' })).status).to.equal(404);
        expect((await editor.post('/api/compose/validate', { text: moved, app: '../etc' })).status).to.equal(422);
    });

    it('answers 422 naming the field for input it cannot use', async () => {
        const expectError = async (path: string, payload: unknown, pattern: RegExp) => {
            const response = await editor.post(path, payload);
            expect(response.status, response.text).to.equal(422);
            expect((response.body as { error: string }).error).to.match(pattern);
        };
        await expectError('/api/compose/parse', { text: 'services:\n  web:\n    image: [nginx\n' }, /^text: line \d+, column \d+: /);
        await expectError(
            '/api/compose/parse',
            { text: 'services:\n  web:\n    ports: 80\n' },
            /^text: services\.web\.ports \(line 3\): must be a list$/,
        );
        await expectError('/api/compose/parse', {}, /text/);
        await expectError('/api/compose/parse', { text: 42 }, /text/);
        await expectError(
            '/api/compose/render',
            { spec: { services: { web: { ports: 'x' } } } },
            /^spec: services\.web\.ports: must be a list$/,
        );
        await expectError('/api/compose/render', { spec: 'services: {}' }, /spec/);
        await expectError('/api/compose/validate', {}, /^text: text or spec is required$/);
        await expectError('/api/compose/validate', { text: 'services: {}', spec: { services: {} } }, /not both/);
        await expectError('/api/compose/validate', { text: 'services: {}', secrets: { A: 1 } }, /secrets\.A/);
    });

    it('answers 422 to alias bombs, self-referencing and unresolved aliases and deep nesting, on every route that reads compose', async () => {
        const service = 'services:\n  web:\n    image: nginx:1.25\n';
        const laughs = ['a: &a [l, l, l, l, l, l, l, l, l]'];
        for (const [index, name] of ['b', 'c', 'd', 'e', 'f', 'g'].entries()) {
            const previous = String.fromCharCode('a'.charCodeAt(0) + index);
            laughs.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
        }

        const bad: Array<{ text: string; error: RegExp }> = [
            { text: `x-loop: &loop\n  again: *loop\n${service}`, error: /line 2: the alias \*loop refers to a node that contains it$/ },
            { text: `x-base: &base\n  <<: *base\n${service}`, error: /line 2: the alias \*base refers to a node that contains it$/ },
            { text: `${service}    labels: &labels [*labels]\n`, error: /line 4: the alias \*labels refers to a node that contains it$/ },
            { text: `x-lol:\n  ${laughs.join('\n  ')}\n${service}`, error: /aliases expand to more than 1000 copies$/ },
            { text: `${service}    entrypoint: *nowhere\n`, error: /the alias \*nowhere names no anchor before it$/ },
            { text: `${service}    x-deep: ${'['.repeat(100)}${']'.repeat(100)}\n`, error: /nested deeper than 64 levels$/ },
        ];
        const created = await editor.post('/api/apps', { name: 'aliases', image: 'nginx', tag: '1.25' });
        expect(created.status, created.text).to.equal(201);
        const draftBefore = (await editor.get('/api/apps/aliases')).body;
        for (const { text, error } of bad) {
            for (const [method, path, payload] of [
                ['post', '/api/compose/parse', { text }],
                ['post', '/api/compose/validate', { text }],
                ['put', '/api/apps/aliases/compose', { mode: 'text', text, acceptRisks: true }],
                ['put', '/api/apps/aliases/draft', { compose: text }],
            ] as const) {
                const response = await editor[method](path, payload);
                expect(response.status, `${path}: ${response.text}`).to.equal(422);
                expect((response.body as { error: string }).error).to.match(error);
            }
        }

        expect((await editor.get('/api/apps/aliases')).body).to.equal(draftBefore);
        let deep: unknown = 'x';
        for (let level = 0; level < 3000; level += 1) {
            deep = [deep];
        }

        const spec = { services: { web: { image: 'nginx:1.25', extra: { 'x-deep': deep } } } };
        for (const path of ['/api/compose/render', '/api/compose/validate']) {
            const response = await editor.post(path, { spec });
            expect(response.status, response.text).to.equal(422);
            expect((response.body as { error: string }).error).to.equal('spec: the model is nested deeper than 64 levels');
        }
    });

    it('is for editors: a viewer gets 403, a stranger 401, and a request without the CSRF header 403', async () => {
        const text = fixture('01-webapp-postgres.yaml');
        const payloads: Record<string, unknown> = {
            '/api/compose/parse': { text },
            '/api/compose/render': { spec: parseCompose(text) },
            '/api/compose/validate': { text },
        };
        for (const [path, payload] of Object.entries(payloads)) {
            expect((await viewer.post(path, payload)).status).to.equal(403);
            const stranger = new Browser(baseUrl);
            await stranger.get('/api/auth/me');
            expect((await stranger.post(path, payload)).status).to.equal(401);
            expect((await editor.post(path, payload, { csrf: false })).status).to.equal(403);
        }
    });
});
