/**
 * A failed statement is logged without the values bound to it, and bounded: the server as `npm start` runs it, on a
 * database that lost a table, and the error serializer on the errors both drivers throw.
 */
import Net from 'node:net';
import { Writable } from 'node:stream';

import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { registerErrorShapes } from '../../lib/errors.ts';
import { loggableError, loggableMessage, loggingPlugin, MAX_LOGGED_MESSAGE } from '../../lib/logging.ts';
import {
    createTestServer,
    createTestUser,
    freePort,
    type RunningServer,
    startServerProcess,
    type TestServer,
    waitForHealth,
} from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BOUND_VALUE = 'leaky-slug-value-5f3a9c';

describe('logging: database errors', { timeout: 120_000 }, () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer();
    });

    after(async () => {
        await context?.cleanup();
    });

    it("logs a failed statement's error without its bound values, on one bounded line", async () => {
        const admin = await createTestUser(context.server, { name: 'logadmin', admin: true });
        const port = await freePort();
        const running: RunningServer = startServerProcess({
            PORT: String(port),
            HOST: '127.0.0.1',
            DATA_DIR: context.dataDir,
            DATABASE_URL: context.database.databaseUrl,
            PUBLIC_URL: 'http://127.0.0.1:3000/',
            SERVICES: 'git',
            LOG_LEVEL: 'info',
        });
        try {
            await waitForHealth(port, running);
            // The badge look-up binds the slug; without its table, the statement fails.
            await context.database.knex.schema.dropTable('user_badges');
            await context.database.knex.schema.dropTable('badges');
            const response = await fetch(`http://127.0.0.1:${port}/api/v1/admin/users/logadmin/badges`, {
                method: 'POST',
                headers: { ...admin.headers, 'content-type': 'application/json' },
                body: JSON.stringify({ badge_slugs: [BOUND_VALUE] }),
            });
            expect(response.status).to.equal(500);
            expect(await response.json()).to.include({ message: 'internal server error' });

            const errorLine = await waitUntil('the error is logged', () =>
                running
                    .output()
                    .split('\n')
                    .find((line) => line.includes('"level":50') && line.includes('badges')),
            );
            expect(errorLine).to.match(/`slug` = \?/);
            expect(errorLine).to.match(/SQLITE_ERROR|ER_NO_SUCH_TABLE/);
            await waitUntil('the response is logged', () => running.output().includes('"statusCode":500'));
            expect(running.output()).to.not.include(BOUND_VALUE);
            for (const line of running.output().split('\n')) {
                expect(line.length).to.be.below(3 * MAX_LOGGED_MESSAGE + 2_000);
            }
        } finally {
            running.child.kill('SIGTERM');
            await running.exited;
        }
    });

    it('keeps the values out of an error whose statement inlines them, and bounds a huge statement', async () => {
        const { knex } = context.database;
        // As a knex made without this project's configuration would report it: the values written into the statement.
        const inlined = knex.client.config.compileSqlOnError;
        knex.client.config.compileSqlOnError = true;
        const error = await knex
            .raw(`select ? as a, ? as b from no_such_table where c in (${Array(30_000).fill('?').join(', ')})`, [
                BOUND_VALUE,
                "it's-secret",
                ...Array<string>(30_000).fill(BOUND_VALUE),
            ])
            .then(
                () => undefined,
                (failure: unknown) => failure as Error,
            )
            .finally(() => {
                knex.client.config.compileSqlOnError = inlined;
            });
        expect(error?.message).to.include(BOUND_VALUE);
        const logged = loggableError(error) as Record<string, unknown>;
        const text = JSON.stringify(logged);
        expect(text).to.not.include(BOUND_VALUE);
        expect(text).to.not.include('secret');
        expect(logged).to.not.include(['sql', 'sqlMessage']);
        expect(String(logged.message).length).to.be.below(MAX_LOGGED_MESSAGE + 100);
        expect(String(logged.stack)).to.startWith(`${String(logged.type)}: ${String(logged.message)}\n    at `);
        expect(logged.code).to.be.a.string();
        expect(loggableMessage(error)).to.equal(String(logged.message));

        // Across a worker thread an error keeps its message only: knex's form of it is enough to know it.
        const crossed = loggableError(new Error(String(error?.message))) as Record<string, unknown>;
        expect(JSON.stringify(crossed)).to.not.include(BOUND_VALUE);
    });

    it('leaves other errors as they are, bounded', () => {
        const logged = loggableError(Object.assign(new Error('x'.repeat(10_000)), { statusCode: 418 })) as Record<string, unknown>;
        expect(String(logged.message).length).to.be.below(MAX_LOGGED_MESSAGE + 100);
        expect(logged.statusCode).to.equal(418);
        expect(loggableError('not an error')).to.equal('not an error');
    });
});

const SECRET = 'f00dfeed-secret-4e1b';

/** A server logging as server.ts registers it, its lines kept in memory; on a loopback port once started. */
async function loggingServer(): Promise<{ server: Hapi.Server; lines: () => string[] }> {
    const written: string[] = [];
    const stream = new Writable({
        write(chunk: Buffer, _encoding, callback) {
            written.push(chunk.toString());
            callback();
        },
    });
    const server = Hapi.server({ host: '127.0.0.1', port: 0 });
    const logging = loggingPlugin('info');
    // hapi-pino's types ask for process.stdout's type; pino writes to any writable stream.
    const options = { ...logging.options, stream: stream as unknown as NodeJS.WriteStream };
    await server.register({ plugin: logging.plugin, options });
    registerErrorShapes(server, 'http://127.0.0.1/api/swagger');
    server.route({ method: 'GET', path: '/{path*}', handler: () => 'ok' });
    server.route({
        method: 'POST',
        path: '/fails',
        handler: () => {
            throw new Error('the handler failed');
        },
    });
    await server.initialize();
    return { server, lines: () => written.join('').split('\n').filter(Boolean) };
}

