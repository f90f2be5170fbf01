// needs: docker
import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { AppHistory, SampleEvent, TopApps } from '../../../../../plugins/deploy/domain/stats/resource-stats.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { buildTestImage, docker, removeProjects, startAppContainer } from '../../../../support/images.ts';
import { type FollowedEvents, followEvents, readEvents } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Crypto.randomBytes(4).toString('hex');
const BUSY = `burner-${SUFFIX}`;
const IDLE = `sleeper-${SUFFIX}`;
const DRAFT = `drafted-${SUFFIX}`;
const IMAGE = `gatehouse-test/burner:${SUFFIX}`;
const KEPT = 5;
const MB = 1024 * 1024;

const history = (followed: FollowedEvents): AppHistory | undefined => {
    const message = followed.messages.find((candidate) => candidate.event === 'history');
    return message ? (JSON.parse(message.data) as AppHistory) : undefined;
};

const samples = (followed: FollowedEvents, container?: string): SampleEvent[] =>
    followed.messages
        .filter((message) => message.event === 'sample')
        .map((message) => JSON.parse(message.data) as SampleEvent)
        .filter((event) => !container || event.container === container);

describe('deploy manager: the containers’ resources, streamed and ranked', { timeout: 180_000 }, () => {
    let server: DeployTestServer;
    let viewer: Browser;

    before({ timeout: 120_000 }, async () => {
        server = await deployTestServer({ STATS_INTERVAL_SECONDS: '1', STATS_SAMPLES: String(KEPT) });
        viewer = await server.signInAs('viewer');
        for (const app of [BUSY, IDLE, DRAFT]) {
            const created = await server.admin.post('/api/apps', { name: app, image: 'gatehouse-test/burner', tag: SUFFIX });
            expect(created.status, created.text).to.equal(201);
        }

        // As deployed: their containers are made here, as Compose labels them.
        await server.context.database.knex('dp_apps').whereIn('name', [BUSY, IDLE]).update({ state: 'running' });

        buildTestImage(IMAGE);
        // A quarter of a CPU, kept busy; a worker beside it that sleeps until it is told to take memory.
        await startAppContainer(BUSY, 'web', IMAGE, 'while :; do :; done', { NanoCpus: 250_000_000 });
        await startAppContainer(BUSY, 'worker', IMAGE, 'exec sleep 3600');
        await startAppContainer(IDLE, 'web', IMAGE, 'exec sleep 3600');
    });

    after(async () => {
        await removeProjects([BUSY, IDLE], [IMAGE]);
        await server?.context.cleanup();
    });

    it('answers 404 for an app there is not, and ends a draft’s stream after its empty history', async () => {
        const response = await viewer.get(`/api/apps/nothing-${SUFFIX}/stats/stream`);
        expect(response.status).to.equal(404);
        const messages = await readEvents(viewer, `/api/apps/${DRAFT}/stats/stream`);
        expect(messages.map((message) => message.event)).to.equal(['history', 'end']);
        expect((JSON.parse(messages[0]?.data ?? '{}') as AppHistory).containers).to.equal([]);
    });

    it('streams samples with plausible figures for each of the app’s containers, to a viewer', async () => {
        const followed = await followEvents(viewer, `/api/apps/${BUSY}/stats/stream`);
        try {
            const first = await waitUntil('the history event', () => history(followed));
            expect(first).to.include({ app: BUSY, intervalSeconds: 1, samples: KEPT });
            await waitUntil(
                'two samples of each container',
                () => samples(followed, `${BUSY}-web-1`).length >= 2 && samples(followed, `${BUSY}-worker-1`).length >= 2,
                { timeoutMs: 30_000, intervalMs: 100 },
            );
            for (const event of samples(followed)) {
                const { sample } = event;
                expect(event.service).to.equal(event.container === `${BUSY}-web-1` ? 'web' : 'worker');
                expect(sample.memoryBytes).to.be.above(0);
                expect(sample.memoryLimitBytes).to.be.above(sample.memoryBytes);
                for (const total of [sample.networkRxBytes, sample.networkTxBytes, sample.blockReadBytes, sample.blockWriteBytes]) {
                    expect(Number.isInteger(total) && total >= 0, String(total)).to.be.true();
                }

                expect(Date.parse(sample.time)).to.be.within(Date.now() - 60_000, Date.now() + 1000);
            }

            // The busy loop is held to a quarter of a CPU (a busy machine may give it less at times); the sleeper uses next to nothing.
            await waitUntil(
                'a sample of the busy loop above 5 %',
                () => samples(followed, `${BUSY}-web-1`).some((event) => event.sample.cpuPercent > 5),
                {
                    timeoutMs: 30_000,
                    intervalMs: 100,
                },
            );
            for (const event of samples(followed, `${BUSY}-web-1`)) expect(event.sample.cpuPercent).to.be.below(40);
            expect(samples(followed, `${BUSY}-worker-1`).at(-1)?.sample.cpuPercent ?? 100).to.be.below(5);
            expect(samples(followed).every((event) => event.container.startsWith(BUSY))).to.be.true();
        } finally {
            followed.close();
        }
    });

    it('shows the memory grow when a container takes some', async () => {
        const followed = await followEvents(viewer, `/api/apps/${BUSY}/stats/stream`);
        try {
            const worker = `${BUSY}-worker-1`;
            const before = await waitUntil('a sample of the worker', () => samples(followed, worker).at(-1)?.sample.memoryBytes, {
                timeoutMs: 30_000,
                intervalMs: 100,
            });
            // 40 MB in the container's tmpfs, which its memory counts.
            docker('exec', worker, 'dd', 'if=/dev/zero', 'of=/dev/shm/fill', 'bs=1048576', 'count=40');
            const grown = await waitUntil(
                'the worker’s memory to grow by the 40 MB',
                () => samples(followed, worker).find((event) => event.sample.memoryBytes >= before + 35 * MB)?.sample.memoryBytes,
                { timeoutMs: 30_000, intervalMs: 100 },
            );
            expect(grown - before).to.be.below(80 * MB);
        } finally {
            followed.close();
        }
    });

    it('keeps no more than STATS_SAMPLES of each container, the newest', async () => {
        const latestHistory = async () => {
            const followed = await followEvents(viewer, `/api/apps/${BUSY}/stats/stream`);
            try {
                return await waitUntil('the history event', () => history(followed));
            } finally {
                followed.close();
            }
        };
        const full = await waitUntil(
            'a full history',
            async () => {
                const kept = await latestHistory();
                return kept.containers.length === 2 && kept.containers.every((container) => container.samples.length === KEPT) && kept;
            },
            { timeoutMs: 30_000, intervalMs: 250 },
        );
        const firstTime = full.containers[0]?.samples[0]?.time ?? '';
        const later = await waitUntil(
            'the oldest sample dropped for a newer one',
            async () => {
                const kept = await latestHistory();
                return (kept.containers[0]?.samples[0]?.time ?? '') > firstTime && kept;
            },
            { timeoutMs: 30_000, intervalMs: 250 },
        );
        for (const container of later.containers) {
            expect(container.samples).to.have.length(KEPT);
            const times = container.samples.map((sample) => sample.time);
            expect(times).to.equal([...times].sort());
        }
    });

    it('ranks this server’s apps by CPU and by memory', async () => {
        // The busy app's worker holds 16 MB of its own: a file apart from the memory test's, so each test stands alone,
        // and both fit in the container's 64 MB of /dev/shm.
        docker('exec', `${BUSY}-worker-1`, 'dd', 'if=/dev/zero', 'of=/dev/shm/held', 'bs=1048576', 'count=16');
        const top = await waitUntil(
            'both apps in the ranking, the busy one holding its 16 MB',
            async () => {
                const response = await viewer.get('/api/stats/top?limit=10');
                expect(response.status, response.text).to.equal(200);
                const body = response.body as TopApps;
                return body.byCpu.length === 2 && (body.byMemory[0]?.memoryBytes ?? 0) > 14 * MB && body;
            },
            { timeoutMs: 30_000, intervalMs: 250 },
        );
        expect(top.time).to.be.a.string();
        expect(top.byCpu.map((app) => app.app)).to.equal([BUSY, IDLE]);
        expect(top.byCpu[0]?.cpuPercent ?? 0).to.be.above(top.byCpu[1]?.cpuPercent ?? 0);
        expect(top.byCpu[0]?.containers).to.equal(2);
        expect(top.byMemory.map((app) => app.app)).to.equal([BUSY, IDLE]);
        expect(top.byMemory[0]?.memoryBytes ?? 0).to.be.above(14 * MB);
        const one = (await viewer.get('/api/stats/top?limit=1')).body as TopApps;
        expect(one.byCpu.map((app) => app.app)).to.equal([BUSY]);
    });
});
