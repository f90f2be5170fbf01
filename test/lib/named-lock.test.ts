import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createKnex } from '../../lib/database.ts';
import { withNamedLock } from '../../lib/named-lock.ts';
import { createTestServer, type TestServer } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('named locks in the database', () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer();
    });

    after(async () => {
        await context.cleanup();
    });

    it('lets one holder at a time in, across connections, in a read-modify-write that would otherwise lose updates', async () => {
        // Two connections of their own, as two run workers have.
        const others = [createKnex(context.database.databaseUrl), createKnex(context.database.databaseUrl)];
        const list: number[] = [];
        let inside = 0;
        let most = 0;
        try {
            await Promise.all(
                [1, 2, 3, 4, 5, 6].map((value, index) =>
                    withNamedLock(others[index % 2] ?? context.server.app.knex, 'outpost:one', async () => {
                        inside += 1;
                        most = Math.max(most, inside);
                        const read = [...list];
                        await new Promise((resolve) => setImmediate(resolve));
                        list.length = 0;
                        list.push(...read, value);
                        inside -= 1;
                    }),
                ),
            );
        } finally {
            await Promise.all(others.map((knex) => knex.destroy()));
        }

        expect(most).to.equal(1);
        expect([...list].sort()).to.equal([1, 2, 3, 4, 5, 6]);
        // Each holder gave the lock back: no row of this test's lock is left (the other test's locks are its own).
        expect(await context.server.app.knex('named_locks').where({ name: 'outpost:one' }).count({ count: '*' }).first()).to.equal({
            count: 0,
        });
    });

    it('gives the lock back when the work throws, and takes over a lease whose holder died', async () => {
        const knex = context.server.app.knex;
        await expect(withNamedLock(knex, 'outpost:two', () => Promise.reject(new Error('boom')))).to.reject('boom');
        expect(await knex('named_locks').where({ name: 'outpost:two' }).first()).to.not.exist();

        await knex('named_locks').insert({ name: 'outpost:two', holder: 'gone', expires_at: Date.now() - 1 });
        expect(await withNamedLock(knex, 'outpost:two', () => Promise.resolve('taken over'))).to.equal('taken over');

        await knex('named_locks').insert({ name: 'outpost:three', holder: 'busy', expires_at: Date.now() + 60_000 });
        try {
            await expect(withNamedLock(knex, 'outpost:three', () => Promise.resolve('never'), { waitMs: 100 })).to.reject(
                /waited too long/,
            );
            expect(await knex('named_locks').where({ name: 'outpost:three' }).select('holder')).to.equal([{ holder: 'busy' }]);
        } finally {
            // The busy holder this test made up never gives its lock back: the test does.
            await knex('named_locks').where({ name: 'outpost:three', holder: 'busy' }).delete();
        }
    });
});