describe('logging: secrets', () => {
    it('logs a request URL with its credential query parameters redacted, whatever their spelling', async () => {
        const { server, lines } = await loggingServer();
        const headers = { authorization: `token ${SECRET}`, cookie: `dp_session=${SECRET}` };
        for (const url of [
            '/api/v1/licenses',
            `/api/v1/licenses/MIT?token=${SECRET}&page=2`,
            `/api/v1/user?%61ccess_token=${SECRET}`,
            `/a/./b/../c?Password=${SECRET}`,
        ]) {
            expect((await server.inject({ url, headers })).statusCode).to.equal(200);
        }

        const urls = lines().map((line) => (JSON.parse(line) as { req?: { url?: string } }).req?.url);
        expect(urls).to.equal([
            '/api/v1/licenses',
            '/api/v1/licenses/MIT?token=%5Bredacted%5D&page=2',
            '/api/v1/user?access_token=%5Bredacted%5D',
            '/a/c?Password=%5Bredacted%5D',
        ]);
        expect(lines().join('\n')).to.not.include(SECRET);
    });

    it('censors the credential fields of logged objects and errors, and leaves the objects as they were', async () => {
        const { server, lines } = await loggingServer();
        const data = { token: SECRET, password: SECRET, user: 'visible-user' };
        server.log(['info'], data);
        server.log(['error'], Object.assign(new Error('refused'), { authorization: `token ${SECRET}`, cookie: SECRET }));
        server.logger.info({ headers: { cookie: SECRET, accept: 'text/html' }, count: 3 }, 'direct');

        const logged = lines().join('\n');
        expect(logged).to.not.include(SECRET);
        expect(logged).to.include('visible-user');
        expect(logged).to.include('text/html');
        expect(logged.match(/\[Redacted\]/g)).to.have.length(5);
        expect(data.token).to.equal(SECRET);
    });
});

/** The log lines as text, with any Buffer a line holds (JSON's `{type: 'Buffer', data: [...]}`) spelled out. */
function readableLog(lines: string[]): string {
    const decoded = (_key: string, value: unknown) => {
        const buffer = value as { type?: unknown; data?: unknown };
        return buffer?.type === 'Buffer' && Array.isArray(buffer.data) ? Buffer.from(buffer.data as number[]).toString('latin1') : value;
    };
    return lines.map((line) => JSON.stringify(JSON.parse(line, decoded))).join('\n');
}

/** Writes the bytes to the server on a new connection and resolves with what came back once the connection closes. */
async function sendRaw(port: number, request: string): Promise<string> {
    return await new Promise((resolve) => {
        let answer = '';
        const socket = Net.connect(port, '127.0.0.1', () => socket.end(request));
        socket.on('data', (chunk: Buffer) => {
            answer += chunk.toString();
        });
        // The server may close before it read everything: a reset is the expected end here.
        socket.on('error', () => undefined);
        socket.on('close', () => resolve(answer));
    });
}

describe('logging: requests that fail to parse', () => {
    it('logs an oversized or malformed request by its size and error code only, never its headers', async () => {
        const { server, lines } = await loggingServer();
        await server.start();
        try {
            const port = server.info.port as number;
            const head = `GET /api/apps HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: dp_session=${SECRET}\r\nAuthorization: token ${SECRET}\r\n`;
            const oversized = `${head}X-Padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`;
            const malformed = `${head}Bad Header\u0001: x\r\n\r\n`;
            for (const request of [oversized, malformed]) {
                expect(await sendRaw(port, request)).to.startWith('HTTP/1.1 400');
            }

            const logged = await waitUntil('both client errors are logged', () => {
                const found = lines().filter((line) => line.includes('HPE_'));
                return found.length >= 2 && found;
            });
            // The other paths a request takes to the log: its line, a handler's failure, a payload that does not parse.
            const headers = { cookie: `dp_session=${SECRET}`, authorization: `token ${SECRET}`, 'content-type': 'application/json' };
            const base = `http://127.0.0.1:${port}`;
            expect((await fetch(`${base}/api/apps`, { headers })).status).to.equal(200);
            expect((await fetch(`${base}/fails`, { method: 'POST', headers, body: '{}' })).status).to.equal(500);
            expect((await fetch(`${base}/fails`, { method: 'POST', headers, body: `{"${SECRET}` })).status).to.equal(400);
            await waitUntil('the requests are logged', () => lines().filter((line) => line.includes('"statusCode"')).length >= 3);

            expect(readableLog(lines())).to.not.include(SECRET);
            const errors = logged.map((line) => (JSON.parse(line) as { err: Record<string, unknown> }).err);
            expect(errors.map((error) => error.code)).to.equal(['HPE_HEADER_OVERFLOW', 'HPE_INVALID_HEADER_TOKEN']);
            for (const error of errors) {
                expect(Object.keys(error).sort()).to.equal(['bytes', 'code', 'type']);
                expect(error.bytes).to.be.a.number();
            }
        } finally {
            await server.stop();
        }
    });
});
