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
