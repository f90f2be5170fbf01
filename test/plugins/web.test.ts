// needs: chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import Inert from '@hapi/inert';
import * as Lab from '@hapi/lab';

import { registerErrorShapes } from '../../lib/errors.ts';
import { WEB_CONTENT_SECURITY_POLICY, webPlugin } from '../../plugins/web.ts';
import { WEB_DIST_DIR } from '../../server.ts';
import { createTestServer, temporaryDirectory, type TestServer } from '../helpers/server.ts';
import { ensureWebBuild } from '../web/harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const EXPECTED_CSP =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

describe('web plugin: serving the built UI', () => {
    let context: TestServer;
    let script: string;

    before(async () => {
        await ensureWebBuild();
        context = await createTestServer();
        const found = Fs.readdirSync(Path.join(WEB_DIST_DIR, 'assets')).find((file) => file.endsWith('.js'));
        if (!found) {
            throw new Error('the build has no script');
        }

        script = found;
    });

    after(async () => {
        await context.cleanup();
    });

    it('answers / with index.html under a CSP without inline scripts, nosniff and no-cache', async () => {
        expect(WEB_CONTENT_SECURITY_POLICY).to.equal(EXPECTED_CSP);
        const response = await context.server.inject({ url: '/', headers: HTML });
        expect(response.statusCode).to.equal(200);
        expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
        expect(response.headers['content-security-policy']).to.equal(EXPECTED_CSP);
        expect(response.headers['x-content-type-options']).to.equal('nosniff');
        expect(response.headers['cache-control']).to.equal('no-cache');
        expect(response.payload).to.equal(Fs.readFileSync(Path.join(WEB_DIST_DIR, 'index.html'), 'utf8'));
        // Scripts only from files: no inline script and no inline event handler in the page.
        expect(response.payload).to.not.match(/<script(?![^>]*\ssrc=)[^>]*>/);
        expect(response.payload).to.not.match(/\son[a-z]+=/i);

        const etag = response.headers.etag;
        expect(etag).to.exist();
        const again = await context.server.inject({ url: '/', headers: { ...HTML, 'if-none-match': String(etag) } });
        expect(again.statusCode).to.equal(304);
    });

    it("answers the single-page app's own routes with index.html when a browser asks for a page", async () => {
        for (const url of ['/apps', '/apps/wiki/runs', '/sign-in?next=%2Fapps', '/admin/users', '/no-such-page']) {
            const response = await context.server.inject({ url, headers: HTML });
            expect(response.statusCode, url).to.equal(200);
            expect(response.headers['content-security-policy']).to.equal(EXPECTED_CSP);
            expect(response.payload).to.contain('<div id="app"></div>');
        }

        const head = await context.server.inject({ method: 'HEAD', url: '/apps', headers: HTML });
        expect(head.statusCode).to.equal(200);
    });

    it('does not answer other clients, other methods, or the APIs with the page', async () => {
        const json = await context.server.inject({ url: '/apps', headers: { accept: 'application/json' } });
        expect(json.statusCode).to.equal(404);
        expect(json.result).to.equal({ error: 'not found' });

        const posted = await context.server.inject({ method: 'POST', url: '/apps', headers: HTML });
        expect(posted.statusCode).to.equal(404);

        const api = await context.server.inject({ url: '/api/no-such-route', headers: HTML });
        expect(api.statusCode).to.equal(404);
        expect(api.headers['content-type']).to.contain('application/json');
        expect(api.result).to.equal({ error: 'not found' });

        const gitApi = await context.server.inject({ url: '/api/v1/no-such-route', headers: HTML });
        expect(gitApi.statusCode).to.equal(404);
        expect(gitApi.headers['content-type']).to.contain('application/json');

        // A route of another method keeps answering 405, and the documents stay what they were.
        const wrongMethod = await context.server.inject({ url: '/api/auth/login', headers: HTML });
        expect(wrongMethod.statusCode).to.equal(405);
        const swagger = await context.server.inject({ url: '/swagger.v1.json', headers: HTML });
        expect(swagger.headers['content-type']).to.contain('application/json');
        const swaggerUi = await context.server.inject({ url: '/api/swagger', headers: HTML });
        expect(swaggerUi.payload).to.contain('swagger-ui');
    });

    it('serves hashed assets for a year, immutable, and 404 for an unknown one', async () => {
        const response = await context.server.inject(`/assets/${script}`);
        expect(response.statusCode).to.equal(200);
        expect(response.headers['content-type']).to.contain('javascript');
        expect(response.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
        expect(response.headers['x-content-type-options']).to.equal('nosniff');

        for (const url of ['/assets/index-00000000.js', '/assets/', '/assets/.hidden', '/assets/nested/index.js']) {
            const missing = await context.server.inject({ url, headers: HTML });
            expect(missing.statusCode, url).to.equal(404);
            expect(missing.headers['cache-control'], url).to.not.contain('immutable');
        }
    });
});

describe('web plugin: before the UI is built', () => {
    const made: { server: Hapi.Server; distDir: string }[] = [];

    /** A server of the test's own whose UI is not built yet: the test that builds it leaves the others unbuilt. */
    const unbuiltServer = async () => {
        const distDir = temporaryDirectory('gatehouse-web-dist-');
        const server = Hapi.server();
        made.push({ server, distDir });
        registerErrorShapes(server, 'http://127.0.0.1/api/swagger');
        await server.register(Inert);
        await server.register({ plugin: webPlugin, options: { distDir: Path.join(distDir, 'dist') } });
        await server.initialize();
        return { server, distDir };
    };

    after(async () => {
        for (const { server, distDir } of made) {
            await server.stop();
            Fs.rmSync(distDir, { recursive: true, force: true });
        }
    });

    it('answers pages with a 503 saying how to build the UI, and assets with 404', async () => {
        const { server } = await unbuiltServer();
        for (const url of ['/', '/apps']) {
            const response = await server.inject({ url, headers: HTML });
            expect(response.statusCode, url).to.equal(503);
            expect(response.headers['content-type']).to.equal('text/html; charset=utf-8');
            expect(response.headers['cache-control']).to.equal('no-store');
            expect(response.payload).to.contain('npm run build:web');
        }

        expect((await server.inject('/assets/index-00000000.js')).statusCode).to.equal(404);
    });

    it('serves the UI as soon as it is built, without a restart', async () => {
        const { server, distDir } = await unbuiltServer();
        expect((await server.inject({ url: '/', headers: HTML })).statusCode).to.equal(503);
        Fs.mkdirSync(Path.join(distDir, 'dist', 'assets'), { recursive: true });
        Fs.writeFileSync(Path.join(distDir, 'dist', 'index.html'), '<!doctype html><title>built</title>');
        Fs.writeFileSync(Path.join(distDir, 'dist', 'assets', 'index-abc.js'), 'export {};');
        const page = await server.inject({ url: '/', headers: HTML });
        expect(page.statusCode).to.equal(200);
        expect(page.payload).to.contain('built');
        expect((await server.inject('/assets/index-abc.js')).statusCode).to.equal(200);
    });
});

describe('web plugin: a process without the deploy service', () => {
    it('serves no UI', async () => {
        const context = await createTestServer({ SERVICES: 'git' });
        try {
            const response = await context.server.inject({ url: '/', headers: HTML });
            expect(response.statusCode).to.equal(404);
        } finally {
            await context.cleanup();
        }
    });
});
