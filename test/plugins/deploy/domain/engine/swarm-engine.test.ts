// needs: docker, alone
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-parse.ts';
import { type ProjectPlan, planProject } from '../../../../../plugins/deploy/domain/engine/compose-plan.ts';
import type { UpOutcome } from '../../../../../plugins/deploy/domain/engine/app-engine.ts';
import { SwarmEngine } from '../../../../../plugins/deploy/domain/engine/swarm-engine.ts';
import { planStack, type StackServicePlan } from '../../../../../plugins/deploy/domain/engine/swarm-plan.ts';
import { freePorts } from '../../../../helpers/server.ts';
import { buildWebImage } from '../../../../support/images.ts';
import { startSwarm, type Swarm } from '../../../../support/swarm.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const APP = 'swarmshop';
const ONE = 'gatehouse-test/swarm-web:1';
const TWO = 'gatehouse-test/swarm-web:2';
const OPTIONS = { healthTimeoutMs: 90_000, settleMs: 2_000 };

/** The app's compose file: two replicas, one per node, each node answering on its own address (host-mode port). */
function composeOf(image: string, port: number, healthTest = '["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:80/"]'): string {
    return [
        'services:',
        '  web:',
        `    image: ${image}`,
        `    ports: [{target: 80, published: ${port}, mode: host}]`,
        `    healthcheck: {test: ${healthTest}, interval: 1s, timeout: 2s, retries: 2}`,
        // busybox httpd, process 1 of its container, ignores SIGTERM: each replaced task would take Swarm's 10 s.
        '    stop_grace_period: 1s',
        '    deploy:',
        '      replicas: 2',
        '      placement: {max_replicas_per_node: 1}',
        '      update_config: {parallelism: 1, monitor: 4s}',
        '',
    ].join('\n');
}

function planOf(compose: string, project = APP): ProjectPlan {
    return planProject(parseCompose(compose), {
        project,
        workingDir: '/nonexistent',
        composeFile: '/nonexistent/compose.yaml',
        values: {},
    });
}

const NO_IMAGE_IDS = new Map<string, string>();

async function page(address: string, port: number): Promise<string> {
    const response = await fetch(`http://${address}:${port}/`, { signal: AbortSignal.timeout(5_000) });
    return (await response.text()).trim();
}

