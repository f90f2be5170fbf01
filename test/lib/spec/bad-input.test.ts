/**
 * Every route of both services, fed bad input by an administrator who gets past authentication: odd path
 * parameters, query values of the wrong type, malformed and mistyped bodies. None may answer 5xx (501 aside,
 * which is not an error of the input), each error must come in its service's own shape, and refused input may
 * not add or remove a row anywhere.
 */
import Code from '@hapi/code';
import type { RequestRoute, Server, ServerInjectResponse } from '@hapi/hapi';
import * as Lab from '@hapi/lab';
import type Joi from 'joi';

import { errorShapeFor } from '../../../lib/errors.ts';
import { type DeployTestServer, deployTestServer } from '../../helpers/deploy-session.ts';
import { createTestUser, ON_MYSQL } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const UNREACHABLE_UPSTREAM = 'http://127.0.0.1:9';
const HUB_PREFIX = '/api/hub/';

const PATH_VALUES = [
    '%00',
    'a'.repeat(300),
    '..%2F..%2Fetc',
    '-1',
    '0',
    '99999999999999999999',
    '%E5%90%8D%E5%89%8D',
    "x'%20OR%20'1'%3D'1",
    '%F0%9F%92%A9',
    '%25',
];

const QUERY_VALUES = ['abc', '-1', '0', '1e999', '99999999999999999999', '', '%00', '%FF', 'a'.repeat(3000), 'true&%5B%5D=1'];

/** Bodies sent as they are, whatever the route expects. */
const RAW_BODIES: Array<{ type: string; body: string }> = [
    { type: 'application/json', body: '{"unterminated": ' },
    { type: 'application/json', body: '[]' },
    { type: 'application/json', body: 'null' },
    { type: 'application/json', body: '"a string"' },
    { type: 'application/json', body: '12' },
    { type: 'application/json', body: '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}' },
    { type: 'text/plain', body: 'plain text' },
    { type: 'application/x-www-form-urlencoded', body: 'a=1&b=2' },
];

/** Wrong types for a declared property: each replaces one property of an otherwise empty object. */
const WRONG_VALUES: unknown[] = [{ nested: true }, ['list'], 12.5, -1, true, null, 'x'.repeat(70_000), '\u0000', ''];

/** act_runner's protocol (Connect over HTTP) answers errors in Connect's shape, `{code, message}`. */
const RUNNER_PREFIX = '/api/actions/';

/** Routes that would end the signed-in session the sweep depends on. */
const SKIPPED = new Set(['POST /api/auth/logout']);

interface Finding {
    request: string;
    status: number;
    body: string;
}

function keysOf(schema: unknown): string[] {
    if (!schema || typeof (schema as Joi.Schema).describe !== 'function') {
        return [];
    }

    const description = (schema as Joi.Schema).describe() as { keys?: Record<string, unknown> };
    return Object.keys(description.keys ?? {});
}

function withParams(path: string, value: string): string {
    return path.replace(/\{(\w+)(\*\d*|\?)?\}/g, value);
}

/** The routes the two services register under /api, as `METHOD path` and hapi's route. */
function apiRoutes(server: Server): RequestRoute[] {
    return server
        .table()
        .filter((route) => route.path.startsWith('/api/') && !SKIPPED.has(`${route.method.toUpperCase()} ${route.path}`))
        .filter((route) => route.method !== '*' && !route.path.startsWith('/api/swagger'));
}

