import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { registerErrorShapes } from '../../../lib/errors.ts';
import { readDeploySpecs, registerDeployApi } from '../../../lib/spec/deploy-loader.ts';
import { methodNames } from '../../../plugins/sso/methods.ts';
import { ROOT_DIR } from '../../../server.ts';
import { type DeployTestServer, deployTestServer } from '../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../helpers/server.ts';
import { openApiSchemaErrors } from '../../helpers/swagger-document.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SPECS_DIR = Path.join(ROOT_DIR, 'specs', 'deploy');

type Node = Record<string, unknown>;
interface Document {
    openapi: string;
    paths: Record<string, Record<string, Node & { operationId: string; tags: string[]; responses: Record<string, Node> }>>;
    components: { schemas: Record<string, Node> };
}

function references(node: unknown): string[] {
    if (Array.isArray(node)) return node.flatMap(references);
    if (!node || typeof node !== 'object') return [];
    return Object.entries(node).flatMap(([key, value]) => (key === '$ref' && typeof value === 'string' ? [value] : references(value)));
}

describe('the deploy API’s OpenAPI document', () => {
    let server: DeployTestServer;

    before(async () => {
        server = await deployTestServer();
    });

    after(async () => {
        await server.context.cleanup();
    });

    it('is served to anyone, valid OpenAPI 3.0, every reference found, one operation per route of the specs', async () => {
        const answer = await fetch(`${server.baseUrl}/api/openapi.json`);
        expect(answer.status).to.equal(200);
        const document = (await answer.json()) as Document;
        expect(document.openapi).to.equal('3.0.3');
        expect(openApiSchemaErrors(document, 3)).to.equal([]);
        const missing = references(document).filter(
            (reference) => !document.components.schemas[reference.replace('#/components/schemas/', '')],
        );
        expect(missing).to.equal([]);

        const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
        const routes = readDeploySpecs(SPECS_DIR).flatMap((spec) => spec.routes.map((route) => ({ group: spec.group, ...route })));
        expect(operations.length).to.equal(routes.length);
        // An operationId is its handler's name, in plugins/deploy/routes/<tag>/handlers.ts.
        for (const operation of operations) {
            const [tag] = operation.tags;
            const handlers = Fs.readFileSync(Path.join(ROOT_DIR, 'plugins', 'deploy', 'routes', tag as string, 'handlers.ts'), 'utf8');
            expect(handlers, operation.operationId).to.contain(`export const ${operation.operationId}:`);
        }
    });

    it('declares the answers the routes give, with their status, and the sign-in methods this start found', async () => {
        const document = (await (await fetch(`${server.baseUrl}/api/openapi.json`)).json()) as Document;
        const created = document.paths['/api/apps']?.post?.responses['201'];
        expect(created?.content).to.equal({ 'application/json': { schema: { $ref: '#/components/schemas/AppAnswer' } } });
        expect(Object.keys(document.paths['/api/apps/{name}/deploy']?.post?.responses ?? {})).to.equal(['202', 'default']);
        expect(document.components.schemas.SignInMethod?.enum).to.equal(['', 'recipe', ...methodNames()]);
        // A sign-in field is declared once and referenced by the draft and by a sign-in change alike.
        const draft = document.paths['/api/apps/{name}/draft']?.put?.requestBody as Node;
        const change = document.paths['/api/apps/{name}/sso']?.post?.requestBody as Node;
        for (const body of [draft, change]) {
            expect(JSON.stringify(body)).to.contain('"samlAcs":{"$ref":"#/components/schemas/SamlAcs"}');
        }

        // The recipes' own schema (self-contained, for recipe authors' editors) bounds the same fields alike.
        const recipeSchema = JSON.parse(Fs.readFileSync(Path.join(ROOT_DIR, 'recipes', 'recipe.schema.json'), 'utf8')) as {
            properties: { samlAcs: Node; login: { properties: { path: Node } } };
        };
        const { SamlAcs, LoginChoice } = document.components.schemas as Record<string, Node & { properties?: Record<string, Node> }>;
        expect(recipeSchema.properties.samlAcs.maxLength).to.equal(SamlAcs?.maxLength);
        expect(recipeSchema.properties.samlAcs.format).to.equal(SamlAcs?.format);
        expect(recipeSchema.properties.login.properties.path.maxLength).to.equal(LoginChoice?.properties?.path?.maxLength);
    });
});

describe('checking answers against their schemas', () => {
    it('turns an answer that does not match its route’s schema into a 500 that names where, and lets a matching one through', async () => {
        const folder = temporaryDirectory();
        Fs.mkdirSync(Path.join(folder, 'specs', 'schemas'), { recursive: true });
        Fs.writeFileSync(
            Path.join(folder, 'specs', 'schemas', 'things.yaml'),
            'Thing:\n  type: object\n  required: [name]\n  properties:\n    name: { type: string }\n    size: { type: integer, nullable: true }\n',
        );
        Fs.writeFileSync(
            Path.join(folder, 'specs', 'things.yaml'),
            [
                'group: things',
                'prefix: /api',
                'role: public',
                'routes:',
                "  - { method: GET, path: /good, handler: good, response: { $ref: '#/definitions/Thing' } }",
                "  - { method: GET, path: /bad, handler: bad, response: { $ref: '#/definitions/Thing' } }",
                '',
            ].join('\n'),
        );
        Fs.mkdirSync(Path.join(folder, 'routes', 'things'), { recursive: true });
        Fs.writeFileSync(
            Path.join(folder, 'routes', 'things', 'handlers.ts'),
            "export const good = () => ({ name: 'a', size: null });\nexport const bad = () => ({ size: 'big' });\n",
        );
        const server = Hapi.server();
        const logged: string[] = [];
        server.events.on({ name: 'request', channels: 'app' }, (_request, event) => logged.push(String((event.error as Error)?.message)));
        registerErrorShapes(server, 'http://127.0.0.1:3000/api/swagger');
        await registerDeployApi(server, {
            specsDir: Path.join(folder, 'specs'),
            handlersRoot: Path.join(folder, 'routes'),
            checkResponses: true,
        });

        const good = await server.inject('/api/good');
        expect(good.statusCode).to.equal(200);
        expect(good.result).to.equal({ name: 'a', size: null });
        const bad = await server.inject('/api/bad');
        expect(bad.statusCode).to.equal(500);
        expect(bad.result).to.equal({ error: 'internal server error' });
        expect(logged.join('\n')).to.contain(
            "the answer does not match the schema of things.bad: / must have required property 'name'; /size must be integer",
        );
        Fs.rmSync(folder, { recursive: true, force: true });
    });
});
