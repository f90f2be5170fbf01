// needs: docker
import Net from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import type { AppStatus } from '../../../../../plugins/deploy/domain/status/status-service.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { buildTestImage, docker, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { readEvents } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const SECRET = `crash-secret-${SUFFIX}`;

interface Line {
    step: string;
    level: string;
    text: string;
}

interface EndedRun {
    state: string;
    error: string | null;
}

/** A web server on port 80 that serves only once /www/ready exists, made three seconds after it starts. */
const SLOW_START = 'sleep 3; touch /www/ready; exec httpd -f -p 80 -h /www';

describe('deploy manager: health means the app really serves', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let registry: string;
    let stalled: Net.Server;
    const stalledSockets = new Set<Net.Socket>();
    const servers: DeployTestServer[] = [];
    const apps: string[] = [];
    const images: Record<string, string> = {};
    const engine = new Docker();

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        registry = services.exports.REGISTRY_URL;
        const www = { '/www/index.html': '<h1>ready</h1>\n' };
        const build = (name: string, lines: string[], files: Record<string, string> = www) => {
            images[name] = buildTestImage(`${registry}/gatehouse-test/health-${name}:${SUFFIX}`, { files, lines }, true);
        };
        const slowToBeHealthy = [
            'HEALTHCHECK --interval=1s --timeout=1s --start-period=30s --retries=3 CMD test -f /www/ready',
            `CMD ["sh", "-c", "${SLOW_START}"]`,
        ];
        build('healthy', slowToBeHealthy);
        // The same with a file of its own (a layer no other image has), for the one test that needs it pulled: no other
        // test's deploy brings it into the engine.
        build('pulled', slowToBeHealthy, { ...www, '/www/pulled.txt': 'pulled by its deploy\n' });
        build('failing', ['HEALTHCHECK --interval=1s --timeout=1s --retries=2 CMD false', 'CMD ["httpd", "-f", "-p", "80", "-h", "/www"]']);
        build('crash', ['CMD ["sh", "-c", "echo starting; echo the database is gone >&2; exit 3"]']);
        build('late-crash', ['CMD ["sh", "/late-crash.sh"]'], {
            ...www,
            '/late-crash.sh': 'httpd -p 80 -h /www\necho "token is $TOKEN"\nsleep 2\necho giving up >&2\nexit 4\n',
        });
        // Only the registry has it: the deploy pulls it.
        docker('rmi', images.pulled as string);

        // A registry that takes the connection and never answers.
        stalled = Net.createServer((socket) => {
            stalledSockets.add(socket);
            socket.once('close', () => stalledSockets.delete(socket));
        });
        await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    });

    after(async () => {
        await removeProjects(apps, Object.values(images));
        for (const server of servers) {
            await server.context.cleanup();
        }

        stalledSockets.forEach((socket) => socket.destroy());
        await new Promise((resolve) => stalled?.close(resolve));
        services?.stop();
    });

    const startServer = async (environment: Record<string, string> = {}) => {
        // Without an ACME directory the site keeps its self-signed stand-in: these tests are about the containers.
        const { ACME_DIRECTORY_URL: _acme, ...exports } = services.exports;
        const server = await deployTestServer({
            ...exports,
            BASE_DOMAIN: 'apps.test',
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            DEPLOY_HEALTH_TIMEOUT_SECONDS: '30',
            DEPLOY_SETTLE_SECONDS: '6',
            ...environment,
        });
        servers.push(server);
        return server;
    };

    /** Creates the app with one service `web` of the image (more lines for the service appended), then deploys it. */
    const deploy = async (server: DeployTestServer, kind: string, image: string, serviceLines: string[] = [], secrets = {}) => {
        const name = `${kind}-${SUFFIX}`;
        apps.push(name);
        const [repository = '', tag = ''] = [image.slice(0, image.lastIndexOf(':')), image.slice(image.lastIndexOf(':') + 1)];
        const created = await server.admin.post('/api/apps', { name, image: repository, tag });
        expect(created.status, created.text).to.equal(201);
        const port = (created.body as { app: { hostPort: number } }).app.hostPort;
        return await deployCompose(server, name, composeOf(image, port, serviceLines), secrets);
    };

    const composeOf = (image: string, port: number, serviceLines: string[] = []) =>
        ['services:', '  web:', `    image: ${image}`, '    restart: unless-stopped', '    ports:', `      - "127.0.0.1:${port}:80"`]
            .concat(serviceLines.map((line) => `    ${line}`))
            .join('\n');

    const deployCompose = async (server: DeployTestServer, name: string, compose: string, secrets = {}) => {
        const saved = await server.admin.put(`/api/apps/${name}/draft`, { compose, secrets, auth: { access: 'public' } });
        expect(saved.status, saved.text).to.equal(200);
        const started = await server.admin.post(`/api/apps/${name}/deploy`, {});
        expect(started.status, started.text).to.equal(202);
        return { name, ...(await follow(server, (started.body as { runId: number }).runId)) };
    };

    const follow = async (server: DeployTestServer, runId: number) => {
        const messages = await readEvents(server.admin, `/api/runs/${runId}/events`);
        const end = JSON.parse(messages.find((message) => message.event === 'end')?.data ?? '{}') as EndedRun;
        const lines = messages.filter((message) => message.event === 'event').map((message) => JSON.parse(message.data) as Line);
        return { end, lines, text: lines.map((line) => line.text).join('\n') };
    };

    it("waits for the image's own health check, reports its health, and logs the pull's progress", async () => {
        const server = await startServer();
        const image = images.pulled as string;
        const { name, end, text } = await deploy(server, 'healthy', image);
        expect(end.state, text).to.equal('succeeded');
        expect(text).to.contain(`Pulling ${image}: Status: Downloaded newer image`);
        expect(text).to.match(/: (Pull complete|Already exists) \([0-9a-f]{12}\)/);
        expect(text.indexOf(`${name}-web-1 is healthy`), text).to.be.above(-1);
        expect(text.indexOf(`${name}-web-1 is healthy`)).to.be.below(text.indexOf('Services ready'));

        const status = await server.admin.get(`/api/apps/${name}/status`);
        expect((status.body as AppStatus).containers.map((container) => container.health)).to.equal(['healthy']);
    });

    it('fails an update to an image whose own health check always fails, and puts the previous one back', async () => {
        const server = await startServer();
        const first = await deploy(server, 'update', images.healthy as string);
        expect(first.end.state, first.text).to.equal('succeeded');
        const before = (await engine.getContainer(`${first.name}-web-1`).inspect()).Id;
        const port = (await server.admin.get(`/api/apps/${first.name}`)).body as { app: { hostPort: number } };

        const update = await deployCompose(server, first.name, composeOf(images.failing as string, port.app.hostPort));
        expect(update.end.state, update.text).to.equal('rolled back');
        expect(update.end.error).to.contain(`${first.name}-web-1 is unhealthy`);
        const after = await engine.getContainer(`${first.name}-web-1`).inspect();
        expect(after.Id).to.equal(before);
        expect(after.State.Running).to.be.true();
    });

    it('names a container that crashes at once, with its exit code and its last lines, before nginx is touched', async () => {
        const server = await startServer();
        const { end, lines, text } = await deploy(server, 'crash', images.crash as string);
        expect(end.state, text).to.equal('rolled back');
        expect(end.error).to.contain('web-1 exited with code 3');
        expect(end.error).to.contain('the database is gone');
        expect(text).to.not.contain('Services ready');
        expect(lines.some((line) => line.step === 'nginx' || line.step === 'check')).to.be.false();
    });

    it('names a container that crashes a few seconds after it started, its secrets masked', async () => {
        const server = await startServer();
        const environment = ['environment:', '  TOKEN: ${TOKEN}'];
        const { end, text } = await deploy(server, 'late', images['late-crash'] as string, environment, { TOKEN: SECRET });
        expect(end.state, text).to.equal('rolled back');
        expect(end.error).to.match(/web-1 exited with code 4 and was restarted/);
        expect(end.error).to.contain('giving up');
        expect(text).to.contain('token is ••••••••');
        expect(text).to.not.contain(SECRET);
    });

    it('aborts a pull from a registry that never answers after DEPLOY_PULL_TIMEOUT_SECONDS, naming the image', async () => {
        const server = await startServer({ DEPLOY_PULL_TIMEOUT_SECONDS: '2' });
        const image = `127.0.0.1:${(stalled.address() as Net.AddressInfo).port}/gatehouse-test/stalled:1`;
        const { end, text } = await deploy(server, 'stalled', image);
        expect(end.state, text).to.equal('rolled back');
        expect(end.error).to.contain(`could not pull ${image}`);
        expect(end.error).to.contain('did not finish within 2 s');
    });
});
