// needs: docker, exclusive:swarm
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { buildWebImage, docker } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { readEvents } from '../../../../support/sse.ts';
import { startSwarm, type Swarm } from '../../../../support/swarm.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const APP = `swarm-${SUFFIX}`;

interface EndedRun {
    state: string;
    error: string | null;
}

describe('deploy manager: apps on a Docker Swarm (DEPLOY_ENGINE=swarm)', { timeout: 600_000 }, () => {
    let swarm: Swarm;
    let services: RunningServices;
    let server: DeployTestServer;
    let image: string;

    before({ timeout: 300_000 }, async () => {
        swarm = await startSwarm();
        services = await startServices();
        image = buildWebImage(`gatehouse-test/swarm-app:${SUFFIX}`, 'on the swarm');
        await swarm.copyImage(image);
        // Without an ACME directory the site keeps its self-signed stand-in: this test is about the services.
        const { ACME_DIRECTORY_URL: _acme, ...exports } = services.exports;
        server = await deployTestServer({
            ...exports,
            BASE_DOMAIN: 'apps.test',
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            DEPLOY_ENGINE: 'swarm',
            DEPLOY_HEALTH_TIMEOUT_SECONDS: '90',
            DEPLOY_SETTLE_SECONDS: '2',
        });
    });

    after({ timeout: 300_000 }, async () => {
        await server?.context.cleanup();
        services?.stop();
        await swarm?.close();
        if (image) docker('rmi', '-f', image);
    });

    const run = async (method: 'post' | 'delete', path: string, payload: object) => {
        const started = await server.admin[method](path, payload);
        expect(started.status, started.text).to.equal(202);
        const messages = await readEvents(server.admin, `/api/runs/${(started.body as { runId: number }).runId}/events`);
        const end = JSON.parse(messages.find((message) => message.event === 'end')?.data ?? '{}') as EndedRun;
        const text = messages
            .filter((message) => message.event === 'event')
            .map((message) => (JSON.parse(message.data) as { text: string }).text)
            .join('\n');
        return { end, text };
    };

    it('deploys an app as a stack of two replicas, one per node, behind nginx, and deletes it with its services', async () => {
        const [repository, tag] = image.split(':') as [string, string];
        const created = await server.admin.post('/api/apps', { name: APP, image: repository, tag });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = [
            'services:',
            '  web:',
            `    image: ${image}`,
            `    ports: [{target: 80, published: ${port}, mode: host}]`,
            '    healthcheck: {test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:80/"], interval: 1s, retries: 2}',
            '    stop_grace_period: 1s',
            '    deploy: {replicas: 2, placement: {max_replicas_per_node: 1}}',
            '',
        ].join('\n');
        const saved = await server.admin.put(`/api/apps/${APP}/draft`, { compose, secrets: {}, auth: { access: 'public' } });
        expect(saved.status, saved.text).to.equal(200);

        // A swarm publishes on every interface of a node (mode: host) or of all nodes (the routing mesh): a risk the lint
        // names, taken here knowingly, as the README asks the nodes to be firewalled.
        const refused = await server.admin.post(`/api/apps/${APP}/deploy`, {});
        expect(refused.status).to.equal(422);
        expect((refused.body as { error: string }).error).to.contain(
            `web publishes ${port} on every interface, reachable without the proxy`,
        );
        const deployed = await run('post', `/api/apps/${APP}/deploy`, { acceptRisks: true });
        expect(deployed.end.state, deployed.text).to.equal('succeeded');
        expect(deployed.text).to.contain(`Created ${APP}_web (${image}, 2 replica(s))`);
        const tasks = (await swarm.manager.listTasks({ filters: { service: [`${APP}_web`], 'desired-state': ['running'] } })) as Array<{
            NodeID: string;
            Status: { State: string };
        }>;
        expect(
            tasks
                .filter((task) => task.Status.State === 'running')
                .map((task) => task.NodeID)
                .sort(),
        ).to.equal([swarm.managerNodeId, swarm.workerNodeId].sort());
        const onWorker = await fetch(`http://${swarm.workerAddress}:${port}/`);
        expect((await onWorker.text()).trim()).to.equal('on the swarm');

        const deleted = await run('delete', `/api/apps/${APP}`, { confirm: APP, removeVolumes: true, deleteData: true });
        expect(deleted.end.state, deleted.text).to.equal('succeeded');
        expect(deleted.text).to.contain(`Removed ${APP}_web from the swarm`);
        expect(await swarm.manager.listServices({ filters: { label: [`com.docker.stack.namespace=${APP}`] } })).to.equal([]);
    });
});
