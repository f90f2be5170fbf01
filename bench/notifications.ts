import Crypto from 'node:crypto';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import knexFactory, { type Knex } from 'knex';

import { Sealer, sha256Hex } from '../lib/crypto.ts';
import { knexConfig, migrate } from '../lib/database.ts';
import {
    type BenchFigure,
    benchDatabase,
    cacheNote,
    comparisonFigure,
    compareWithBareRoute,
    startGatehouse,
    uncachedLoad,
} from './harness.ts';

const THREADS = 5_000;
const REPOSITORIES = 10;
const DELIVERIES = 1_000;
const DELIVERY_TARGET = 200;
const CONCURRENCY = 16;

async function insertUser(knex: Knex, name: string): Promise<number> {
    const stamp = Date.now();
    const [id] = await knex('users').insert({
        lower_name: name,
        name,
        email: `${name}@bench.test`,
        type: 0,
        created_at: stamp,
        updated_at: stamp,
    });
    return Number(id);
}

/** A reader with a token, and THREADS notification threads over THREADS issues in REPOSITORIES repositories. */
async function seedThreads(knex: Knex): Promise<string> {
    const reader = await insertUser(knex, 'reader');
    const owner = await insertUser(knex, 'benchowner');
    const token = Crypto.randomBytes(20).toString('hex');
    const stamp = Date.now();
    await knex('access_tokens').insert({
        uid: reader,
        name: 'bench',
        token_hash: sha256Hex(token),
        token_last_eight: token.slice(-8),
        scope: 'read:notification',
        created_at: stamp,
        updated_at: stamp,
    });
    const perRepository = THREADS / REPOSITORIES;
    for (let repo = 0; repo < REPOSITORIES; repo += 1) {
        const name = `project${repo}`;
        const [repoId] = await knex('repositories').insert({
            ...{ owner_id: owner, owner_name: 'benchowner', lower_name: name, name, is_empty: false },
            ...{ created_at: stamp, updated_at: stamp },
        });
        const issues = Array.from({ length: perRepository }, (_, index) => ({
            ...{ repo_id: repoId, index: index + 1, poster_id: owner, title: `Issue ${index + 1} of ${name}`, body: '' },
            ...{ created_at: stamp, updated_at: stamp },
        }));
        await knex.batchInsert('issues', issues, 250);
        const ids: number[] = (await knex('issues').where({ repo_id: repoId }).orderBy('id').pluck('id')).map(Number);
        const threads = ids.map((issueId, index) => ({
            ...{ user_id: reader, repo_id: repoId, issue_id: issueId, source: 1, status: index % 5 === 0 ? 2 : 1, updated_by: owner },
            ...{ created_at: stamp, updated_at: stamp - repo * perRepository - index },
        }));
        await knex.batchInsert('notifications', threads, 250);
    }

    return token;
}

/** GET /api/v1/notifications?limit=50 for a user with 5,000 threads, against a bare hapi route with the same JSON. */
export async function benchNotificationList(): Promise<BenchFigure> {
    const database = await benchDatabase('sqlite', 'notifications');
    const gatehouse = await startGatehouse({ DATABASE_URL: database.url });
    const knex = knexFactory(knexConfig(database.url));
    try {
        const token = await seedThreads(knex);
        const path = '/api/v1/notifications?limit=50&all=true';
        const headers = { authorization: `token ${token}` };
        const comparison = await compareWithBareRoute(`http://127.0.0.1:${gatehouse.port}${path}`, headers);
        const uncached = await uncachedLoad(database.url, path, headers);
        return comparisonFigure('GET /api/v1/notifications (5,000 threads, page of 50)', comparison, {
            target: '>= 0.5',
            met: comparison.ratio >= 0.5,
            notes: `${THREADS} threads of one user, page of 50 (${comparison.bytes} bytes), SQLite; ${cacheNote(comparison, uncached)}`,
        });
    } finally {
        await knex.destroy();
        await gatehouse.stop();
        await database.drop();
    }
}

// ---------------------------------------------------------------------------------------------------------------

interface Counter {
    port: number;
    arrivals: number[];
    close(): Promise<void>;
}

