import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import knexFactory, { type Knex } from 'knex';

import { sha256Hex } from '../lib/crypto.ts';
import { knexConfig } from '../lib/database.ts';
import { type BenchFigure, load, ROOT_DIR, startGatehouse, startProcess } from './harness.ts';

const RUNS = 10_000;
const CONNECTIONS = 32;
/** Gitea's statuses: success 1, failure 2, running 6; a third of the runs each. */
const STATUSES = [1, 2, 6];

async function seedAdmin(knex: Knex, createdAt: number): Promise<{ id: number; token: string }> {
    const token = Crypto.randomBytes(20).toString('hex');
    await knex('users').insert({
        lower_name: 'benchadmin',
        name: 'benchadmin',
        email: 'admin@bench.test',
        type: 0,
        is_admin: true,
        created_at: createdAt,
        updated_at: createdAt,
    });
    const admin = (await knex('users').where({ lower_name: 'benchadmin' }).first('id')) as { id: number };
    await knex('access_tokens').insert({
        uid: admin.id,
        name: 'bench',
        token_hash: sha256Hex(token),
        token_last_eight: token.slice(-8),
        scope: 'all',
        created_at: createdAt,
        updated_at: createdAt,
    });
    return { id: Number(admin.id), token };
}

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

interface Database {
    url: string;
    label: string;
    drop(): Promise<void>;
}

async function benchDatabase(kind: 'sqlite' | 'mysql'): Promise<Database> {
    if (kind === 'sqlite') {
        const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-db-'));
        return {
            url: `sqlite:${Path.join(dir, 'bench.sqlite')}`,
            label: 'SQLite',
            drop: async () => Fs.rmSync(dir, { recursive: true, force: true }),
        };
    }

    const server = process.env.BENCH_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
    const name = `gatehouse_bench_actions_${process.pid}`;
    const admin = knexFactory(knexConfig(server));
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    await admin.destroy();
    const url = new URL(server);
    url.pathname = `/${name}`;
    return {
        url: url.toString(),
        label: 'MariaDB',
        async drop() {
            const dropper = knexFactory(knexConfig(server));
            await dropper.raw(`DROP DATABASE IF EXISTS \`${name}\``);
            await dropper.destroy();
        },
    };
}

async function compare(name: string, url: string, headers: Record<string, string>): Promise<BenchFigure> {
    const page = await fetch(url, { headers });
    if (!page.ok) {
        throw new Error(`${url}: ${page.status}`);
    }

    const bodyFile = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-')), 'page.json');
    Fs.writeFileSync(bodyFile, await page.text());
    const bare = await startProcess(Path.join(ROOT_DIR, 'bench', 'fixtures', 'bare-server.ts'), { BARE_JSON_FILE: bodyFile }, '/bare');
    try {
        const baseline = await load({ url: `http://127.0.0.1:${bare.port}/bare`, connections: CONNECTIONS });
        const served = await load({ url, headers, connections: CONNECTIONS });
        if (served.errors > 0 || served.non2xx > 0) {
            throw new Error(`${name}: ${served.errors} errors, ${served.non2xx} non-2xx answers`);
        }

        const ratio = served.requestsPerSecond / baseline.requestsPerSecond;
        return {
            name,
            measured: `${served.requestsPerSecond.toFixed(0)} req/s (p50 ${served.p50} ms, p99 ${served.p99} ms)`,
            baseline: `${baseline.requestsPerSecond.toFixed(0)} req/s from a bare hapi route with the same page`,
            ratio,
            target: '>= 0.5',
            met: ratio >= 0.5,
            notes: `${RUNS} runs over 10 repositories, page of 30 with status=completed, ${CONNECTIONS} connections`,
        };
    } finally {
        await bare.stop();
        Fs.rmSync(Path.dirname(bodyFile), { recursive: true, force: true });
    }
}

/** GET /api/v1/admin/actions/runs?status=completed over 10,000 runs, on one database kind. */
export async function benchActions(kind: 'sqlite' | 'mysql'): Promise<BenchFigure> {
    const database = await benchDatabase(kind);
    const gatehouse = await startGatehouse({ DATABASE_URL: database.url });
    const knex = knexFactory(knexConfig(database.url));
    try {
        const token = await seed(knex);
        const url = `http://127.0.0.1:${gatehouse.port}/api/v1/admin/actions/runs?status=completed&page=2`;
        return await compare(`GET /api/v1/admin/actions/runs?status=completed (${database.label})`, url, {
            authorization: `token ${token}`,
        });
    } finally {
        await knex.destroy();
        await gatehouse.stop();
        await database.drop();
    }
}
