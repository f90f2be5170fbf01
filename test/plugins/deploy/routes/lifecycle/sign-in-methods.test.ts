// needs: docker
import { execFileSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import type { AuthentikStandIn } from '../../../../support/authentik/index.ts';
import { APACHE_SSO, debianImage } from '../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `portal-${Math.random().toString(36).slice(2, 8)}`;
/** An app of the list-and-refusals test's own: the others switch APP's method and keep a shared password in its draft. */
const LISTED = `${APP}-list`;
const SHARED_PASSWORD = 'shared-account-password-7';

/** Apache takes the visitor's name from Remote-User, but only from the address nginx's requests arrive from. */
const TRUSTED_HEADER_CONF = [
    'RewriteEngine On',
    'RewriteCond %{REMOTE_ADDR} ^(172|10|192\\.168)\\.',
    'RewriteCond %{HTTP:Remote-User} ^(.+)$',
    'RewriteRule ^ - [E=REMOTE_USER:%1]',
    '',
].join('\n');

const BASIC_CONF = [
    '<Location "/">',
    '    AuthType Basic',
    '    AuthName "portal"',
    '    AuthUserFile /etc/apache2/portal.htpasswd',
    '    Require valid-user',
    '</Location>',
    '',
].join('\n');

describe('deploy manager: how a visitor is known inside a real Apache app (header, basic, own)', { timeout: 900_000 }, () => {
    let scene: SignInScene;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let httpsPort: number;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    const startRun = async (method: 'post', path: string, payload: unknown) => await runToEnd(admin, await admin[method](path, payload));

    /** Signs in at the provider through the app's redirects; answers the visitor, its session kept. */
    const signedIn = async (username: string, password: string): Promise<Visitor> => {
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, url(), username, password)).status).to.be.below(500);
        return visitor;
    };

    const whoami = async (visitor: Visitor, extra: Record<string, string> = {}) =>
        (await visitor.request('GET', url('/cgi-bin/whoami'), undefined, extra)).body;

    let image: string;
    let port: number;
    let readers: string;

    /** The app's compose file with Apache's configuration for one method mounted (another file: a new container). */
    const composeWith = (conf: string, hostPort = port) =>
        [
            'services:',
            '  web:',
            `    image: ${image}`,
            '    restart: unless-stopped',
            '    ports:',
            `      - "127.0.0.1:${hostPort}:80"`,
            '    volumes:',
            `      - ./${conf}:/etc/apache2/conf-enabled/zz-method.conf:ro`,
            '      - ./portal.htpasswd:/etc/apache2/portal.htpasswd:ro',
            '',
        ].join('\n');

    /** Apache's configuration mounted in APP now: each test that needs one mounts it, whichever test ran before. */
    let mounted = 'header.conf';
    const useConf = async (conf: string) => {
        if (mounted === conf) {
            return;
        }

        const response = await admin.put(`/api/apps/${APP}/compose`, { mode: 'text', text: composeWith(conf), acceptRisks: true });
        const updated = await runToEnd(admin, response);
        expect(updated.state, updated.text).to.equal('succeeded');
        mounted = conf;
    };

    /** Makes and deploys an app from the image with the trusted-header configuration mounted; answers its host port. */
    const deployApp = async (name: string) => {
        const hostPort = await scene.createApp(name, image);
        const dir = Path.join(server.context.config.apps.appsDir, name);
        Fs.mkdirSync(dir, { recursive: true });
        Fs.writeFileSync(Path.join(dir, 'header.conf'), TRUSTED_HEADER_CONF);
        Fs.writeFileSync(Path.join(dir, 'basic.conf'), BASIC_CONF);
        const htpasswd = execFileSync('htpasswd', ['-nbB', 'shared', SHARED_PASSWORD], { encoding: 'utf8' });
        Fs.writeFileSync(Path.join(dir, 'portal.htpasswd'), htpasswd);
        const compose = composeWith('header.conf', hostPort);
        expect((await admin.put(`/api/apps/${name}/draft`, { compose })).status).to.equal(200);
        expect((await admin.put(`/api/apps/${name}/access`, { groups: [{ pk: readers, name: 'portal-users' }] })).status).to.equal(200);
        const deployed = await startRun('post', `/api/apps/${name}/deploy`, { acceptRisks: true });
        expect(deployed.state, deployed.text).to.equal('succeeded');
        return hostPort;
    };

    /** Puts APP on basic with the shared password that works, unless it is on it (the basic test may have run first). */
    /** Mounts Apache's basic.conf and switches the app to HTTP Basic with the shared account: the switch's run. */
    const switchToBasic = async () => {
        await useConf('basic.conf');
        return await startRun('post', `/api/apps/${APP}/sso`, { account: 'basic', sharedUser: 'shared', sharedPassword: SHARED_PASSWORD });
    };

    const haveBasic = async () => {
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { account: string } } };
        if (shown.app.identity.account === 'basic' && mounted === 'basic.conf') {
            return;
        }

        const changed = await switchToBasic();
        expect(changed.state, changed.text).to.equal('succeeded');
    };

    // Building the Apache image from Debian's packages takes a minute or more when it is not cached yet.
    before({ timeout: 900_000 }, async () => {
        image = debianImage(APACHE_SSO);
        scene = await signInScene(BASE_DOMAIN);
        ({ authentik, server, admin, httpsPort } = scene);
        readers = authentik.addGroup('portal-users');
        authentik.addUser({
            username: 'reader',
            password: 'reader-password',
            email: 'reader@example.com',
            name: 'Rea Der',
            groups: ['portal-users'],
        });
        port = await deployApp(APP);
    });

    after(async () => {
        await scene?.close([APP, LISTED]);
    });

    it('lists the methods on the app, and refuses a method without what it needs or one not built yet', async () => {
        await deployApp(LISTED);
        const shown = (await admin.get(`/api/apps/${LISTED}`)).body as {
            app: {
                identity: { account: string; options: Array<{ method: string; needs: string[] }>; values: object; check: { ok: boolean } };
            };
        };
        expect(shown.app.identity.options.map((option) => option.method)).to.include(['basic', 'header', 'own']);
        expect(shown.app.identity.options.find((option) => option.method === 'basic')?.needs).to.equal(['sharedUser', 'sharedPassword']);
        expect(shown.app.identity.check?.ok).to.be.true();

        const missing = await admin.post(`/api/apps/${LISTED}/sso`, { account: 'basic', sharedUser: 'shared' });
        expect(missing.status).to.equal(422);
        expect(missing.text).to.contain('sharedPassword');
        // Said in words after the field, which the pages leave out: the method's title, not its id.
        expect(missing.text).to.contain("HTTP Basic with one shared account needs the shared account's password");
        const recipe = await admin.post(`/api/apps/${LISTED}/sso`, {});
        expect(recipe.status).to.equal(422);
        expect((await admin.post(`/api/apps/${LISTED}/sso`, { account: 'magic' })).status).to.equal(422);
        const viewer = await server.signInAs('viewer');
        expect((await viewer.post(`/api/apps/${LISTED}/sso`, { account: 'own' })).status).to.equal(403);
    });

    it('header: the app knows the signed-in visitor from Remote-User and X-idp-*, and a forged header does not get through', async () => {
        await useConf('header.conf');
        const changed = await startRun('post', `/api/apps/${APP}/sso`, { account: 'header' });
        expect(changed.state, changed.text).to.equal('succeeded');
        const check = changed.lines.find((line) => line.step === 'sign-in-method');
        expect(check?.level).to.equal('info');
        expect(check?.text).to.contain('Remote-User');

        const reader = await signedIn('reader', 'reader-password');
        const who = await whoami(reader, { 'Remote-User': 'forged', 'X-idp-username': 'forged' });
        expect(who).to.contain('REMOTE_USER=reader');
        expect(who).to.contain('HTTP_X_IDP_USERNAME=reader');
        expect(who).to.contain('HTTP_REMOTE_EMAIL=reader@example.com');
        expect(who).to.contain('HTTP_X_IDP_NAME=Rea Der');
        expect(who).to.not.contain('forged');

        const shown = (await admin.get(`/api/apps/${APP}`)).body as {
            app: { identity: { account: string; values: Record<string, string> } };
        };
        expect(shown.app.identity.account).to.equal('header');
        expect(shown.app.identity.values.headers).to.equal(
            'Remote-User, Remote-Email, Remote-Name, X-idp-username, X-idp-email, X-idp-name',
        );
        // The address to trust is shown as the address it is: the gateway of the network the app's container is on.
        const networks = JSON.parse(
            execFileSync('docker', ['inspect', '--format', '{{json .NetworkSettings.Networks}}', `${APP}-web-1`], { encoding: 'utf8' }),
        ) as Record<string, { Gateway: string }>;
        const gateway = Object.values(networks)[0]?.Gateway;
        expect(gateway).to.match(/^\d+\.\d+\.\d+\.\d+$/);
        expect(shown.app.identity.values.trustedAddress).to.equal(
            `${gateway} (the gateway of the app's network, where nginx's requests come from)`,
        );
    });

    it('basic: the shared account is sent to the app on every request, and its password is never shown', async () => {
        const changed = await switchToBasic();
        expect(changed.state, changed.text).to.equal('succeeded');
        expect(changed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain('accepts the shared account shared');
        expect(changed.text).to.not.contain(SHARED_PASSWORD);

        const who = await whoami(await signedIn('reader', 'reader-password'));
        expect(who).to.contain('REMOTE_USER=shared');
        expect(who).to.contain('AUTH_TYPE=Basic');

        const site = Fs.statSync(Path.join(server.context.config.apps.nginxSitesDir, `${APP}.conf`));
        expect(site.mode & 0o777).to.equal(0o600);
        const encoded = Buffer.from(`shared:${SHARED_PASSWORD}`).toString('base64');
        for (const path of [`/api/apps/${APP}`, `/api/apps/${APP}/files`, `/api/apps/${APP}/runs`]) {
            const response = await admin.get(path);
            expect(response.status).to.equal(200);
            expect(response.text).to.not.contain(SHARED_PASSWORD);
            expect(response.text).to.not.contain(encoded);
        }

        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { values: Record<string, string> } } };
        expect(shown.app.identity.values).to.equal({ sharedUser: 'shared' });
    });

    it('a method whose check fails is rolled back: the site and the draft keep the method that worked', async () => {
        await haveBasic();
        const failed = await startRun('post', `/api/apps/${APP}/sso`, {
            account: 'basic',
            sharedUser: 'shared',
            sharedPassword: 'wrong-password',
        });
        expect(failed.state, failed.text).to.equal('rolled back');
        expect(failed.text).to.contain('did not accept the shared account shared');
        expect(failed.text).to.not.contain('wrong-password');

        const who = await whoami(await signedIn('reader', 'reader-password'));
        expect(who).to.contain('REMOTE_USER=shared');
        const draft = (await admin.get(`/api/apps/${APP}`)).body as {
            app: { draft: { account: string; sharedUser: string }; identity: { check: { ok: boolean; text: string } | null } };
        };
        expect(draft.app.draft.account).to.equal('basic');
        // The check shown is the method in force's, which works: not the rolled-back run's failed one.
        expect(draft.app.identity.check?.ok, JSON.stringify(draft.app.identity.check)).to.be.true();
        expect(draft.app.identity.check?.text).to.contain('accepts the shared account shared');
        // The password that works is still the one kept: the next run uses it.
        const again = await startRun('post', `/api/apps/${APP}/sso`, { account: 'basic' });
        expect(again.state, again.text).to.equal('succeeded');
    });

    it("own: the app's own login after the provider's; no identity is passed", async () => {
        await useConf('header.conf');
        const changed = await startRun('post', `/api/apps/${APP}/sso`, { account: 'own' });
        expect(changed.state, changed.text).to.equal('succeeded');
        const who = await whoami(await signedIn('reader', 'reader-password'), { 'Remote-User': 'forged' });
        expect(who).to.contain('REMOTE_USER=\n');
        expect(who).to.not.contain('forged');
        expect(authentik.violations).to.equal([]);
    });
});
