/**
 * What the sign-in tests share: nginx and the other host services, the authentik stand-in with an administrator's
 * token, and a Gatehouse server connected to it (ACME left out: sites keep their stand-in certificates).
 */
import Code from '@hapi/code';

import type { Browser } from '../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../helpers/deploy-session.ts';
import { appHostPorts } from '../helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from './authentik/index.ts';
import { removeProjects } from './images.ts';
import { type RunningServices, startServices } from './services.ts';

const { expect } = Code;

export interface SignInScene {
    services: RunningServices;
    authentik: AuthentikStandIn;
    server: DeployTestServer;
    admin: Browser;
    httpsPort: number;
    /** Creates an app of the image (`repository:tag`); answers its host port. */
    createApp(name: string, image: string): Promise<number>;
    /** Removes the apps' containers, then stops everything the scene started. */
    close(apps: string[]): Promise<void>;
}

/** `environment`: more settings for the Gatehouse server (RECIPES_DIRS...). */
export async function signInScene(baseDomain: string, environment: Record<string, string> = {}): Promise<SignInScene> {
    const services = await startServices();
    const authentik = await startAuthentikStandIn();
    authentik.addUser({ username: 'operator', password: 'operator-password', isSuperuser: true });
    const token = authentik.addToken({ username: 'operator', identifier: 'operator-api' });
    const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
    const server = await deployTestServer({
        ...withoutAcme,
        BASE_DOMAIN: baseDomain,
        APPS_FIRST_HOST_PORT: String(await appHostPorts()),
        ...environment,
    });
    const admin = server.admin;
    expect((await admin.put('/api/admin/idp', { url: authentik.url, token })).status).to.equal(200);

    return {
        services,
        authentik,
        server,
        admin,
        httpsPort: Number(services.exports.NGINX_HTTPS_PORT),
        async createApp(name, image) {
            const [repository = '', tag = ''] = image.split(':');
            const created = await admin.post('/api/apps', { name, image: repository, tag });
            expect(created.status, created.text).to.equal(201);
            return (created.body as { app: { hostPort: number } }).app.hostPort;
        },
        async close(apps) {
            await removeProjects(apps);
            await server.context.cleanup();
            await authentik.close();
            services.stop();
        },
    };
}