describe('bad input, on every route of both services', { timeout: 600_000 }, () => {
    let deploy: DeployTestServer;
    let server: Server;
    let gitHeaders: Record<string, string>;
    let deployHeaders: Record<string, string>;
    const findings: Finding[] = [];

    lab.beforeEach(() => {
        findings.length = 0;
    });

    before(async () => {
        // The image routes ask Docker Hub: here a closed loopback port, so a valid value answers 502 (the upstream is down).
        deploy = await deployTestServer({ HUB_URL: UNREACHABLE_UPSTREAM, HUB_REGISTRY_URL: UNREACHABLE_UPSTREAM });
        server = deploy.context.server;
        gitHeaders = (await createTestUser(server, { admin: true })).headers;
        const cookies = [...deploy.admin.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        deployHeaders = { cookie: cookies, 'x-csrf-token': deploy.admin.cookies.get('dp_csrf') ?? '' };
    });

    after(async () => {
        await deploy?.context.cleanup();
    });

    /**
     * Tables the server's scheduled work writes on its own (Gitea's cron tasks), whatever a request does; and the
     * failed sign-in records: a wrong password or code that is refused is counted as a failure, which is the point.
     */
    const BACKGROUND_TABLES = new Set(['cron_tasks', 'cron_executions', 'auth_failures']);

    /** Rows per table of ours (not the database's own, nor those background work writes). */
    const rowCounts = async (): Promise<Record<string, number>> => {
        const { knex } = server.app;
        const tables: string[] = ON_MYSQL
            ? ((await knex.raw('SHOW TABLES'))[0] as Array<Record<string, string>>).map((row) => Object.values(row)[0] ?? '')
            : ((await knex.raw("SELECT name FROM sqlite_master WHERE type = 'table'")) as Array<{ name: string }>).map((row) => row.name);
        const counts: Record<string, number> = {};
        for (const table of tables.filter((name) => !name.startsWith('sqlite_') && !BACKGROUND_TABLES.has(name))) {
            const row = (await knex(table).count({ count: '*' }).first()) as { count: number | string } | undefined;
            counts[table] = Number(row?.count ?? 0);
        }

        return counts;
    };

    const send = async (method: string, url: string, options: { type?: string; body?: string } = {}): Promise<ServerInjectResponse> => {
        const path = url.split('?')[0] ?? url;
        const headers: Record<string, string> = { ...(errorShapeFor(path) === 'gitea' ? gitHeaders : deployHeaders) };
        if (options.type) {
            headers['content-type'] = options.type;
        }

        const response = await server.inject({ method, url, headers, payload: options.body });
        check(`${method} ${url.slice(0, 200)}${options.body ? ` <- ${options.body.slice(0, 80)}` : ''}`, path, response);
        return response;
    };

    const check = (request: string, path: string, response: ServerInjectResponse): void => {
        const { statusCode } = response;
        const upstreamDown = statusCode === 502 && path.startsWith(HUB_PREFIX) && response.payload.includes('unreachable');
        if (statusCode >= 500 && statusCode !== 501 && !upstreamDown) {
            findings.push({ request, status: statusCode, body: response.payload.slice(0, 200) });
            return;
        }

        // Connect answers a content type it does not speak with a bare 415, as the protocol says.
        const bareConnectRefusal = path.startsWith(RUNNER_PREFIX) && statusCode === 415;
        if (statusCode < 400 || bareConnectRefusal) {
            return;
        }

        const body = JSON.parse(response.payload || '{}') as Record<string, unknown>;
        const shaped = path.startsWith(RUNNER_PREFIX)
            ? typeof body.code === 'string' && typeof body.message === 'string'
            : errorShapeFor(path) === 'gitea'
              ? typeof body.message === 'string'
              : typeof body.error === 'string';
        if (!shaped) {
            findings.push({ request, status: statusCode, body: `not in the service's error shape: ${response.payload.slice(0, 200)}` });
        }
    };

    it('answers odd path parameters with 4xx in the service shape', async () => {
        const routes = apiRoutes(server).filter((route) => route.path.includes('{'));
        expect(routes.length).to.be.above(50);
        for (const route of routes) {
            for (const value of PATH_VALUES) {
                await send(route.method.toUpperCase(), withParams(route.path, value));
            }
        }

        expect(findings).to.equal([]);
    });

    it('answers query values of the wrong type with 4xx in the service shape', async () => {
        let sent = 0;
        for (const route of apiRoutes(server)) {
            const path = withParams(route.path, 'fuzz');
            for (const key of keysOf(route.settings.validate?.query)) {
                for (const value of QUERY_VALUES) {
                    await send(route.method.toUpperCase(), `${path}?${encodeURIComponent(key)}=${value}`);
                    sent += 1;
                }

                await send(route.method.toUpperCase(), `${path}?${encodeURIComponent(key)}=1&${encodeURIComponent(key)}=2`);
            }
        }

        expect(sent).to.be.above(100);
        expect(findings).to.equal([]);
    });

    it('answers malformed and mistyped bodies with 4xx in the service shape', async () => {
        const routes = apiRoutes(server).filter((route) => ['post', 'put', 'patch', 'delete'].includes(route.method));
        expect(routes.length).to.be.above(30);
        let compared = 0;
        for (const route of routes) {
            const method = route.method.toUpperCase();
            for (const value of ['fuzz', '1']) {
                const path = withParams(route.path, value);
                const before = await rowCounts();
                const statuses: number[] = [];
                for (const raw of RAW_BODIES) {
                    statuses.push((await send(method, path, raw)).statusCode);
                }

                for (const key of keysOf(route.settings.validate?.payload)) {
                    for (const wrong of WRONG_VALUES) {
                        const body = JSON.stringify({ [key]: wrong });
                        statuses.push((await send(method, path, { type: 'application/json', body })).statusCode);
                    }
                }

                // Refused input writes nothing: when every one of these was refused, no table has gained or lost a row.
                if (statuses.every((status) => status >= 400)) {
                    const after = await rowCounts();
                    const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
                    if (changed.length > 0) {
                        findings.push({
                            request: `${method} ${path}`,
                            status: 0,
                            body: `refused, yet rows changed in ${changed.join(', ')}`,
                        });
                    }

                    compared += 1;
                }
            }
        }

        expect(compared).to.be.above(50);
        expect(findings).to.equal([]);
    });
});
