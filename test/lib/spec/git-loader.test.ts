import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import Hapi from '@hapi/hapi';

import { registerErrorShapes } from '../../../lib/errors.ts';
import { gitOperations, readSwagger, registerGitApi, type SwaggerDocument } from '../../../lib/spec/git-loader.ts';
import { organizations } from '../../../plugins/git/domain/orgs/org-service.ts';
import { GIT_SWAGGER_FILE } from '../../../server.ts';
import { createTestServer, createTestUser, temporaryDirectory, type TestServer, type TestUser } from '../../helpers/server.ts';
import { swaggerDocumentErrors } from '../../helpers/swagger-document.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SWAGGER_URL = 'http://127.0.0.1:3000/api/swagger';

/** Operations still answering 501; this list only ever shrinks as issues land. */
const STILL_MISSING: string[] = [];

describe('the git API loader', () => {
    let context: TestServer;
    let admin: TestUser;
    let headers: { authorization: string };

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { admin: true });
        headers = admin.headers;
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
        it("refuses a body field of the wrong type with 422 in Go's JSON decoder's words", async () => {
            const response = await context.server.inject({ method: 'POST', url: '/api/v1/markdown', headers, payload: { Text: 5 } });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.equal(
                '[]: json: cannot unmarshal number into Go struct field MarkdownOption.Text of type string',
            );
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

        it('refuses a query value outside an enum the route checks', async () => {
            const response = await context.server.inject({ url: '/api/v1/admin/packages?type=bogus', headers });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.equal('[type]: In');
        });

        it('accepts repeated values of a repeatable query parameter (then reaches the handler)', async () => {
            const response = await context.server.inject({
                url: '/api/v1/notifications?status-types=unread&status-types=pinned&subject-type=issue',
                headers,
            });
            expect(response.statusCode).to.equal(200);
        });

        it("leaves to the handler the query parameters Gitea's handlers read themselves", async () => {
            const response = await context.server.inject({ url: '/api/v1/notifications?since=yesterday', headers });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.startWith('parsing time "yesterday"');
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

        it("reports the first failing body field, in the Go struct's order, by its Go name", async () => {
            const response = await context.server.inject({ method: 'POST', url: '/api/v1/admin/users', headers, payload: {} });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.equal('[Username]: Required');
            const hook = await context.server.inject({ method: 'POST', url: '/api/v1/admin/hooks', headers, payload: { type: 'gitea' } });
            expect((hook.result as { message: string }).message).to.equal('[Config]: Required');
        });

        it("leaves page and limit to Gitea's lenient paging rules", async () => {
            // Other tests make organisations too: the bad values stand for the defaults, whatever the first page holds.
            await organizations(context.server).create(admin.user, { username: 'pagedorg' }, admin.user);
            const defaults = await context.server.inject({ url: '/api/v1/admin/orgs', headers });
            const response = await context.server.inject({ url: '/api/v1/admin/orgs?page=abc&limit=-3', headers });
            expect(response.statusCode).to.equal(200);
            expect(response.headers['x-total-count']).to.equal(defaults.headers['x-total-count']);
            expect(response.result).to.equal(defaults.result);
            expect((response.result as Array<{ username: string }>).map((org) => org.username)).to.include('pagedorg');
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

    describe("request binding as Gitea's", () => {
        const FORM = 'application/x-www-form-urlencoded';
        const send = async (method: string, url: string, payload?: string, type?: string) =>
            await context.server.inject({ method, url, headers: type ? { ...headers, 'content-type': type } : headers, payload });
        const messageOf = (response: { result: unknown }) => (response.result as { message: string }).message;
        const multipartBody = (parts: Array<[string, string, string?]>) =>
            parts
                .map(([name, value, filename]) => {
                    const disposition = `form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}`;
                    return `--gatehouse\r\nContent-Disposition: ${disposition}\r\n\r\n${value}\r\n`;
                })
                .join('') + '--gatehouse--\r\n';

        it("reads an urlencoded form by the Go fields' snake_case names, not the JSON names", async () => {
            await createTestUser(context.server, { name: 'formrename' });
            const byJsonName = await send('POST', '/api/v1/admin/users/formrename/rename', 'new_username=formrenamed', FORM);
            expect(byJsonName.statusCode).to.equal(422);
            expect(messageOf(byJsonName)).to.equal('[NewName]: Required');
            const byFormName = await send('POST', '/api/v1/admin/users/formrename/rename', 'new_name=formrenamed', FORM);
            expect(byFormName.statusCode).to.equal(204);

            expect(messageOf(await send('POST', '/api/v1/orgs', 'username=formorg', FORM))).to.equal('[UserName]: Required');
            const org = await send('POST', '/api/v1/orgs', 'user_name=formorg&full_name=Form+Org&repo_admin_change_team_access=on', FORM);
            expect(org.statusCode).to.equal(201);
            expect(org.result).to.include({ username: 'formorg', full_name: 'Form Org', repo_admin_change_team_access: true });
        });

        it('reads a multipart form the same way, its files aside', async () => {
            const body = multipartBody([
                ['user_name', 'multiorg'],
                ['full_name', 'not a field', 'name.txt'],
                ['description', 'From a form'],
            ]);
            const response = await send('POST', '/api/v1/orgs', body, 'multipart/form-data; boundary=gatehouse');
            expect(response.statusCode).to.equal(201);
            expect(response.result).to.include({ username: 'multiorg', full_name: '', description: 'From a form' });
            const broken = await send('POST', '/api/v1/orgs', 'garbage', 'multipart/form-data; boundary=gatehouse');
            expect(messageOf(broken)).to.equal('[]: multipart: NextPart: EOF');
            const unbounded = await send('POST', '/api/v1/orgs', body, 'multipart/form-data');
            expect(messageOf(unbounded)).to.equal('[]: no multipart boundary param in Content-Type');
        });

        it('refuses a form value Go cannot convert, naming it by its form name, and a malformed form', async () => {
            const user = 'username=formuser&email=formuser%40example.com&password=secret123';
            const cases: Array<[string, string]> = [
                [`${user}&source_id=abc`, '[source_id]: Value could not be parsed as integer'],
                [`${user}&send_notify=perhaps`, '[send_notify]: Value could not be parsed as boolean'],
                [`${user}&full_name=%zz`, '[]: invalid URL escape "%zz"'],
                [`${user};x=1`, '[]: invalid semicolon separator in query'],
            ];
            for (const [payload, message] of cases) {
                const response = await send('POST', '/api/v1/admin/users', payload, FORM);
                expect(response.statusCode, payload).to.equal(422);
                expect(messageOf(response), payload).to.equal(message);
            }

            expect(await context.database.knex('users').where({ lower_name: 'formuser' }).first()).to.not.exist();
        });

        it('takes a repeated form field as a list, and ignores the body of a DELETE as Go does', async () => {
            const target = await createTestUser(context.server, { name: 'formbadges' });
            for (const slug of ['form-a', 'form-b']) {
                await context.database.knex('badges').insert({ slug, description: slug, image_url: '' });
            }

            const given = await send('POST', '/api/v1/admin/users/formbadges/badges', 'badge_slugs=form-a&badge_slugs=form-b', FORM);
            expect(given.statusCode).to.equal(204);
            expect(await context.database.knex('user_badges').where({ user_id: target.user.id }).count({ count: '*' }).first()).to.equal({
                count: 2,
            });
            const taken = await send('DELETE', '/api/v1/admin/users/formbadges/badges', 'badge_slugs=form-a', FORM);
            expect(messageOf(taken)).to.equal('[BadgeSlugs]: Required');
        });

        it('refuses a POST or PUT body without a Content-Type: 422 `[]: Empty Content-Type`', async () => {
            const post = await send('POST', '/api/v1/orgs', '{"username":"typelessorg"}');
            expect(post.statusCode).to.equal(422);
            expect(post.result).to.equal({ message: '[]: Empty Content-Type', url: SWAGGER_URL });
            expect(await context.database.knex('users').where({ lower_name: 'typelessorg' }).first()).to.not.exist();
            await organizations(context.server).create(admin.user, { username: 'secretsorg' }, admin.user);
            const put = await send('PUT', '/api/v1/orgs/secretsorg/actions/secrets/TYPELESS', '{"data":"x"}');
            expect(messageOf(put)).to.equal('[]: Empty Content-Type');
        });

        it('binds a PATCH without a Content-Type from the query, as Go binds an empty form', async () => {
            await organizations(context.server).create(admin.user, { username: 'patchorg' }, admin.user);
            const response = await send('PATCH', '/api/v1/orgs/patchorg?full_name=From+the+query');
            expect(response.statusCode).to.equal(200);
            expect(response.result).to.include({ full_name: 'From the query' });
        });

        it('ignores whatever body comes to an operation that takes none', async () => {
            const response = await send('PUT', '/api/v1/notifications', '{"not": json', 'application/json');
            expect(response.statusCode).to.equal(205);
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

        it("answers 422 for malformed JSON, in Go's JSON scanner's words", async () => {
            const cases: Array<[string, string]> = [
                ['{"Text": ', '[]: unexpected EOF'],
                ['{"Text": x}', "[]: invalid character 'x' looking for beginning of value"],
                ['{"Text" "a"}', "[]: invalid character '\"' after object key"],
                ['[]', '[]: json: cannot unmarshal array into Go value of type structs.MarkdownOption'],
            ];
            for (const [payload, message] of cases) {
                const response = await context.server.inject({
                    method: 'POST',
                    url: '/api/v1/markdown',
                    headers: { ...headers, 'content-type': 'application/json' },
                    payload,
                });
                expect(response.statusCode, payload).to.equal(422);
                expect(response.result, payload).to.equal({ message, url: SWAGGER_URL });
            }
        });

        it("reads a path as Gitea's router does, trailing and repeated slashes dropped: another method on it is 405", async () => {
            const list = await context.server.inject({ url: '/api/v1/licenses/', headers });
            expect(list.statusCode).to.equal(200);
            expect((await context.server.inject({ url: '/api//v1//licenses//?limit=1', headers })).statusCode).to.equal(200);
            const wrongMethod = await context.server.inject({ method: 'DELETE', url: '/api/v1/licenses/', headers });
            expect(wrongMethod.statusCode).to.equal(405);
            expect(wrongMethod.headers.allow).to.equal('GET');
            const emptyName = await context.server.inject({ method: 'PUT', url: '/api/v1/orgs/acme/actions/secrets/', headers });
            expect(emptyName.statusCode).to.equal(405);
            expect((await context.server.inject({ url: '/api/v1/no/such/thing/', headers })).statusCode).to.equal(404);
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

        it('answers 422 for a body type it cannot read, as Gitea does', async () => {
            for (const type of ['application/x-unknown', 'not a type']) {
                const response = await context.server.inject({
                    method: 'POST',
                    url: '/api/v1/markdown',
                    headers: { ...headers, 'content-type': type },
                    payload: 'x',
                });
                expect(response.statusCode, type).to.equal(422);
                expect((response.result as { message: string }).message).to.equal('[]: Unsupported Content-Type');
            }
        });
    });

    describe('the documents', () => {
        it('serves the Swagger document at /swagger.v1.json', async () => {
            const response = await context.server.inject('/swagger.v1.json');
            expect(response.statusCode).to.equal(200);
            expect(String(response.headers['content-type'])).to.startWith('application/json');
            expect(JSON.parse(response.payload)).to.equal(JSON.parse(Fs.readFileSync(GIT_SWAGGER_FILE, 'utf8')));
        });

        it('serves a document that passes Swagger 2.0 validation', async () => {
            const response = await context.server.inject('/swagger.v1.json');
            expect(swaggerDocumentErrors(JSON.parse(response.payload) as Record<string, unknown>)).to.equal([]);
        });

        it('finds what Swagger 2.0 validation finds wrong', () => {
            const document = JSON.parse(Fs.readFileSync(GIT_SWAGGER_FILE, 'utf8')) as SwaggerDocument;
            const { paths, definitions } = document;
            const user = paths['/admin/users/{username}'] ?? {};
            Object.assign(user.delete ?? {}, { responses: { '204': {} }, parameters: [] });
            Object.assign(user.patch ?? {}, { operationId: 'adminCreateUser', responses: { '200': { $ref: '#/responses/Nowhere' } } });
            definitions.CreateUserOption = { ...definitions.CreateUserOption, required: ['username', 'nickname'] };
            expect(swaggerDocumentErrors(document as unknown as Record<string, unknown>)).to.equal([
                "/paths/~1admin~1users~1{username}/delete/responses/204 must have required property 'description'",
                "/paths/~1admin~1users~1{username}/delete/responses/204 must have required property '$ref'",
                '/paths/~1admin~1users~1{username}/delete/responses/204 must match exactly one schema in oneOf',
                '#/responses/Nowhere does not resolve',
                'DELETE /admin/users/{username}: path parameters [] do not match placeholders [username]',
                'PATCH /admin/users/{username}: operationId adminCreateUser is not unique',
                '/definitions/CreateUserOption: required property nickname is not declared',
            ]);
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
