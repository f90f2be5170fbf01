// needs: docker
import { execFileSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Docker from 'dockerode';

import type { Browser } from '../../../../helpers/browser.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';
import type { AuthentikStandIn } from '../../../../support/authentik/index.ts';
import { APACHE_SSO, debianImage } from '../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'recipes.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `portal-${Math.random().toString(36).slice(2, 8)}`;
const OTHER = `${APP}-two`;

/** An htpasswd line in Apache's `{SHA}` form, made here so that the test needs no htpasswd binary (apache2-utils). */
function htpasswdLine(user: string, password: string): string {
    return `${user}:{SHA}${Crypto.createHash('sha1').update(password).digest('base64')}\n`;
}

/**
 * Apache's own login is HTTP Basic unless PORTAL_REQUIRE opens it; a request that comes from the address in
 * PORTAL_TRUSTED_PROXY (the compose file's `{{GATEWAY}}`) is marked, so the test sees which address nginx's
 * requests arrive from.
 */
const PORTAL_CONF = [
    `RequestHeader set X-From-Gateway yes "expr=%{REMOTE_ADDR} == '\${PORTAL_TRUSTED_PROXY}'"`,
    '<Location "/">',
    '    AuthType Basic',
    '    AuthName "portal"',
    '    AuthUserFile /etc/apache2/portal.htpasswd',
    '    Require ${PORTAL_REQUIRE}',
    '</Location>',
    '',
].join('\n');

/** The recipe this test ships for the image: its own login off, and a one-time command that needs the admin. */
const RECIPE = [
    'image: gatehouse-test/apache-sso',
    'title: Apache portal (test)',
    'description: Apache from Debian with its Basic login turned off by a variable',
    'method: none',
    'level: tested',
    'outcome: no-login-after-provider',
    'env:',
    '  PORTAL_REQUIRE: all granted',
    '  PORTAL_SITE: "{{URL}}"',
    'init:',
    '  - echo "admin={{ADMIN_USER}} user=$(id -un)" > /tmp/init.txt',
    'initUser: www-data',
    'adminUser: required',
    'sources: ["https://httpd.apache.org/docs/2.4/mod/mod_authz_core.html#require"]',
    '',
].join('\n');

describe(
    'deploy manager: a recipe sets the sign-in up (none), asks for the admin, runs its init once, and is saved',
    { timeout: 900_000 },
    () => {
        let scene: SignInScene;
        let authentik: AuthentikStandIn;
        let server: DeployTestServer;
        let admin: Browser;
        let httpsPort: number;
        let recipeDir: string;
        let image: string;
        let readers: string;

        const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;
        const startRun = async (path: string, payload: unknown) => await runToEnd(admin, await admin.post(path, payload));

        const signedIn = async (): Promise<Visitor> => {
            const visitor = new Visitor(BASE_DOMAIN);
            expect(last(await signInThroughProvider(visitor, url(), 'reader', 'reader-password')).status).to.be.below(500);
            return visitor;
        };

        const composeFor = (port: number) =>
            [
                'services:',
                '  web:',
                `    image: ${image}`,
                '    restart: unless-stopped',
                '    environment:',
                '      PORTAL_REQUIRE: valid-user',
                '      PORTAL_TRUSTED_PROXY: "{{GATEWAY}}"',
                '    ports:',
                `      - "127.0.0.1:${port}:80"`,
                '    volumes:',
                '      - ./portal.conf:/etc/apache2/conf-enabled/zz-portal.conf:ro',
                '      - ./portal.htpasswd:/etc/apache2/portal.htpasswd:ro',
                '',
            ].join('\n');

        const prepareApp = async (name: string) => {
            const port = await scene.createApp(name, image);
            const appDir = Path.join(server.context.config.apps.appsDir, name);
            Fs.mkdirSync(appDir, { recursive: true });
            Fs.writeFileSync(Path.join(appDir, 'portal.conf'), PORTAL_CONF);
            Fs.writeFileSync(Path.join(appDir, 'portal.htpasswd'), htpasswdLine('someone', 'some-password'));
            expect((await admin.put(`/api/apps/${name}/draft`, { compose: composeFor(port) })).status).to.equal(200);
            expect((await admin.put(`/api/apps/${name}/access`, { groups: [{ pk: readers, name: 'portal-users' }] })).status).to.equal(200);
        };

        before({ timeout: 900_000 }, async () => {
            image = debianImage(APACHE_SSO);
            recipeDir = temporaryDirectory('gatehouse-recipes-');
            Fs.writeFileSync(Path.join(recipeDir, 'apache-portal.yaml'), RECIPE);
            scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipeDir });
            ({ authentik, server, admin, httpsPort } = scene);
            readers = authentik.addGroup('portal-users');
            authentik.addUser({
                username: 'reader',
                password: 'reader-password',
                email: 'reader@example.com',
                name: 'Rea Der',
                groups: ['portal-users'],
            });
            await prepareApp(APP);
        });

        after(async () => {
            await scene?.close([APP, OTHER]);
            if (recipeDir) {
                Fs.rmSync(recipeDir, { recursive: true, force: true });
            }
        });

        /**
         * The app's first deploy, made by whichever test first needs the app deployed (each passes alone, in any order):
         * refused while the admin account is unset, and with a provider user whose name the API would refuse, then
         * deployed once the provider has a user with the deploying user's e-mail. What it saw is kept for the test of it.
         */
        const deployFirst = async () => {
            const before = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
            const refused = await admin.post(`/api/apps/${APP}/deploy`, { acceptRisks: true });

            // A provider user name goes into the app's files: one the API would refuse is not taken either.
            const hostileName = 'x\n    volumes:\n      - /:/host';
            authentik.addUser({
                username: hostileName,
                password: 'hostile-password',
                email: 'admin@example.com',
                name: 'Not A Name',
            });
            const stillRefused = await admin.post(`/api/apps/${APP}/deploy`, { acceptRisks: true });
            authentik.removeUser(hostileName);

            authentik.addUser({
                username: 'boss',
                password: 'boss-password',
                email: 'admin@example.com',
                name: 'The Boss',
                groups: ['portal-users'],
            });
            const deployed = await startRun(`/api/apps/${APP}/deploy`, { acceptRisks: true });
            // What the recipe's init wrote, read before another test's switch of method recreates the container.
            const initWritten = execFileSync('docker', ['exec', `${APP}-web-1`, 'cat', '/tmp/init.txt'], { encoding: 'utf8' });
            const after = (await admin.get(`/api/apps/${APP}`)).body as {
                app: { identity: { account: string; adminUser: string; values: Record<string, string> } };
            };
            return { before, refused, stillRefused, deployed, initWritten, after };
        };
        let firstDeploy: ReturnType<typeof deployFirst> | undefined;
        const haveDeployed = () => (firstDeploy ??= deployFirst());

        it('refuses the deploy while the admin account is unset, then takes the provider user with the deploying user e-mail', async () => {
            const { before, refused, stillRefused, deployed, after } = await haveDeployed();
            expect(before.app.identity).to.include({ method: 'none' });
            expect(before.app.identity.recipe.id).to.equal('apache-portal');

            expect(refused.status).to.equal(422);
            expect(refused.text).to.contain('adminUser');
            expect(refused.text).to.contain('admin@example.com');
            expect(stillRefused.status, stillRefused.text).to.equal(422);
            expect(stillRefused.text).to.contain('adminUser');

            expect(deployed.state, deployed.text).to.equal('succeeded');
            expect(deployed.text).to.contain("Ran the recipe's init command 1 of 1 in web");
            const check = deployed.lines.find((line) => line.step === 'sign-in-method');
            expect(check?.level).to.equal('info');
            expect(check?.text).to.contain('without its own login');
            expect(after.app.identity.adminUser).to.equal('boss');
            expect(after.app.identity.values.setting).to.contain('PORTAL_REQUIRE=all granted');
        });

        it("a signed-in visitor reaches the app with no login of the app's own; the init ran once with the admin", async () => {
            const { initWritten } = await haveDeployed();
            const visitor = await signedIn();
            const page = await visitor.request('GET', url('/'));
            expect(page.status).to.equal(200);
            expect(page.body).to.contain('apache sso test app');
            // The recipe's init ran as the user it names, with the admin account filled in.
            expect(initWritten).to.equal('admin=boss user=www-data\n');
        });

        it("fills {{GATEWAY}} with the address nginx's requests reach the app from", async () => {
            await haveDeployed();
            const compose = Fs.readFileSync(Path.join(server.context.config.apps.appsDir, APP, 'compose.yaml'), 'utf8');
            const network = (await new Docker().getNetwork(`${APP}_default`).inspect()) as { IPAM: { Config: Array<{ Gateway: string }> } };
            const gateway = network.IPAM.Config[0]?.Gateway ?? 'none';
            expect(compose).to.contain(`PORTAL_TRUSTED_PROXY: "${gateway}"`);
            expect(compose).to.not.contain('{{');
            const who = await (await signedIn()).request('GET', url('/cgi-bin/whoami'));
            expect(who.body).to.contain('HTTP_X_FROM_GATEWAY=yes');
        });

        it("switching to the app's own login drops the recipe's setting; applying the recipe again does not rerun init", async () => {
            await haveDeployed();
            const own = await startRun(`/api/apps/${APP}/sso`, { account: 'own' });
            expect(own.state, own.text).to.equal('succeeded');
            expect((await (await signedIn()).request('GET', url('/'))).status).to.equal(401);

            const recipe = await startRun(`/api/apps/${APP}/sso`, {});
            expect(recipe.state, recipe.text).to.equal('succeeded');
            expect(recipe.text).to.not.contain('init command');
            expect((await (await signedIn()).request('GET', url('/'))).status).to.equal(200);
            const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { account: string; method: string } } };
            expect(shown.app.identity).to.include({ account: 'recipe', method: 'none' });
        });

        it('refuses none for an app whose recipe does not turn its login off', async () => {
            await admin.post('/api/apps', { name: 'no-recipe', image: 'example/unknown-app' });
            const refused = await admin.post('/api/apps/no-recipe/sso', { account: 'none' });
            expect(refused.status).to.equal(422);
            expect(refused.text).to.contain('needs a recipe');
            expect((await admin.post('/api/apps/no-recipe/sso', {})).status).to.equal(422);
        });

        it('saves the working setup as a recipe; the next app from the image receives it as tested and recommended', async () => {
            await haveDeployed();
            const refused = await admin.post(`/api/apps/${APP}/recipe`, { keys: ['NOT_THERE'] });
            expect(refused.status).to.equal(422);
            const saved = await admin.post(`/api/apps/${APP}/recipe`, {
                keys: ['PORTAL_REQUIRE', 'PORTAL_TRUSTED_PROXY', 'PORTAL_SITE'],
                steps: ['Nothing to do in the app'],
                notes: 'Checked with a real login',
            });
            expect(saved.status, saved.text).to.equal(201);
            const recipe = (saved.body as { recipe: { id: string; level: string; method: string } }).recipe;
            expect(recipe).to.include({ level: 'tested', method: 'none' });

            const exported = await admin.get(`/api/recipes/${recipe.id}`);
            expect(exported.text).to.contain('PORTAL_TRUSTED_PROXY: "{{GATEWAY}}"');
            expect(exported.text).to.contain('PORTAL_SITE: "{{URL}}"');
            expect(exported.text).to.contain('PORTAL_REQUIRE: all granted');
            expect(exported.text).to.contain('# Checked with a real login');
            expect(exported.text).to.not.contain(`${APP}.${BASE_DOMAIN}`);

            await scene.createApp(OTHER, image);
            const other = (await admin.get(`/api/apps/${OTHER}`)).body as {
                app: {
                    identity: { recipe: { id: string; title: string; level: string }; options: Array<{ method: string; section: string }> };
                };
            };
            expect(other.app.identity.recipe).to.equal({ id: recipe.id, title: APP, level: 'tested' });
            expect(other.app.identity.options[0]).to.include({ method: 'none', section: 'recommended' });
        });
    },
);
