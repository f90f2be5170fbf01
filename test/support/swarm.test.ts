// needs: docker, exclusive:swarm
/**
 * The swarm harness (swarm.ts) gives a real two-node swarm: checked here through the Docker API alone.
 * `exclusive:swarm`: the harness's names (netns, links, the manager's swarm) are fixed, so one swarm file runs at a
 * time; the other Docker files run beside it, as an engine that is a swarm manager runs plain containers as before.
 */
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import { freePorts } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { buildTestImage } from './images.ts';
import { kernelHasIpvs, runningTasks, startSwarm, type Swarm, type SwarmNode, type SwarmTask } from './swarm.ts';

export const lab = Lab.script();
const { describe, it, before, after, afterEach } = lab;
const { expect } = Code;

const IMAGE = 'gatehouse-test/swarm-busybox:1';
const PAGE = 'served by gh-swarm\n';
const TASK_TIMEOUT_MS = 60_000;

const HTTPD = ['httpd', '-f', '-p', '8080', '-h', '/www'];

interface ServiceShape {
    replicas?: number;
    command?: string[];
    placement?: Docker.TaskSpecBase['Placement'];
    networks?: string[];
    endpoint?: Docker.EndpointSpec;
}

/** The spec of a service of busybox httpd on 8080 (or `command`), with an init so that SIGTERM stops it at once. */
function serviceSpec(name: string, shape: ServiceShape): Docker.CreateServiceOptions {
    return {
        Name: name,
        TaskTemplate: {
            ContainerSpec: { Image: IMAGE, Command: shape.command ?? HTTPD, Init: true },
            Placement: shape.placement,
            Networks: shape.networks?.map((target) => ({ Target: target })),
        },
        Mode: { Replicated: { Replicas: shape.replicas ?? 1 } },
        EndpointSpec: shape.endpoint,
    };
}

function describeTasks(tasks: SwarmTask[]): string {
    return tasks
        .map(
            (task) =>
                `${task.ID} on ${task.NodeID}: ${task.DesiredState}/${task.Status.State}${task.Status.Err ? ` (${task.Status.Err})` : ''}`,
        )
        .join(', ');
}

/** Waits until the service's running tasks satisfy `check`, naming what it waited for and the tasks it saw last. */
async function untilTasks(swarm: Swarm, service: string, what: string, check: (running: SwarmTask[]) => boolean): Promise<SwarmTask[]> {
    let seen: SwarmTask[] = [];
    try {
        return await waitUntil(
            `${service}: ${what}`,
            async () => {
                seen = (await swarm.manager.listTasks({ filters: { service: [service] } })) as SwarmTask[];
                const running = await runningTasks(swarm.manager, service);
                return check(running) && running;
            },
            { timeoutMs: TASK_TIMEOUT_MS, intervalMs: 250 },
        );
    } catch (error) {
        throw new Error(`${(error as Error).message}; tasks: ${describeTasks(seen)}; worker log:\n${swarm.workerLog()}`);
    }
}

async function nodeState(swarm: Swarm, nodeId: string): Promise<string> {
    return ((await swarm.manager.getNode(nodeId).inspect()) as SwarmNode).Status.State;
}

async function answers(url: string): Promise<string | false> {
    try {
        const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
        return response.ok ? await response.text() : false;
    } catch {
        return false;
    }
}