async function startCounter(): Promise<Counter> {
    const arrivals: number[] = [];
    const server = Http.createServer((request, response) => {
        request.resume();
        request.on('end', () => {
            arrivals.push(performance.now());
            response.writeHead(200).end('ok');
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as AddressInfo).port,
        arrivals,
        async close() {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        },
    };
}

async function waitForArrivals(counter: Counter, count: number, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (counter.arrivals.length < count) {
        if (Date.now() > deadline) {
            throw new Error(`only ${counter.arrivals.length} of ${count} deliveries arrived`);
        }

        await new Promise((resolve) => setTimeout(resolve, 20));
    }
}

/** The baseline: the same POSTs sent by a plain keep-alive Node client, CONCURRENCY at a time. */
async function plainClientRate(port: number, body: string): Promise<number> {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const post = async () =>
        await new Promise<void>((resolve, reject) => {
            const request = Http.request({
                host: '127.0.0.1',
                port,
                method: 'POST',
                path: '/hook',
                agent,
                headers: { 'content-type': 'application/json' },
            });
            request.on('error', reject);
            request.on('response', (response) => response.resume().on('end', resolve));
            request.end(body);
        });
    let sent = 0;
    const started = performance.now();
    const lane = async () => {
        while (sent < DELIVERIES) {
            sent += 1;
            await post();
        }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, lane));
    agent.destroy();
    return DELIVERIES / ((performance.now() - started) / 1000);
}

async function seedDeliveries(knex: Knex, masterKey: string, port: number): Promise<string> {
    const sealer = new Sealer(Buffer.from(masterKey, 'hex'));
    const stamp = Date.now();
    const [hookId] = await knex('webhooks').insert({
        ...{ is_system_webhook: true, type: 'gitea', url: `http://127.0.0.1:${port}/hook`, content_type: 'json' },
        ...{ secret_sealed: sealer.seal('bench secret', 'webhook-secret'), events: '["issues"]', is_active: true },
        ...{ created_at: stamp, updated_at: stamp },
    });
    const payload = JSON.stringify({ action: 'opened', number: 1, issue: { title: 'x'.repeat(2000) } }, null, 2);
    const tasks = Array.from({ length: DELIVERIES }, () => ({
        ...{ hook_id: hookId, uuid: Crypto.randomUUID(), event_type: 'issues', payload_content: payload },
        ...{ next_attempt_at: stamp, created_at: stamp },
    }));
    await knex.batchInsert('hook_tasks', tasks, 200);
    return payload;
}

/** 1,000 deliveries queued before the server starts, sent by the Bree worker to a receiver on 127.0.0.1. */
export async function benchDeliveries(): Promise<BenchFigure> {
    const database = await benchDatabase('sqlite', 'notifications');
    const counter = await startCounter();
    const masterKey = Crypto.randomBytes(32).toString('hex');
    const knex = knexFactory(knexConfig(database.url));
    try {
        await migrate(knex);
        const payload = await seedDeliveries(knex, masterKey, counter.port);
        const started = performance.now();
        const gatehouse = await startGatehouse({
            DATABASE_URL: database.url,
            MASTER_KEY: masterKey,
            WEBHOOK_ALLOWED_HOST_LIST: 'loopback',
        });
        try {
            await waitForArrivals(counter, DELIVERIES);
        } finally {
            await gatehouse.stop();
        }

        const first = counter.arrivals[0] ?? started;
        const last = counter.arrivals[DELIVERIES - 1] ?? first;
        const rate = (DELIVERIES - 1) / ((last - first) / 1000);
        const total = (last - started) / 1000;
        const baseline = await plainClientRate(counter.port, payload);
        const pending = Number((await knex('hook_tasks').where({ is_succeed: false }).count({ count: '*' }).first())?.count ?? 0);
        return {
            name: 'Webhook delivery, 1,000 queued deliveries to a local receiver',
            measured: `${rate.toFixed(0)} deliveries/s (first to last arrival)`,
            baseline: `${baseline.toFixed(0)} POST/s from a plain keep-alive Node client, ${CONCURRENCY} at a time`,
            ratio: rate / baseline,
            target: `>= ${DELIVERY_TARGET}/s`,
            met: rate >= DELIVERY_TARGET && pending === 0,
            notes: `signed JSON (${payload.length} bytes), each recorded in hook_tasks; ${total.toFixed(1)} s from process start to the last arrival (includes server and worker start-up); ${pending} not succeeded`,
        };
    } finally {
        await knex.destroy();
        await counter.close();
        await database.drop();
    }
}
