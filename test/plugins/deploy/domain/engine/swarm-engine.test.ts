// needs: docker, exclusive:swarm
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { parseCompose } from '../../../../../plugins/deploy/domain/compose/compose-parse.ts';
import { planProject } from '../../../../../plugins/deploy/domain/engine/compose-plan.ts';
import type { ProjectPlan } from '../../../../../plugins/deploy/domain/engine/plan-model.ts';
import { execInContainer, type UpOutcome } from '../../../../../plugins/deploy/domain/engine/app-engine.ts';
import type { JournalEntry } from '../../../../../plugins/deploy/domain/engine/run-journal.ts';
import { SwarmEngine } from '../../../../../plugins/deploy/domain/engine/swarm-engine.ts';
import { planStack, type StackServicePlan } from '../../../../../plugins/deploy/domain/engine/swarm-plan.ts';
import { freePorts, temporaryDirectory } from '../../../../helpers/server.ts';
import { buildWebImage } from '../../../../support/images.ts';
import { startSwarm, type Swarm } from '../../../../support/swarm.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const APP = 'swarmshop';
const OBJECT_KEY = Crypto.randomBytes(32);
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

function planOf(
    compose: string,
    project = APP,
    app: { dir: string; values: Record<string, string> } = { dir: '/nonexistent', values: {} },
): ProjectPlan {
    return planProject(parseCompose(compose), {
        project,
        workingDir: app.dir,
        composeFile: `${app.dir}/compose.yaml`,
        values: app.values,
        objectKey: OBJECT_KEY,
    });
}

/** A service that mounts a secret from a file, one from the secrets file (mode 0400, another name) and a config. */
const VAULT_COMPOSE = [
    'services:',
    '  web:',
    `    image: ${ONE}`,
    '    stop_grace_period: 1s',
    '    secrets: [file_secret, {source: env_secret, target: env.secret, mode: 0400}]',
    '    configs: [{source: app_conf, target: /etc/app.conf}]',
    '    deploy: {replicas: 2, placement: {max_replicas_per_node: 1}, update_config: {parallelism: 2}}',
    'secrets:',
    '  file_secret: {file: ./file-secret.txt}',
    '  env_secret: {environment: API_TOKEN}',
    'configs:',
    '  app_conf: {file: ./app.conf}',
    '',
].join('\n');

/** What a task finds in its files: `<file secret>|<its mode>|<env secret>|<its mode>|<config>`. */
const READ_VAULT =
    'echo "$(cat /run/secrets/file_secret)|$(stat -c %a /run/secrets/file_secret)|$(cat /run/secrets/env.secret)|$(stat -c %a /run/secrets/env.secret)|$(cat /etc/app.conf)"';

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

    describe('secrets and configs', () => {
        const VAULT = 'swarmvault';
        let appDir: string;

        before(() => {
            appDir = temporaryDirectory('gatehouse-swarm-vault-');
            Fs.writeFileSync(Path.join(appDir, 'file-secret.txt'), 'from-a-file');
            Fs.writeFileSync(Path.join(appDir, 'app.conf'), 'listen 80');
        });

        after({ timeout: 120_000 }, async () => {
            await engine?.down(VAULT);
            Fs.rmSync(appDir, { recursive: true, force: true });
        });

        const vaultPlan = (token: string) => planOf(VAULT_COMPOSE, VAULT, { dir: appDir, values: { API_TOKEN: token } });

        async function haveVault(token: string): Promise<void> {
            await engine.commit(await engine.up(vaultPlan(token), NO_IMAGE_IDS, OPTIONS));
        }

        /** What each running task (one per node) reads from its files, each node's through its own engine. */
        async function readOnEachNode(): Promise<string[]> {
            const tasks = (await engine.tasksOf(`${VAULT}_web`)).filter(
                (task) => task.DesiredState === 'running' && task.Status?.State === 'running',
            );
            const engines = { [swarm.managerNodeId]: swarm.manager, [swarm.workerNodeId]: swarm.worker };
            return await Promise.all(
                tasks.map(async (task) => {
                    const node = engines[task.NodeID ?? ''];
                    const container = node?.getContainer(task.Status?.ContainerStatus?.ContainerID ?? '');
                    if (!container) throw new Error(`task ${task.ID} runs on no node of the swarm`);
                    return (await execInContainer(container, READ_VAULT, { timeoutMs: 10_000 })).output;
                }),
            );
        }

        async function objectNames(): Promise<{ secrets: string[]; configs: string[] }> {
            const filters = { label: [`com.docker.stack.namespace=${VAULT}`] };
            const names = (listed: Array<{ Spec?: { Name?: string } }>) => listed.map((object) => object.Spec?.Name ?? '').sort();
            return {
                secrets: names((await swarm.manager.listSecrets({ filters })) as unknown as Array<{ Spec?: { Name?: string } }>),
                configs: names(await swarm.manager.listConfigs({ filters })),
            };
        }

        it('mounts them as files in every task, moves the service to a changed secret and removes the old one; down removes them all', async () => {
            lines.length = 0;
            await haveVault('token-one');
            expect(await readOnEachNode()).to.equal(['from-a-file|444|token-one|400|listen 80', 'from-a-file|444|token-one|400|listen 80']);
            const first = await objectNames();
            expect(first.secrets).to.have.length(2);
            expect(first.configs).to.have.length(1);
            const [service] = await engine.stackServices(VAULT);
            expect(JSON.stringify(service?.Spec)).to.not.include('token-one');

            const changed = await engine.up(vaultPlan('token-two'), NO_IMAGE_IDS, OPTIONS);
            expect(changed.updatedServices).to.have.length(1);
            expect(changed.createdObjects.map((object) => object.kind)).to.equal(['secret']);
            await engine.commit(changed);
            expect(await readOnEachNode()).to.equal(['from-a-file|444|token-two|400|listen 80', 'from-a-file|444|token-two|400|listen 80']);
            const second = await objectNames();
            expect(second.configs).to.equal(first.configs);
            expect(second.secrets).to.have.length(2);
            expect(second.secrets.filter((name) => first.secrets.includes(name))).to.have.length(1);
            expect(lines.join('\n')).to.not.include('token-');

            await engine.down(VAULT);
            expect(await objectNames()).to.equal({ secrets: [], configs: [] });
        });

        it('removes the secret an up made when the up is rolled back, and the service mounts the previous one again', async () => {
            await haveVault('token-one');
            const before = await objectNames();
            const journal: JournalEntry[] = [];
            const journalled = new SwarmEngine(
                swarm.manager,
                undefined,
                () => {},
                async (entry) => {
                    journal.push(entry);
                },
            );
            const outcome = await journalled.up(vaultPlan('token-three'), NO_IMAGE_IDS, OPTIONS);
            expect(outcome.createdObjects).to.have.length(1);
            // Written down before it was made, for a run killed here to be undone: its name, never its value.
            expect(journal[0]).to.equal({ type: 'swarm-object', kind: 'secret', name: outcome.createdObjects[0]?.name });
            expect(JSON.stringify(journal)).to.not.include('token-three');
            const rollback = await journalled.rollback(outcome);
            expect(rollback.failed).to.equal([]);
            expect(await objectNames()).to.equal(before);
            await engine.waitFor(planStack(vaultPlan('token-one')).services[0] as StackServicePlan, 'service_healthy', 60_000);
            expect(await readOnEachNode()).to.equal(['from-a-file|444|token-one|400|listen 80', 'from-a-file|444|token-one|400|listen 80']);
        });
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
