import knexFactory, { type Knex } from 'knex';

import { sha256Hex } from '../lib/crypto.ts';
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

const RUNS = 10_000;
const CONNECTIONS = 32;
/** Gitea's statuses: success 1, failure 2, running 6; a third of the runs each. */
const STATUSES = [1, 2, 6];

/** An administrator with a known token, ten repositories, and 10,000 runs spread over them, straight through knex. */
async function seed(knex: Knex): Promise<string> {
    const createdAt = Date.now();
    const admin = await seedAdmin(knex, createdAt);
    const repoIds: number[] = [];
    for (let index = 0; index < 10; index += 1) {
        const name = `repo${index}`;
        const [id] = await knex('repositories').insert({
            owner_id: admin.id,
            owner_name: 'benchadmin',
            lower_name: name,
            name,
            created_at: createdAt,
            updated_at: createdAt,
        });
        repoIds.push(Number(id));
    }

    const rows = Array.from({ length: RUNS }, (_, index) => ({
        title: `Run ${index}`,
        repo_id: repoIds[index % repoIds.length],
        owner_id: admin.id,
        workflow_id: 'ci.yml',
        run_index: Math.floor(index / repoIds.length) + 1,
        trigger_user_id: admin.id,
        ref: 'refs/heads/main',
        commit_sha: sha256Hex(String(index)).slice(0, 40),
        event: 'push',
        status: STATUSES[index % STATUSES.length],
        started: createdAt,
        stopped: createdAt,
        created_at: createdAt,
        updated_at: createdAt,
    }));
    await knex.batchInsert('action_runs', rows, 500);
    return admin.token;
}

function figure(name: string, comparison: BareComparison, uncached: LoadResult): BenchFigure {
    return comparisonFigure(name, comparison, {
        target: '>= 0.5',
        met: comparison.ratio >= 0.5,
        notes: `${RUNS} runs over 10 repositories, page of 30 with status=completed, ${CONNECTIONS} connections; ${cacheNote(comparison, uncached)}`,
    });
}

/** GET /api/v1/admin/actions/runs?status=completed over 10,000 runs, on one database kind. */
export async function benchActions(kind: 'sqlite' | 'mysql'): Promise<BenchFigure> {
    const database = await benchDatabase(kind, 'actions');
    const gatehouse = await startGatehouse({ DATABASE_URL: database.url });
    const knex = knexFactory(knexConfig(database.url));
    try {
        const token = await seed(knex);
        const path = '/api/v1/admin/actions/runs?status=completed&page=2';
        const headers = { authorization: `token ${token}` };
        const comparison = await compareWithBareRoute(`http://127.0.0.1:${gatehouse.port}${path}`, headers, CONNECTIONS);
        const uncached = await uncachedLoad(database.url, path, headers, CONNECTIONS);
        return figure(`GET /api/v1/admin/actions/runs?status=completed (${database.label})`, comparison, uncached);
    } finally {
        await knex.destroy();
        await gatehouse.stop();
        await database.drop();
    }
}
