import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import knexFactory, { type Knex } from 'knex';

import { knexConfig } from '../lib/database.ts';
import { sha256Hex } from '../lib/crypto.ts';
import { type BenchFigure, load, ROOT_DIR, startGatehouse, startProcess } from './harness.ts';

const USERS = 10_000;
const ORGANIZATIONS = 1_000;
const CONNECTIONS = 32;

/** Inserts the users, organisations and an administrator with a known token, straight through knex. */
async function seed(knex: Knex): Promise<string> {
    const token = Crypto.randomBytes(20).toString('hex');
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
    await knex('users').insert(row('benchadmin', 0, { is_admin: true }));
    const admin = await knex('users').where({ lower_name: 'benchadmin' }).first('id');
    await knex('access_tokens').insert({
        uid: admin.id,
        name: 'bench',
        token_hash: sha256Hex(token),
        token_last_eight: token.slice(-8),
        scope: 'all',
        created_at: createdAt,
        updated_at: createdAt,
    });
    const people = Array.from({ length: USERS }, (_, index) => row(`user${String(index).padStart(5, '0')}`, 0));
    const orgs = Array.from({ length: ORGANIZATIONS }, (_, index) =>
        row(`org${String(index).padStart(4, '0')}`, 1, { visibility: index % 3 }),
    );
    await knex.batchInsert('users', people, 500);
    await knex.batchInsert('users', orgs, 500);
    return token;
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
    const name = `gatehouse_bench_${process.pid}`;
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
            target: '>= 0.5, p99 < 25 ms',
            met: ratio >= 0.5 && served.p99 < 25,
            notes: `${USERS} users, ${ORGANIZATIONS} organisations, ${CONNECTIONS} connections`,
        };
    } finally {
        await bare.stop();
        Fs.rmSync(Path.dirname(bodyFile), { recursive: true, force: true });
    }
}

/** GET /api/v1/admin/users?q= and GET /api/v1/orgs on 10,000 users and 1,000 organisations, on one database kind. */
export async function benchIdentity(kind: 'sqlite' | 'mysql'): Promise<BenchFigure[]> {
    const database = await benchDatabase(kind);
    const gatehouse = await startGatehouse({ DATABASE_URL: database.url });
    const knex = knexFactory(knexConfig(database.url));
    try {
        const token = await seed(knex);
        const headers = { authorization: `token ${token}` };
        const root = `http://127.0.0.1:${gatehouse.port}/api/v1`;
        return [
            await compare(`GET /api/v1/admin/users?q=user12 (${database.label})`, `${root}/admin/users?q=user12&limit=30`, headers),
            await compare(`GET /api/v1/orgs (${database.label})`, `${root}/orgs?page=3`, headers),
        ];
    } finally {
        await knex.destroy();
        await gatehouse.stop();
        await database.drop();
    }
}
