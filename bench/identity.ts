import knexFactory, { type Knex } from 'knex';

import { knexConfig } from '../lib/database.ts';
import {
    type BareComparison,
    type BenchFigure,
    benchDatabase,
    cacheNote,
    compareWithBareRoute,
    comparisonFigure,
    type LoadResult,
    seedAdmin,
    startGatehouse,
    uncachedLoad,
} from './harness.ts';

const USERS = 10_000;
const ORGANIZATIONS = 1_000;
const CONNECTIONS = 32;
/** Names run user00000 to user09999: this matches the 100 of user01200 to user01299, by name, full name and e-mail. */
const SEARCH = 'user012';

/** Inserts the users, organisations and an administrator with a known token, straight through knex. */
async function seed(knex: Knex): Promise<string> {
    const createdAt = Date.now();
    const row = (name: string, type: number, extra: object = {}) => ({
        lower_name: name.toLowerCase(),
        name,
        full_name: `Full ${name}`,
        email: type === 0 ? `${name}@bench.test` : '',
        type,
        created_at: createdAt,
        updated_at: createdAt,
        ...extra,
    });
    const { token } = await seedAdmin(knex, createdAt);
    const people = Array.from({ length: USERS }, (_, index) => row(`user${String(index).padStart(5, '0')}`, 0));
    const orgs = Array.from({ length: ORGANIZATIONS }, (_, index) =>
        row(`org${String(index).padStart(4, '0')}`, 1, { visibility: index % 3 }),
    );
    await knex.batchInsert('users', people, 500);
    await knex.batchInsert('users', orgs, 500);
    return token;
}

function figure(name: string, comparison: BareComparison, uncached: LoadResult): BenchFigure {
    return comparisonFigure(name, comparison, {
        target: '>= 0.5, p99 < 25 ms',
        met: comparison.ratio >= 0.5 && comparison.served.p99 < 25,
        notes: `${USERS} users, ${ORGANIZATIONS} organisations, ${CONNECTIONS} connections; ${cacheNote(comparison, uncached)}`,
    });
}

/** GET /api/v1/admin/users?q= and GET /api/v1/orgs on 10,000 users and 1,000 organisations, on one database kind. */
export async function benchIdentity(kind: 'sqlite' | 'mysql'): Promise<BenchFigure[]> {
    const database = await benchDatabase(kind, 'identity');
    const gatehouse = await startGatehouse({ DATABASE_URL: database.url });
    const knex = knexFactory(knexConfig(database.url));
    try {
        const token = await seed(knex);
        const headers = { authorization: `token ${token}` };
        const figures: BenchFigure[] = [];
        const pages: Array<[string, string]> = [
            [`GET /api/v1/admin/users?q=${SEARCH} (${database.label})`, `/api/v1/admin/users?q=${SEARCH}&limit=30`],
            [`GET /api/v1/orgs (${database.label})`, '/api/v1/orgs?page=3'],
        ];
        for (const [name, path] of pages) {
            const comparison = await compareWithBareRoute(`http://127.0.0.1:${gatehouse.port}${path}`, headers, CONNECTIONS);
            figures.push(figure(name, comparison, await uncachedLoad(database.url, path, headers, CONNECTIONS)));
        }

        return figures;
    } finally {
        await knex.destroy();
        await gatehouse.stop();
        await database.drop();
    }
}
