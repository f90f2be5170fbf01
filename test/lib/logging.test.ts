/**
 * A failed statement is logged without the values bound to it, and bounded: the server as `npm start` runs it, on a
 * database that lost a table, and the error serializer on the errors both drivers throw.
 */
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { loggableError, loggableMessage, MAX_LOGGED_MESSAGE } from '../../lib/logging.ts';
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