describe('deploy engine: an app on a Docker Swarm of two engines', { timeout: 600_000 }, () => {
    let swarm: Swarm;
    let engine: SwarmEngine;
    let port: number;
    let otherPort: number;
    const lines: string[] = [];

    before({ timeout: 300_000 }, async () => {
        swarm = await startSwarm();
        buildWebImage(ONE, 'one');
        buildWebImage(TWO, 'two');
        await swarm.copyImage(ONE);
        await swarm.copyImage(TWO);
        engine = new SwarmEngine(swarm.manager, undefined, (text) => lines.push(text));
        [port, otherPort] = (await freePorts(2)) as [number, number];
    });

    after({ timeout: 300_000 }, async () => {
        await engine?.down(APP);
        await swarm?.close();
    });

    async function haveAppOn(image: string): Promise<void> {
        await engine.up(planOf(composeOf(image, port)), NO_IMAGE_IDS, OPTIONS);
    }

    it('runs two replicas, one on each node, each answering on its node, once they are healthy', async () => {
        await haveAppOn(ONE);
        const tasks = (await engine.tasksOf(`${APP}_web`)).filter((task) => task.Status?.State === 'running');
        expect(tasks.map((task) => task.NodeID).sort()).to.equal([swarm.managerNodeId, swarm.workerNodeId].sort());
        expect(await page('127.0.0.1', port)).to.equal('one');
        expect(await page(swarm.workerAddress, port)).to.equal('one');
        expect(lines.some((line) => line.startsWith(`Created ${APP}_web (${ONE}, 2 replica(s))`))).to.be.true();
    });

    it('keeps an unchanged service, and moves a changed one to its new image by a rolling update', async () => {
        await haveAppOn(ONE);
        const kept = await engine.up(planOf(composeOf(ONE, port)), NO_IMAGE_IDS, OPTIONS);
        expect(kept.kept).to.equal(['web']);
        expect(kept.updatedServices).to.equal([]);

        const updated = await engine.up(planOf(composeOf(TWO, port)), NO_IMAGE_IDS, OPTIONS);
        expect(updated.updatedServices).to.have.length(1);
        await engine.commit(updated);
        expect(await page('127.0.0.1', port)).to.equal('two');
        expect(await page(swarm.workerAddress, port)).to.equal('two');
        // One replica after the other (parallelism 1): the old tasks were shut down, not all at once removed.
        const shutDown = (await engine.tasksOf(`${APP}_web`)).filter((task) => task.DesiredState === 'shutdown');
        expect(shutDown.length).to.be.at.least(2);
    });

    it('fails an update whose health check fails: Swarm rolls it back, and the run finds the previous image serving', async () => {
        await haveAppOn(TWO);
        let outcome: UpOutcome | undefined;
        const failing = engine
            .up(planOf(composeOf(ONE, port, '["CMD", "false"]')), NO_IMAGE_IDS, OPTIONS)
            .catch((error: Error & { outcome?: UpOutcome }) => {
                outcome = error.outcome;
                throw error;
            });
        await expect(failing).to.reject(/web: Swarm rolled back the update/);
        expect(outcome?.updatedServices).to.have.length(1);
        const rollback = await engine.rollback(outcome as UpOutcome);
        expect(rollback.failed).to.equal([]);
        expect(rollback.undone).to.have.length(1);
        await engine.up(planOf(composeOf(TWO, port)), NO_IMAGE_IDS, OPTIONS);
        expect(await page('127.0.0.1', port)).to.equal('two');
        expect(await page(swarm.workerAddress, port)).to.equal('two');
    });

    it('keeps answering on the manager while the worker engine is stopped, and runs two replicas again once it is back', async () => {
        await haveAppOn(TWO);
        await swarm.stopWorkerEngine();
        try {
            expect(await page('127.0.0.1', port)).to.equal('two');
        } finally {
            await swarm.startWorkerEngine();
        }

        await engine.waitFor(planStack(planOf(composeOf(TWO, port))).services[0] as StackServicePlan, 'service_healthy', 120_000);
        expect(await page(swarm.workerAddress, port)).to.equal('two');
    });

    it('stops the app to no replica, starts it back to two, and restarts it by replacing every task', async () => {
        await haveAppOn(TWO);
        const plan = planOf(composeOf(TWO, port));
        const running = async () => (await engine.tasksOf(`${APP}_web`)).filter((task) => task.Status?.State === 'running');
        await engine.stop(plan);
        expect(await running()).to.equal([]);
        await expect(page('127.0.0.1', port)).to.reject();
        await engine.start(plan, OPTIONS);
        const started = (await running()).map((task) => task.ID);
        expect(started).to.have.length(2);
        expect(await page('127.0.0.1', port)).to.equal('two');
        await engine.restart(plan, OPTIONS);
        const restarted = (await running()).map((task) => task.ID);
        expect(restarted).to.have.length(2);
        expect(restarted.filter((id) => started.includes(id))).to.equal([]);
        expect(await page(swarm.workerAddress, port)).to.equal('two');
    });

    it('removes new services and networks when an up that created them is rolled back', async () => {
        const other = 'swarmshop2';
        const outcome = await engine.up(planOf(composeOf(ONE, otherPort), other), NO_IMAGE_IDS, OPTIONS);
        expect(outcome.created).to.have.length(1);
        expect(outcome.createdNetworks).to.equal([`${other}_default`]);
        const rollback = await engine.rollback(outcome);
        expect(rollback.failed).to.equal([]);
        expect(await engine.stackServices(other)).to.equal([]);
        expect(await swarm.manager.listNetworks({ filters: { name: [`${other}_default`] } })).to.equal([]);
    });
});
