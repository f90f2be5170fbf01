// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { appHostPorts } from '../../../../helpers/server.ts';
import { type AuthRegistry, pushWithLogin, startAuthRegistry } from '../../../../support/auth-registry.ts';
import { buildWebImage, docker, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { readEvents } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;
const APP = 'coffer';

describe('deploy manager: pulls from a registry that asks for credentials', { timeout: 300_000 }, () => {
    let services: RunningServices;
    let registry: AuthRegistry;
    let image: string;
    const servers: DeployTestServer[] = [];
    const engine = new Docker();

    before(async () => {
        services = await startServices();
        // What a killed run of this file left under the same name goes first.
        await removeProjects([APP]);
        registry = await startAuthRegistry();
        image = buildWebImage(`${registry.url}/gatehouse-test/private:1`, '<h1>private</h1>\n');
        pushWithLogin(registry, image);
        docker('rmi', image);
    });

    after(async () => {
        await removeProjects([APP], [image]);
        for (const server of servers) {
            await server.context.cleanup();
        }

        await registry?.stop();
        services?.stop();
    });

    const deployWith = async (password: string) => {
        // Each deploy pulls: no copy of the image an earlier test pulled, and none of its containers, is left.
        await removeProjects([APP], [image]);
        // Without an ACME directory the site keeps its self-signed stand-in: this test is about the pull.
        const { ACME_DIRECTORY_URL: _acme, ...exports } = services.exports;
        const server = await deployTestServer({
            ...exports,
            BASE_DOMAIN: 'apps.test',
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            REGISTRY_URL: registry.url,
            REGISTRY_USERNAME: registry.username,
            REGISTRY_PASSWORD: password,
        });
        servers.push(server);
        expect(
            (await server.admin.post('/api/apps', { name: APP, image: `${registry.url}/gatehouse-test/private`, tag: '1' })).status,
        ).to.equal(201);
        // No identity provider here: the app is meant to be public.
        expect((await server.admin.put(`/api/apps/${APP}/draft`, { auth: { access: 'public' } })).status).to.equal(200);
        const started = await server.admin.post(`/api/apps/${APP}/deploy`, {});
        expect(started.status, started.text).to.equal(202);
        const messages = await readEvents(server.admin, `/api/runs/${(started.body as { runId: number }).runId}/events`);
        const end = JSON.parse(messages.find((message) => message.event === 'end')?.data ?? '{}') as { state: string; error: string };
        return { end, text: messages.map((message) => message.data).join('\n') };
    };

    it('cannot pull with a wrong password, and says so', async () => {
        const { end, text } = await deployWith('not-the-password');
        expect(end.state).to.equal('rolled back');
        expect(end.error).to.contain(`could not pull ${image}`);
        expect(text).to.not.contain('not-the-password');
    });

    it('pulls with the configured credentials and deploys; the password appears nowhere in the run', async () => {
        const { end, text } = await deployWith(registry.password);
        expect(end.state, text).to.equal('succeeded');
        expect(text).to.contain(`Pulled ${image}`);
        expect(text).to.not.contain(registry.password);
        expect((await engine.getContainer(`${APP}-app-1`).inspect()).State.Running).to.be.true();
    });
});
