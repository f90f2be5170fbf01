/**
 * A fuzz of both APIs: every route of specs/git/swagger.v1.json and specs/deploy/*.yaml (and the other routes under
 * /api the server registers, the package registry's among them), sent hostile input by a signed-in administrator
 * (wrong types, huge and odd strings, nesting, `__proto__` keys, `..` and `%00` in paths, odd headers). No answer
 * may be a 5xx; 501 only from an operation the loader lists as without a handler. The cases come from a seeded
 * generator, so a failure names the route and case that reproduce it. Routes that start a run are fuzzed through
 * their handlers; the runs they ask for are counted, not started: nothing is deployed.
 */
import Code from '@hapi/code';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { errorShapeFor } from '../../../lib/errors.ts';
import { runs } from '../../../plugins/deploy/domain/runs/run-service.ts';
import { gitOperations, readSwagger } from '../../../lib/spec/git-loader.ts';
import type { JsonSchema } from '../../../lib/spec/schema-to-joi.ts';
import { GIT_SWAGGER_FILE } from '../../../server.ts';
import { type DeployTestServer, deployTestServer } from '../../helpers/deploy-session.ts';
import { createTestUser } from '../../helpers/server.ts';
import { seededRandom } from '../../helpers/seeded-random.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const CASES_PER_ROUTE = 12;
const UNREACHABLE_UPSTREAM = 'http://127.0.0.1:9';
/** Routes that would end the administrator's session, which every later case needs. */
/** Routes that end the caller's own session: the fuzz signs in once and goes on as that administrator. */
const SKIPPED = new Set(['POST /api/auth/logout', 'DELETE /api/account/sessions/{id}']);

function seedOf(text: string): number {
    let hash = 2_166_136_261;
    for (const character of text) {
        hash = Math.imul(hash ^ (character.codePointAt(0) ?? 0), 16_777_619);
    }

    return hash >>> 0;
}

