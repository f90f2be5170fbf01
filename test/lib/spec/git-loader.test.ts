import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import Hapi from '@hapi/hapi';

import { registerErrorShapes } from '../../../lib/errors.ts';
import { gitOperations, readSwagger, registerGitApi } from '../../../lib/spec/git-loader.ts';
import { GIT_SWAGGER_FILE } from '../../../server.ts';
import { createTestServer, createTestUser, temporaryDirectory, type TestServer } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SWAGGER_URL = 'http://127.0.0.1:3000/api/swagger';

/** Operations still answering 501; this list only ever shrinks as issues land. */
const STILL_MISSING: string[] = [];

describe('the git API loader', () => {
    let context: TestServer;
    let headers: { authorization: string };

    before(async () => {
        context = await createTestServer();
        headers = (await createTestUser(context.server, { admin: true })).headers;
    });

    after(async () => {
        await context.cleanup();
    });

    it('describes the 62 operations of the seed, and the few more the issues need, each with an operationId and a tag', () => {
        const operations = gitOperations(readSwagger(GIT_SWAGGER_FILE));
        const extras = ['deleteOrgSecret', 'issueCreateComment', 'issueCreateIssue', 'issueEditIssue', 'issueGetIssue'];
        expect(operations.length).to.equal(62 + extras.length);
        expect(operations.filter((operation) => operation.tag !== 'issue' && operation.operationId !== 'deleteOrgSecret').length).to.equal(
            62,
        );
        expect(new Set(operations.map((operation) => operation.tag))).to.equal(
            new Set(['admin', 'miscellaneous', 'notification', 'organization', 'issue']),
        );
        expect(new Set(operations.map((operation) => operation.operationId)).size).to.equal(operations.length);
    });

    it('registers one route per operation, with the operationId as route id', () => {
        for (const operation of gitOperations(readSwagger(GIT_SWAGGER_FILE))) {
            const route = context.server.lookup(operation.operationId);
            expect(route, operation.operationId).to.exist();
            expect(route?.method).to.equal(operation.method.toLowerCase() as 'get');
        }
    });

    it('pins the operations that have no handler yet', () => {
        expect(context.server.app.missingOperations.filter((name) => !name.includes('.'))).to.equal(STILL_MISSING);
    });

    it("answers 501 in Gitea's error shape for an operation without a handler, and reports it", async () => {
        // Every operation of the real document has a handler now, so a one-operation document shows the rule.
        const folder = temporaryDirectory();
        const swaggerFile = Path.join(folder, 'swagger.json');
        Fs.writeFileSync(
            swaggerFile,
            JSON.stringify({
                swagger: '2.0',
                basePath: '/api/v1',
                definitions: {},
                responses: {},
                paths: { '/future': { get: { operationId: 'futureThing', tags: ['future'], responses: { 200: {} } } } },
            }),
        );
        const server = Hapi.server();
        registerErrorShapes(server, SWAGGER_URL);
        try {
            const missing = await registerGitApi(server, { swaggerFile, handlersRoot: Path.join(folder, 'handlers') });
            expect(missing).to.equal(['futureThing']);
            const response = await server.inject('/api/v1/future');
            expect(response.statusCode).to.equal(501);
            expect(response.result).to.equal({ message: 'not implemented: futureThing', url: SWAGGER_URL });
        } finally {
            Fs.rmSync(folder, { recursive: true, force: true });
        }
    });

    describe('request validation built from the spec', () => {
        it('refuses a body field of the wrong type with 422 naming the field', async () => {
            const response = await context.server.inject({ method: 'POST', url: '/api/v1/markdown', headers, payload: { Text: 5 } });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.startWith('[Text]: ');
            expect((response.result as { url: string }).url).to.equal(SWAGGER_URL);
        });

        it('matches body keys without regard to case, as Go does', async () => {
            const response = await context.server.inject({
                method: 'POST',
                url: '/api/v1/markdown',
                headers,
                payload: { text: '**hi**', MODE: 'markdown' },
            });
            expect(response.statusCode).to.equal(200);
            expect(response.payload).to.contain('<strong>hi</strong>');
        });

        it("matches a map's keys exactly, as Go does, although the spec bounds some of its values", async () => {
            const create = async (config: Record<string, string>) =>
                await context.server.inject({ method: 'POST', url: '/api/v1/admin/hooks', headers, payload: { type: 'gitea', config } });
            const upper = await create({ URL: 'https://example.com/hook', content_type: 'json' });
            expect(upper.statusCode).to.equal(422);
            expect((upper.result as { message: string }).message).to.equal('Missing config option: url');
            const long = await create({ url: `https://example.com/${'a'.repeat(4096)}`, content_type: 'json' });
            expect((long.result as { message: string }).message).to.equal('[url]: MaxSize');
        });

        it('refuses a value outside an enum, even in a repeatable query parameter', async () => {
            const response = await context.server.inject({ url: '/api/v1/notifications?subject-type=issue&subject-type=bogus', headers });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.contain('subject-type');
        });

        it('accepts repeated values of a repeatable query parameter (then reaches the handler)', async () => {
            const response = await context.server.inject({
                url: '/api/v1/notifications?status-types=unread&status-types=pinned&subject-type=issue',
                headers,
            });
            expect(response.statusCode).to.equal(200);
        });

        it('refuses a date-time that is not RFC 3339', async () => {
            const response = await context.server.inject({ url: '/api/v1/notifications?since=yesterday', headers });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.startWith('[since]');
        });

        it('refuses a path parameter that is not an int64', async () => {
            const bad = await context.server.inject({ url: '/api/v1/admin/hooks/abc', headers });
            expect(bad.statusCode).to.equal(422);
            expect((bad.result as { message: string }).message).to.startWith('[id]');
            const good = await context.server.inject({ url: '/api/v1/admin/hooks/12', headers });
            expect(good.statusCode).to.equal(404);
        });

        it('refuses a boolean query parameter that is not a boolean', async () => {
            const response = await context.server.inject({ url: '/api/v1/admin/actions/runners?disabled=perhaps', headers });
            expect(response.statusCode).to.equal(422);
        });

        it('reports the first missing required body field by its Go name', async () => {
            const response = await context.server.inject({ method: 'POST', url: '/api/v1/admin/users', headers, payload: {} });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.match(/^\[(Email|Username)\]: Required$/);
        });

        it("leaves page and limit to Gitea's lenient paging rules", async () => {
            const response = await context.server.inject({ url: '/api/v1/admin/orgs?page=abc&limit=-3', headers });
            expect(response.statusCode).to.equal(200);
            expect(response.headers['x-total-count']).to.equal('0');
        });

        it('takes a text/plain body as a string', async () => {
            const response = await context.server.inject({
                method: 'POST',
                url: '/api/v1/markdown/raw',
                headers: { ...headers, 'content-type': 'text/plain' },
                payload: '# Title',
            });
            expect(response.statusCode).to.equal(200);
            expect(response.payload).to.contain('<h1');
        });
    });

    describe('clean 4xx for bad requests', () => {
        it("answers 404 in Gitea's shape for an unknown path under /api/v1", async () => {
            const response = await context.server.inject({ url: '/api/v1/no/such/thing', headers });
            expect(response.statusCode).to.equal(404);
            expect(response.result).to.equal({ message: 'not found', url: SWAGGER_URL });
        });

        it('answers 405 with Allow for a known path and a wrong method', async () => {
            const response = await context.server.inject({ method: 'DELETE', url: '/api/v1/licenses' });
            expect(response.statusCode).to.equal(405);
            expect(response.headers.allow).to.equal('GET');
            expect((response.result as { url: string }).url).to.equal(SWAGGER_URL);
        });

        it('answers 400 for malformed JSON', async () => {
            const response = await context.server.inject({
                method: 'POST',
                url: '/api/v1/markdown',
                headers: { ...headers, 'content-type': 'application/json' },
                payload: '{"Text": ',
            });
            expect(response.statusCode).to.equal(400);
            expect(Object.keys(response.result as object)).to.equal(['message', 'url']);
        });

        it('answers 413 for an oversized body', async () => {
            const response = await context.server.inject({
                method: 'POST',
                url: '/api/v1/markdown/raw',
                headers: { ...headers, 'content-type': 'text/plain' },
                payload: 'x'.repeat(11 * 1024 * 1024),
            });
            expect(response.statusCode).to.equal(413);
            expect(Object.keys(response.result as object)).to.equal(['message', 'url']);
        });

        it('answers 415 for a body type it cannot read', async () => {
            const response = await context.server.inject({
                method: 'POST',
                url: '/api/v1/markdown',
                headers: { ...headers, 'content-type': 'application/x-unknown' },
                payload: 'x',
            });
            expect(response.statusCode).to.equal(415);
        });
    });

    describe('the documents', () => {
        it('serves the Swagger document at /swagger.v1.json', async () => {
            const response = await context.server.inject('/swagger.v1.json');
            expect(response.statusCode).to.equal(200);
            expect(String(response.headers['content-type'])).to.startWith('application/json');
            expect(JSON.parse(response.payload)).to.equal(JSON.parse(Fs.readFileSync(GIT_SWAGGER_FILE, 'utf8')));
        });

        it('serves a Swagger UI page at /api/swagger with its assets', async () => {
            const page = await context.server.inject('/api/swagger');
            expect(page.statusCode).to.equal(200);
            expect(page.payload).to.contain('swagger-ui-bundle.js');
            const script = await context.server.inject('/api/swagger/assets/swagger-ui-bundle.js');
            expect(script.statusCode).to.equal(200);
            const outside = await context.server.inject('/api/swagger/assets/package.json');
            expect(outside.statusCode).to.equal(404);
        });
    });
});
