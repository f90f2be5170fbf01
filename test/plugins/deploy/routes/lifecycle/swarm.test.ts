// needs: docker, exclusive:swarm
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { runs } from '../../../../../plugins/deploy/domain/runs/run-service.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { buildWebImage, docker } from '../../../../support/images.ts';
import { killRunAt } from '../../../../support/killed-run.ts';
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
    let nextImage: string;
    let environment: Record<string, string>;

    before({ timeout: 300_000 }, async () => {
        swarm = await startSwarm();
        services = await startServices();
        image = buildWebImage(`gatehouse-test/swarm-app:${SUFFIX}`, 'on the swarm');
        nextImage = buildWebImage(`gatehouse-test/swarm-app:${SUFFIX}-next`, 'next on the swarm');
        await swarm.copyImage(image);
        await swarm.copyImage(nextImage);
        // Without an ACME directory the site keeps its self-signed stand-in: this test is about the services.
        const { ACME_DIRECTORY_URL: _acme, ...exports } = services.exports;
        environment = {
            ...exports,
            BASE_DOMAIN: 'apps.test',
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            DEPLOY_ENGINE: 'swarm',
            DEPLOY_HEALTH_TIMEOUT_SECONDS: '90',
            DEPLOY_SETTLE_SECONDS: '2',
            // A killed run's lease runs out, and the run is taken over, within seconds.
            RUN_LEASE_SECONDS: '2',
        };
        server = await deployTestServer(environment);
    });

    after({ timeout: 300_000 }, async () => {
        await server?.context.cleanup();
        services?.stop();
        await swarm?.close();
        for (const tag of [image, nextImage]) if (tag) docker('rmi', '-f', tag);
    });

    const run = async (method: 'post' | 'put' | 'delete', path: string, payload: object) => {
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

    /** An app of one replica on the manager, reading a secret of the secrets file, with a port published there. */
    async function createApp(name: string, withImage: string): Promise<{ compose: (tag: string) => string; port: number }> {
        const [repository, tag] = withImage.split(':') as [string, string];
        const created = await server.admin.post('/api/apps', { name, image: repository, tag });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        const compose = (reference: string) =>
            [
                'services:',
                '  web:',
                `    image: ${reference}`,
                `    ports: [{target: 80, published: ${port}, mode: host}]`,
                '    healthcheck: {test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:80/"], interval: 1s, retries: 2}',
                '    stop_grace_period: 1s',
                '    secrets: [token]',
                '    deploy: {replicas: 1, placement: {constraints: ["node.role == manager"]}}',
                'secrets:',
                '  token: {environment: API_TOKEN}',
                '',
            ].join('\n');
        const saved = await server.admin.put(`/api/apps/${name}/draft`, {
            compose: compose(withImage),
            secrets: { API_TOKEN: `token of ${name}` },
            auth: { access: 'public' },
        });
        expect(saved.status, saved.text).to.equal(200);
        return { compose, port };
    }

    const stackOf = async (name: string) => {
        const filters = { label: [`com.docker.stack.namespace=${name}`] };
        return {
            services: (await swarm.manager.listServices({ filters })).map((service) => service.Spec?.Name),
            secrets: ((await swarm.manager.listSecrets({ filters })) as unknown as Array<{ Spec?: { Name?: string } }>).map(
                (secret) => secret.Spec?.Name,
            ),
        };
    };
    const linesOf = async (runId: number) => (await runs(server.context.server).eventsAfter(runId, 0)).map((event) => event.text);
    const stateOf = async (name: string) => ((await server.admin.get(`/api/apps/${name}`)).body as { app: { state: string } }).app.state;
    const served = async (port: number) => (await (await fetch(`http://${swarm.managerAddress}:${port}/`)).text()).trim();

    it('undoes a first deploy killed after its service started (kill -9): the service, its secret and network go, the app is a draft', async () => {
        const name = `${APP}-killed`;
        await createApp(name, image);
        const runId = await killRunAt({ context: server.context, environment, app: name, step: 'access', body: { acceptRisks: true } });
        const lines = await linesOf(runId);
        expect(
            lines.some((line) => line.startsWith('The interrupted run was undone:')),
            lines.join('\n'),
        ).to.be.true();
        expect(lines).to.include(`Undone: removed service ${name}_web`);
        expect(lines.filter((line) => line.startsWith(`Undone: removed the secret ${name}_token_`))).to.have.length(1);
        expect(
            lines.filter((line) => line.startsWith('Could not undo')),
            lines.join('\n'),
        ).to.equal([]);
        expect(await stackOf(name)).to.equal({ services: [], secrets: [] });
        await waitUntil(
            `the network ${name}_default is gone`,
            async () => (await swarm.manager.listNetworks({ filters: { name: [`${name}_default`] } })).length === 0,
            { timeoutMs: 30_000, intervalMs: 200 },
        );
        expect(await stateOf(name)).to.equal('draft');

        const retried = await run('post', `/api/apps/${name}/deploy`, { acceptRisks: true });
        expect(retried.end.state, retried.text).to.equal('succeeded');
        const deleted = await run('delete', `/api/apps/${name}`, { confirm: name, deleteData: true });
        expect(deleted.end.state, deleted.text).to.equal('succeeded');
    });

    it('rolls a compose update killed after its service was updated back to the running spec through Swarm, and the update can be made again', async () => {
        const name = `${APP}-updated`;
        const { compose, port } = await createApp(name, image);
        const deployed = await run('post', `/api/apps/${name}/deploy`, { acceptRisks: true });
        expect(deployed.end.state, deployed.text).to.equal('succeeded');
        expect(await served(port)).to.equal('on the swarm');
        const before = await stackOf(name);

        const update = { mode: 'text', text: compose(nextImage), acceptRisks: true };
        const runId = await killRunAt({
            context: server.context,
            environment,
            app: name,
            step: 'access',
            operation: 'compose',
            body: update,
        });
        const lines = await linesOf(runId);
        expect(lines).to.include(`Undone: rolled back ${name}_web to its previous spec`);
        expect(
            lines.filter((line) => line.startsWith('Could not undo')),
            lines.join('\n'),
        ).to.equal([]);
        await waitUntil(`${name} serves its first image again`, async () => (await served(port).catch(() => '')) === 'on the swarm', {
            timeoutMs: 60_000,
            intervalMs: 250,
        });
        const [service] = await swarm.manager.listServices({ filters: { name: [`${name}_web`] } });
        expect((service?.Spec?.TaskTemplate as { ContainerSpec?: { Image?: string } }).ContainerSpec?.Image).to.equal(image);
        expect(await stackOf(name)).to.equal(before);
        expect(await stateOf(name)).to.equal('running');

        const updated = await run('put', `/api/apps/${name}/compose`, update);
        expect(updated.end.state, updated.text).to.equal('succeeded');
        expect(await served(port)).to.equal('next on the swarm');
        const deleted = await run('delete', `/api/apps/${name}`, { confirm: name, deleteData: true });
        expect(deleted.end.state, deleted.text).to.equal('succeeded');
    });
});