type Random = () => number;
const pick = <T>(random: Random, values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;

const ODD_STRINGS = [
    '',
    ' ',
    '\u0000',
    '\ud800',
    '\u202e\u0661\u0662',
    'e\u0301\u0301\u0301',
    '\ufeff',
    '\u{1f4a9}',
    'İı',
    '../../../etc/passwd',
    '..',
    '%00',
    '{{GATEWAY}}',
    '${HOME}',
    "'; DROP TABLE users; --",
    '<script>alert(1)</script>',
    'http://127.0.0.1:9/',
    '-1',
    '99999999999999999999',
    'a'.repeat(300),
    'x'.repeat(70_000),
    'line\r\nX-Injected: 1',
];

const PATH_VALUES = [
    '..',
    '%2e%2e',
    '..%2F..%2Fetc%2Fpasswd',
    '%00',
    'a%00b',
    '%FF',
    '%E2%80%AE',
    '%F0%9F%92%A9',
    '-1',
    '0',
    '99999999999999999999',
    '1e5',
    '%20',
    '.git',
    'x%0D%0ASet-Cookie:%20a=b',
    'a'.repeat(3_000),
];

const CONTENT_TYPES = [
    'application/json',
    'application/json',
    'application/json; charset=utf-16',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data',
    'multipart/form-data; boundary=fuzz',
    'application/octet-stream',
    ';;;',
    `application/json; charset=${'x'.repeat(1_000)}`,
];

const ODD_HEADERS: Array<Record<string, string>> = [
    {},
    {},
    { accept: 'application/xml;q=abc, */*;q=-1' },
    { 'accept-encoding': 'gzip;q=abc, br;q=2' },
    { 'content-encoding': 'gzip' },
    { 'x-forwarded-for': '999.999.999.999, ::g, <script>' },
    { range: 'bytes=abc-' },
    { 'if-none-match': '"\u0001"' },
    { 'accept-language': 'x'.repeat(4_000) },
];

/** A hostile JSON value; `depth` bounds the nesting of the ones built from others. */
function hostileValue(random: Random, depth = 0): unknown {
    const kind = Math.floor(random() * (depth > 2 ? 5 : 9));
    switch (kind) {
        case 0:
        case 1:
            return pick(random, ODD_STRINGS);
        case 2:
            return pick(random, [-1, 0, 1.5, 1e308, -1e308, 2 ** 53 + 1, -0]);
        case 3:
            return pick(random, [true, false, null]);
        case 4:
            return pick(random, [[], {}, '']);
        case 5:
            return [hostileValue(random, depth + 1), hostileValue(random, depth + 1)];
        case 6:
            return Array.from({ length: 1_000 }, () => 1);
        case 7:
            return deeplyNested(64);
        default:
            return { nested: hostileValue(random, depth + 1), constructor: { prototype: { polluted: true } } };
    }
}

function deeplyNested(levels: number): unknown {
    let value: unknown = 'bottom';
    for (let level = 0; level < levels; level += 1) {
        value = { a: value };
    }

    return value;
}

/** The key JSON.stringify writes for `__proto__`, which an object literal cannot hold as its own key. */
const PROTO_MARK = '__fuzz_proto__';

/** A body for a route whose body has these properties: some of them with hostile values, or something else altogether. */
function hostileBody(random: Random, properties: string[]): string {
    const roll = random();
    if (roll < 0.15) {
        return pick(random, ['{"unterminated": ', '[', '\u0000', '{"a":1}{"b":2}', '', 'null', '[]', '12', '"text"']);
    }

    if (roll < 0.3) {
        return JSON.stringify(hostileValue(random));
    }

    const body: Record<string, unknown> = {};
    for (const property of properties) {
        if (random() < 0.6) {
            body[property] = hostileValue(random);
        }
    }

    if (random() < 0.3) {
        body[PROTO_MARK] = { polluted: true, isAdmin: true };
    }

    if (random() < 0.2) {
        body[pick(random, ODD_STRINGS).slice(0, 300)] = hostileValue(random);
    }

    return JSON.stringify(body).replace(`"${PROTO_MARK}"`, '"__proto__"');
}

/** Percent-encoded; a lone surrogate, which has no UTF-8, as the bytes of one (invalid UTF-8 for the server). */
function percentEncoded(value: string): string {
    return value
        .replace(/[\ud800-\udfff]/g, 'SURROGATE')
        .split('SURROGATE')
        .map(encodeURIComponent)
        .join('%ED%A0%80');
}

function hostileQuery(random: Random, keys: string[]): string {
    const pairs: string[] = [];
    for (const key of [...keys, '__proto__', 'constructor[prototype][x]']) {
        if (random() < 0.5) {
            continue;
        }

        const value = percentEncoded(pick(random, ODD_STRINGS).slice(0, 2_000));
        const name = encodeURIComponent(key);
        pairs.push(random() < 0.2 ? `${name}=${value}&${name}=${value}` : random() < 0.1 ? `${name}[]=${value}` : `${name}=${value}`);
    }

    return pairs.length > 0 ? `?${pairs.join('&')}` : '';
}

/** Each path parameter: half the time one that names something there (so the case reaches the handler), else a hostile one. */
function withHostileParams(random: Random, path: string, known: Record<string, string>): string {
    return path.replace(/\{(\w+)(\*\d*|\?)?\}/g, (_match, name: string) =>
        random() < 0.5 ? (known[name] ?? '1') : pick(random, PATH_VALUES),
    );
}

/** The property names a JSON schema declares for a body, through `$ref`s to the Swagger definitions. */
function propertiesOf(schema: JsonSchema | undefined, definitions: Record<string, JsonSchema>): string[] {
    if (!schema) {
        return [];
    }

    const ref = (schema as { $ref?: string }).$ref;
    const resolved = ref ? definitions[ref.replace('#/definitions/', '')] : schema;
    return Object.keys((resolved as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
}

/** The keys of a joi object schema (or of a validator that describes one). */
function keysOf(schema: unknown): string[] {
    const described = schema as { describe?: () => { keys?: Record<string, unknown> } } | undefined;
    return typeof described?.describe === 'function' ? Object.keys(described.describe().keys ?? {}) : [];
}

interface FuzzRoute {
    method: string;
    path: string;
    /** The loader's name for the route: the operationId, or `group.handler` on the deploy side. */
    id: string;
    queryKeys: string[];
    bodyProperties: string[];
}

interface Finding {
    route: string;
    case: number;
    request: string;
    status: number;
    body: string;
}

describe('fuzz: every route of both APIs, hostile input from an administrator', { timeout: 240_000 }, () => {
    let deploy: DeployTestServer;
    let server: Server;
    let gitHeaders: Record<string, string>;
    let deployHeaders: Record<string, string>;
    let known: Record<string, string>;
    let runsAsked = 0;

    before(async () => {
        deploy = await deployTestServer({ HUB_URL: UNREACHABLE_UPSTREAM, HUB_REGISTRY_URL: UNREACHABLE_UPSTREAM });
        server = deploy.context.server;
        const gitAdmin = await createTestUser(server, { admin: true });
        gitHeaders = gitAdmin.headers;
        const cookies = [...deploy.admin.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        deployHeaders = { cookie: cookies, 'x-csrf-token': deploy.admin.cookies.get('dp_csrf') ?? '' };
        // Something for the path parameters to name: an organisation on the git side, an app on the deploy side.
        const org = await server.inject({ method: 'POST', url: '/api/v1/orgs', headers: gitHeaders, payload: { username: 'fuzzorg' } });
        expect(org.statusCode).to.equal(201);
        const app = await deploy.admin.post('/api/apps', { name: 'fuzzapp', image: 'nginx' });
        expect(app.status).to.equal(201);
        // Open on purpose (no identity provider here), so that the cases get past the access check to the others.
        expect((await deploy.admin.put('/api/apps/fuzzapp/draft', { auth: { access: 'public' } })).status).to.equal(200);
        known = { org: 'fuzzorg', owner: 'fuzzorg', username: gitAdmin.user.name, name: 'fuzzapp', secretname: 'FUZZ' };
        // A route that starts a run goes through its handler and every check there (the filled compose file's lint,
        // the recipe's paths, the admin account...), and the run it asks for is counted, not started: the fuzz deploys
        // nothing.
        runs(server).start = async () => {
            runsAsked += 1;
            return 0;
        };
    });

    after(async () => {
        await deploy?.context.cleanup();
    });

    /** Every route the two loaders made from the specs, with what its validation declares. */
    const specRoutes = (): FuzzRoute[] => {
        const document = readSwagger(GIT_SWAGGER_FILE);
        const { definitions } = document;
        const operations = new Map(gitOperations(document).map((operation) => [operation.operationId, operation]));
        return server
            .table()
            .filter((route) => (route.settings.tags ?? []).includes('api') && !SKIPPED.has(`${route.method.toUpperCase()} ${route.path}`))
            .map((route) => {
                const parameters = operations.get(String(route.settings.id))?.parameters as
                    Array<{ in: string; schema?: JsonSchema }> | undefined;
                const body = parameters?.find((parameter) => parameter.in === 'body');
                return {
                    method: route.method.toUpperCase(),
                    path: route.path,
                    id: String(route.settings.id),
                    queryKeys: keysOf(route.settings.validate?.query),
                    bodyProperties: body ? propertiesOf(body.schema, definitions) : keysOf(route.settings.validate?.payload),
                };
            });
    };

    const send = async (route: FuzzRoute, random: Random): Promise<{ request: string; response: ServerInjectResponse }> => {
        const url = `${withHostileParams(random, route.path, known)}${hostileQuery(random, route.queryKeys)}`;
        const headers: Record<string, string> = {
            ...(errorShapeFor(route.path) === 'gitea' ? gitHeaders : deployHeaders),
            ...pick(random, ODD_HEADERS),
        };
        let payload: string | undefined;
        if (route.method !== 'GET' && route.method !== 'HEAD') {
            headers['content-type'] = pick(random, CONTENT_TYPES);
            payload = hostileBody(random, route.bodyProperties);
        }

        const response = await server.inject({ method: route.method, url, headers, payload });
        const shownBody = payload === undefined ? '' : ` <- ${headers['content-type']}: ${payload.slice(0, 120)}`;
        return { request: `${route.method} ${url.slice(0, 200)}${shownBody}`, response };
    };

    it('answers no hostile request with a 5xx, on every route of both specs', async () => {
        const routes = specRoutes();
        const missing = new Set(server.app.missingOperations);
        expect(routes.filter((route) => route.path.startsWith('/api/v1/')).length).to.be.above(60);
        expect(routes.filter((route) => !route.path.startsWith('/api/v1/')).length).to.be.above(60);
        const findings: Finding[] = [];
        const statuses = new Map<number, number>();
        for (const route of routes) {
            const random = seededRandom(seedOf(`${route.method} ${route.path}`));
            for (let index = 0; index < CASES_PER_ROUTE; index += 1) {
                const { request, response } = await send(route, random);
                const status = response.statusCode;
                statuses.set(status, (statuses.get(status) ?? 0) + 1);
                const unimplemented = status === 501 && missing.has(route.id);
                // The image look-ups' upstream is a closed port here: a well-formed look-up finds it down.
                const upstreamDown = status === 502 && route.path.startsWith('/api/hub/') && response.payload.includes('unreachable');
                // The fast tier runs without a Docker engine (npm run test:fast): routes that need it say so with a 503.
                const engineDown = status === 503 && response.payload.includes('the Docker engine is not reachable');
                if (status >= 500 && !unimplemented && !upstreamDown && !engineDown) {
                    findings.push({
                        route: `${route.method} ${route.path}`,
                        case: index,
                        request,
                        status,
                        body: response.payload.slice(0, 200),
                    });
                }
            }
        }

        expect(findings).to.equal([]);
        // A run's route reaches its handler here: a plain deploy of the app gets as far as asking for its run.
        const asked = runsAsked;
        expect((await deploy.admin.put('/api/apps/fuzzapp/draft', { auth: { access: 'public' } })).status).to.equal(200);
        const deployed = await deploy.admin.post('/api/apps/fuzzapp/deploy', { acceptRisks: true });
        expect(deployed.status, deployed.text).to.equal(202);
        expect(runsAsked).to.equal(asked + 1);
        // The administrator stayed signed in: the cases reached validation and the handlers, not a 401.
        const unauthorized = statuses.get(401) ?? 0;
        expect(unauthorized).to.be.below(routes.length);
        expect((await server.inject({ url: '/api/auth/me', headers: deployHeaders })).statusCode).to.equal(200);
        expect((await server.inject({ url: '/api/v1/admin/orgs', headers: gitHeaders })).statusCode).to.equal(200);
    });
});
