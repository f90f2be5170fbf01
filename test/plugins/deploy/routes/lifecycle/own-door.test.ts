// needs: docker
import { execFileSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import type { AuthentikStandIn } from '../../../../support/authentik/index.ts';
import { APACHE_OIDC_CONF as OIDC_CONF, APACHE_SSO, debianImage } from '../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'door.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `vault-${Math.random().toString(36).slice(2, 8)}`;
/** The Apache image under a name of its own, so that only this test's recipe applies to it. */
const REPOSITORY = 'gatehouse-test/apache-own-door';

const RECIPE = [
    `image: ${REPOSITORY}`,
    'title: Apache with its own OpenID sign-in (test)',
    'method: oidc',
    'level: tested',
    'outcome: user-login',
    'ownDoor: true',
    'env:',
    '  APP_URL: "{{URL}}"',
    '  OIDC_CONFIG_URL: "{{OIDC_CONFIG_URL}}"',
    '  OIDC_CLIENT_ID: "{{OIDC_CLIENT_ID}}"',
    '  OIDC_CLIENT_SECRET: "{{OIDC_CLIENT_SECRET}}"',
    'sources: ["https://github.com/OpenIDC/mod_auth_openidc"]',
    '',
].join('\n');

describe("deploy manager: a recipe whose app's own OpenID sign-in is the door (ownDoor)", { timeout: 900_000 }, () => {
    let scene: SignInScene;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let httpsPort: number;
    let recipeDir: string;
    let image: string;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    before({ timeout: 900_000 }, async () => {
        const built = debianImage(APACHE_SSO);
        image = `${REPOSITORY}:${built.split(':')[1] ?? 'latest'}`;
        execFileSync('docker', ['tag', built, image]);
        recipeDir = temporaryDirectory('gatehouse-recipes-');
        Fs.writeFileSync(Path.join(recipeDir, 'apache-own-door.yaml'), RECIPE);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipeDir });
        ({ authentik, server, admin, httpsPort } = scene);
        authentik.addGroup('vault-users');
        authentik.addUser({ username: 'keeper', password: 'keeper-password', email: 'keeper@example.com', groups: ['vault-users'] });
        authentik.addUser({ username: 'outsider', password: 'outsider-password' });
        const port = await scene.createApp(APP, image);
        const appDir = Path.join(server.context.config.apps.appsDir, APP);
        Fs.mkdirSync(appDir, { recursive: true });
        Fs.writeFileSync(Path.join(appDir, 'oidc.conf'), OIDC_CONF);
        Fs.writeFileSync(Path.join(appDir, 'ports.conf'), `Listen 127.0.0.1:${port}\n`);
        // The container shares the host's network so that it reaches the provider on loopback, as nginx does.
        const compose = [
            'services:',
            '  web:',
            `    image: ${image}`,
            '    restart: unless-stopped',
            '    network_mode: host',
            '    volumes:',
            '      - ./oidc.conf:/etc/apache2/conf-enabled/zz-method.conf:ro',
            '      - ./ports.conf:/etc/apache2/ports.conf:ro',
            '',
        ].join('\n');
        expect((await admin.put(`/api/apps/${APP}/draft`, { compose })).status).to.equal(200);
        const groups = (await admin.get('/api/idp/groups')).body as { groups: Array<{ pk: string; name: string }> };
        const keepers = groups.groups.filter((group) => group.name === 'vault-users').map(({ pk, name }) => ({ pk, name }));
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: keepers })).status).to.equal(200);
    });

    after(async () => {
        await scene?.close([APP]);
        execFileSync('docker', ['rmi', image], { stdio: 'ignore' });
        if (recipeDir) {
            Fs.rmSync(recipeDir, { recursive: true, force: true });
        }
    });

    /** The app's deploy, made by whichever test first needs the app deployed (each passes alone, in any order). */
    const deployFirst = async () => {
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, { acceptRisks: true }));
        return { deployed };
    };
    let firstDeploy: ReturnType<typeof deployFirst> | undefined;
    const haveDeployed = () => (firstDeploy ??= deployFirst());

    it('deploys without forward auth: no proxy provider, a site with no auth_request, the OpenID client bound to the groups', async () => {
        const { deployed } = await haveDeployed();
        expect(deployed.state, deployed.text).to.equal('succeeded');
        expect(deployed.text).to.contain("no forward auth in front (the recipe's ownDoor)");
        expect(deployed.lines.find((line) => line.step === 'sign-in-method')?.level).to.equal('info');
        const site = Fs.readFileSync(Path.join(server.context.config.apps.nginxSitesDir, `${APP}.conf`), 'utf8');
        expect(site).to.not.contain('auth_request');
        expect(authentik.state.providers.map((provider) => provider.name)).to.equal([`dp-${APP}-sso`]);
    });

    it("the app's own sign-in sends the visitor to the provider, and only the chosen groups get in", async () => {
        await haveDeployed();
        const keeper = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(keeper, url('/cgi-bin/whoami'), 'keeper', 'keeper-password');
        expect(last(hops).status, JSON.stringify(hops.map((hop) => [hop.status, hop.url]))).to.equal(200);
        expect(last(hops).body).to.contain('REMOTE_USER=keeper\n');
        expect(last(hops).body).to.contain('AUTH_TYPE=openid-connect');
        // The first hop went from the app straight to the provider's authorization endpoint, not to an outpost.
        expect(hops[1]?.url).to.contain('/application/o/authorize/');

        const outsider = new Visitor(BASE_DOMAIN);
        const refused = await signInThroughProvider(outsider, url('/cgi-bin/whoami'), 'outsider', 'outsider-password');
        expect(last(refused).status).to.not.equal(200);
        expect(refused.map((hop) => hop.body).join('')).to.not.contain('REMOTE_USER=outsider');
    });
});
