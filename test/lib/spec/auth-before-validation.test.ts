/**
 * Authentication and access come before validation, on every route of both specs, as Gitea does it: a caller who
 * may not use a route learns that (401 without sign-in, 403 without the role) and nothing about the fields it takes.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { type DeployRouteSpec, readDeploySpec, ROLES } from '../../../lib/spec/deploy-loader.ts';
import { type GitOperation, gitOperations, readSwagger } from '../../../lib/spec/git-loader.ts';
import type { OperationAccess } from '../../../plugins/git/routes/shared/access.ts';
import { GIT_SWAGGER_FILE, ROOT_DIR } from '../../../server.ts';
import { Browser } from '../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../helpers/deploy-session.ts';
import { createTestUser } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const DEPLOY_SPECS_DIR = Path.join(ROOT_DIR, 'specs', 'deploy');

/** Input no route accepts: a path value past every bound, a query of unknown or mistyped values, a body of wrong types. */
const BAD_PATH_VALUE = 'x'.repeat(300);
const BAD_QUERY = '?page=-1&limit=abc&__proto__=1&unknownField=%00';
const BAD_BODY = JSON.stringify({ name: { nested: [1] }, email: 12, role: ['admin'], unknownField: true });

function withBadParams(path: string): string {
    return path.replace(/\{\w+\*?\d*\??\}/g, BAD_PATH_VALUE);
}

interface Answer {
    route: string;
    status: number;
    body: unknown;
}

function deployRoutes(): Array<DeployRouteSpec & { url: string }> {
    return Fs.readdirSync(DEPLOY_SPECS_DIR)
        .filter((file) => /\.ya?ml$/.test(file))
        .flatMap((file) => {
            const spec = readDeploySpec(Path.join(DEPLOY_SPECS_DIR, file));
            return spec.routes.map((route) => ({ ...route, url: `${spec.prefix}${route.path}` }));
        });
}

function gitRoutes(): Array<GitOperation & { url: string; access: OperationAccess }> {
    const document = readSwagger(GIT_SWAGGER_FILE);
    return gitOperations(document).map((operation) => ({
        ...operation,
        url: `${document.basePath}${operation.path}`,
        access: operation['x-gatehouse-access'] as OperationAccess,
    }));
}

async function sendBad(server: Server, method: string, url: string, headers: Record<string, string>): Promise<ServerInjectResponse> {
    const withBody = method !== 'GET' && method !== 'HEAD';
    return await server.inject({
        method,
        url: `${withBadParams(url)}${BAD_QUERY}`,
        headers: withBody ? { ...headers, 'content-type': 'application/json' } : headers,
        payload: withBody ? BAD_BODY : undefined,
    });
}

function answer(route: string, response: ServerInjectResponse): Answer {
    return { route, status: response.statusCode, body: JSON.parse(response.payload || 'null') as unknown };
}

/** The answers other than the one expected of every route. */
function unexpected(answers: Answer[], status: number, body: unknown): Answer[] {
    return answers.filter((found) => found.status !== status || JSON.stringify(found.body) !== JSON.stringify(body));
}

describe('authentication before validation, on every route of both specs', { timeout: 120_000 }, () => {
    let deploy: DeployTestServer;
    let server: Server;

    before(async () => {
        deploy = await deployTestServer();
        server = deploy.context.server;
    });

    after(async () => {
        await deploy?.context.cleanup();
    });

    /** Each route's answer to bad input from the caller the headers make. */
    const answersTo = async (routes: Array<{ method: string; url: string }>, headers: Record<string, string>): Promise<Answer[]> => {
        const answers: Answer[] = [];
        for (const route of routes) {
            answers.push(answer(`${route.method} ${route.url}`, await sendBad(server, route.method, route.url, headers)));
        }

        return answers;
    };

    /** Cookie and CSRF header of a browser, for inject: an anonymous one still holds a CSRF cookie. */
    const browserHeaders = (cookies: Map<string, string>): Record<string, string> => ({
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        'x-csrf-token': cookies.get('dp_csrf') ?? '',
    });

    it('answers an anonymous caller 401 {error} on every deploy route that needs sign-in, whatever the input', async () => {
        const anonymous = new Browser(deploy.baseUrl);
        await anonymous.get('/api/auth/me');
        expect(anonymous.cookies.get('dp_csrf')).to.be.a.string();
        const routes = deployRoutes().filter((route) => route.role !== 'public');
        expect(routes.length).to.be.above(30);
        const answers = await answersTo(routes, browserHeaders(anonymous.cookies));
        expect(unexpected(answers, 401, { error: 'not signed in' })).to.equal([]);
    });

    it('answers a signed-in caller without the role 403 {error} on every deploy route above it, whatever the input', async () => {
        const viewer = await deploy.signInAs('viewer');
        const routes = deployRoutes().filter((route) => ROLES.indexOf(route.role) > ROLES.indexOf('viewer'));
        expect(routes.length).to.be.above(15);
        const answers = await answersTo(routes, browserHeaders(viewer.cookies));
        expect(unexpected(answers, 403, { error: 'your role does not allow this' })).to.equal([]);
    });

    it('answers an anonymous caller 401 "token is required" on every git operation that needs sign-in, whatever the input', async () => {
        const routes = gitRoutes().filter((route) => route.access.signIn);
        expect(routes.length).to.be.above(50);
        const answers = await answersTo(routes, {});
        const url = `${server.app.config.publicUrl}api/swagger`;
        expect(unexpected(answers, 401, { message: 'token is required', url })).to.equal([]);
    });

    it('answers a user who is not a site administrator 403 on every git admin operation, whatever the input', async () => {
        const { headers } = await createTestUser(server);
        const routes = gitRoutes().filter((route) => route.access.siteAdmin);
        expect(routes.length).to.be.above(20);
        const answers = await answersTo(routes, headers);
        const url = `${server.app.config.publicUrl}api/swagger`;
        expect(unexpected(answers, 403, { message: 'user should be the site admin', url })).to.equal([]);
    });
});