describe('the swarm harness', () => {
    let swarm: Swarm;
    const services: string[] = [];

    before({ timeout: 180_000 }, async () => {
        buildTestImage(IMAGE, { files: { '/www/index.html': PAGE } });
        const started = Date.now();
        swarm = await startSwarm();
        console.log(`startSwarm took ${Date.now() - started} ms`);
        await swarm.copyImage(IMAGE);
    });

    after({ timeout: 120_000 }, async () => {
        const started = Date.now();
        await swarm?.close();
        console.log(`close took ${Date.now() - started} ms`);
        await new Docker()
            .getImage(IMAGE)
            .remove({ force: true })
            .catch(() => undefined);
    });

    afterEach(async () => {
        for (const name of services.splice(0)) {
            await swarm.manager
                .getService(name)
                .remove()
                .catch(() => undefined);
        }
    });

    /** Creates a service that the test's end removes. */
    async function service(name: string, shape: ServiceShape = {}): Promise<void> {
        services.push(name);
        await swarm.manager.createService(serviceSpec(name, shape));
    }

    it('lists the two nodes ready, the worker at its own address, and the worker engine has the copied image', async () => {
        const nodes = (await swarm.manager.listNodes()) as SwarmNode[];
        expect(nodes.map((node) => node.ID).sort()).to.equal([swarm.managerNodeId, swarm.workerNodeId].sort());
        expect(nodes.every((node) => node.Status.State === 'ready')).to.be.true();
        const worker = nodes.find((node) => node.ID === swarm.workerNodeId);
        expect(worker?.Spec.Role).to.equal('worker');
        expect(worker?.Status.Addr).to.equal(swarm.workerAddress);
        expect(((await swarm.worker.getImage(IMAGE).inspect()) as { RepoTags: string[] }).RepoTags).to.include(IMAGE);
    });

    it('runs one replica on each node when a service of two allows one per node (Placement.MaxReplicas 1)', async () => {
        await service('gh-swarm-test-spread', { replicas: 2, placement: { MaxReplicas: 1 } });
        const running = await untilTasks(swarm, 'gh-swarm-test-spread', 'two tasks run', (tasks) => tasks.length === 2);
        expect(running.map((task) => task.NodeID).sort()).to.equal([swarm.managerNodeId, swarm.workerNodeId].sort());
    });

    it("moves the replicas onto the manager when the worker's engine stops", { timeout: 180_000 }, async () => {
        await swarm.startWorkerEngine();
        await service('gh-swarm-test-move', { replicas: 2 });
        // The scheduler spreads a service's tasks over the nodes: one on the worker, or the test would prove nothing.
        await untilTasks(swarm, 'gh-swarm-test-move', 'two tasks run, one of them on the worker', (tasks) => {
            return tasks.length === 2 && tasks.some((task) => task.NodeID === swarm.workerNodeId);
        });

        await swarm.stopWorkerEngine();
        expect(await nodeState(swarm, swarm.workerNodeId)).to.equal('down');
        const moved = await untilTasks(swarm, 'gh-swarm-test-move', 'both running tasks are on the manager', (tasks) => {
            return tasks.length === 2 && tasks.every((task) => task.NodeID === swarm.managerNodeId);
        });
        expect(moved).to.have.length(2);
    });

    it("brings the worker's node back ready when its engine starts again", { timeout: 180_000 }, async () => {
        await swarm.stopWorkerEngine();
        expect(await nodeState(swarm, swarm.workerNodeId)).to.equal('down');
        await swarm.startWorkerEngine();
        expect(await nodeState(swarm, swarm.workerNodeId)).to.equal('ready');
        expect(await swarm.worker.ping()).to.exist();
        // Its images stay across the restart.
        expect(await swarm.worker.getImage(IMAGE).inspect()).to.exist();
    });

    it('answers on the worker address for a port a worker task publishes in host mode', async () => {
        await swarm.startWorkerEngine();
        const [port] = await freePorts(1);
        await service('gh-swarm-test-host-port', {
            placement: { Constraints: [`node.id==${swarm.workerNodeId}`] },
            endpoint: { Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
        });
        await untilTasks(swarm, 'gh-swarm-test-host-port', 'its task runs on the worker', (tasks) => tasks.length === 1);
        const url = `http://${swarm.workerAddress}:${port}/`;
        expect(await waitUntil(`${url} answers`, () => answers(url), { timeoutMs: 20_000, intervalMs: 250 })).to.equal(PAGE);
    });

    it('carries an overlay network between the nodes: a worker task reaches a manager task by its service name', async () => {
        await swarm.startWorkerEngine();
        const network = 'gh-swarm-test-overlay';
        await swarm.manager.createNetwork({ Name: network, Driver: 'overlay', CheckDuplicate: true });
        try {
            const [port] = await freePorts(1);
            // DNS round robin: a virtual IP would need IPVS (see routingMesh), a task's own address does not.
            await service('gh-swarm-test-back', {
                command: ['sh', '-c', 'echo from the manager > /www/index.html && exec httpd -f -p 8080 -h /www'],
                placement: { Constraints: [`node.id==${swarm.managerNodeId}`] },
                networks: [network],
                endpoint: { Mode: 'dnsrr' },
            });
            // The front copies the back's page over the overlay, then serves it on the worker's address.
            await service('gh-swarm-test-front', {
                command: [
                    'sh',
                    '-c',
                    // Not wget -T: Debian's static busybox 1.35 wget dies of SIGSEGV with it.
                    'until timeout 5 wget -q -O /www/back.html http://gh-swarm-test-back:8080/; do sleep 1; done; exec httpd -f -p 8080 -h /www',
                ],
                placement: { Constraints: [`node.id==${swarm.workerNodeId}`] },
                networks: [network],
                endpoint: { Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
            });
            const url = `http://${swarm.workerAddress}:${port}/back.html`;
            const page = await waitUntil(`${url} answers with the manager task's page`, () => answers(url), {
                timeoutMs: TASK_TIMEOUT_MS,
                intervalMs: 500,
            }).catch(async (error: Error) => {
                const tasks = [
                    ...((await swarm.manager.listTasks({ filters: { service: ['gh-swarm-test-back'] } })) as SwarmTask[]),
                    ...((await swarm.manager.listTasks({ filters: { service: ['gh-swarm-test-front'] } })) as SwarmTask[]),
                ];
                throw new Error(`${error.message}; tasks: ${describeTasks(tasks)}`);
            });
            expect(page).to.equal('from the manager\n');
        } finally {
            for (const name of services.splice(0)) {
                await swarm.manager.getService(name).remove();
            }

            await waitUntil(
                `the manager removes ${network} (once the services' tasks have left it)`,
                () =>
                    swarm.manager
                        .getNetwork(network)
                        .remove()
                        .then(
                            () => true,
                            (error: { statusCode?: number }) => error.statusCode === 404,
                        ),
                { timeoutMs: 30_000, intervalMs: 250 },
            );
        }
    });

    // Without IPVS (CONFIG_IP_VS) dockerd never programs the ingress: see routingMesh in swarm.ts. Either way the
    // harness must say so truly: where the kernel has it the port answers, where not nothing listens on it.
    it('says whether a port published in ingress mode by a task on the worker answers on 127.0.0.1 (the routing mesh)', async () => {
        await swarm.startWorkerEngine();
        const [port] = await freePorts(1);
        await service('gh-swarm-test-mesh', {
            placement: { Constraints: [`node.id==${swarm.workerNodeId}`] },
            endpoint: { Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: port, PublishMode: 'ingress' }] },
        });
        await untilTasks(swarm, 'gh-swarm-test-mesh', 'its task runs on the worker', (tasks) => tasks.length === 1);
        const url = `http://127.0.0.1:${port}/`;
        expect(swarm.routingMesh).to.equal(kernelHasIpvs());
        if (swarm.routingMesh) {
            expect(
                await waitUntil(`${url} answers through the routing mesh`, () => answers(url), { timeoutMs: 30_000, intervalMs: 250 }),
            ).to.equal(PAGE);
        } else {
            await expect(fetch(url, { signal: AbortSignal.timeout(5_000) })).to.reject();
        }
    });
});
