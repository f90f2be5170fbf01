// needs: docker, chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import type { AuthentikStandIn } from '../../../../support/authentik/index.ts';
import { launchChromium } from '../../../../support/chromium.ts';
import { APACHE_OIDC_CONF as OIDC_CONF, APACHE_SSO, debianImage } from '../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `ledger-${Math.random().toString(36).slice(2, 8)}`;

interface Identity {
    account: string;
    values: Record<string, string>;
    check: { ok: boolean; text: string } | null;
}

describe('deploy manager: OpenID Connect into a real Apache with mod_auth_openidc', { timeout: 900_000 }, () => {
    let scene: SignInScene;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let httpsPort: number;
    let port: number;
    let image: string;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;
    const providerNamed = (name: string) => authentik.state.providers.find((provider) => provider.name === name);
    const identity = async (as: Browser = admin) =>
        ((await as.get(`/api/apps/${APP}`)).body as { app: { identity: Identity } }).app.identity;

    /** Signs in at the provider (forward auth), then the app's own OpenID login runs on the provider's session. */
    const whoamiAs = async (username: string, password: string): Promise<string> => {
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, url('/cgi-bin/whoami'), username, password);
        expect(last(hops).status, JSON.stringify(hops.map((hop) => [hop.status, hop.url]))).to.equal(200);
        return last(hops).body;
    };

    const compose = () =>
        [
            'services:',
            '  web:',
            `    image: ${image}`,
            '    restart: unless-stopped',
            '    network_mode: host',
            '    environment:',
            '      APP_URL: "{{URL}}"',
            '      APP_ADMIN: "{{ADMIN_USER}} <{{ADMIN_EMAIL}}>"',
            '      OIDC_CONFIG_URL: "{{OIDC_CONFIG_URL}}"',
            '      OIDC_CLIENT_ID: "{{OIDC_CLIENT_ID}}"',
            '      OIDC_CLIENT_SECRET: "{{OIDC_CLIENT_SECRET}}"',
            '    volumes:',
            '      - ./oidc.conf:/etc/apache2/conf-enabled/zz-method.conf:ro',
            '      - ./ports.conf:/etc/apache2/ports.conf:ro',
            '',
        ].join('\n');

    before({ timeout: 900_000 }, async () => {
        image = debianImage(APACHE_SSO);
        scene = await signInScene(BASE_DOMAIN);
        ({ authentik, server, admin, httpsPort } = scene);
        authentik.addGroup('ledger-users');
        authentik.addUser({
            username: 'clerk',
            password: 'clerk-password',
            email: 'clerk@example.com',
            name: 'Cle Rk',
            groups: ['ledger-users'],
        });
        authentik.addUser({
            username: 'boss',
            password: 'boss-password',
            email: 'boss@example.com',
            name: 'Bo Ss',
            groups: ['ledger-users'],
        });
        authentik.addUser({ username: 'outsider', password: 'outsider-password' });
    });

    after(async () => {
        await scene?.close([APP]);
    });

    /**
     * The app made and deployed with OpenID Connect (boss its admin account), by whichever test first needs it (each
     * passes alone, in any order); the deploy's run is kept for the test of it. The deletion test deletes the app and
     * forgets this deploy: a test after it makes the app again.
     */
    const deployFirst = async () => {
        port = await scene.createApp(APP, image);
        const appDir = Path.join(server.context.config.apps.appsDir, APP);
        Fs.mkdirSync(appDir, { recursive: true });
        Fs.writeFileSync(Path.join(appDir, 'oidc.conf'), OIDC_CONF);
        Fs.writeFileSync(Path.join(appDir, 'ports.conf'), `Listen 127.0.0.1:${port}\n`);
        const groups = (await admin.get('/api/idp/groups')).body as { groups: Array<{ pk: string; name: string }> };
        const readers = groups.groups.filter((group) => group.name === 'ledger-users').map(({ pk, name }) => ({ pk, name }));
        const drafted = await admin.put(`/api/apps/${APP}/draft`, { compose: compose(), account: 'oidc', adminUser: 'boss' });
        expect(drafted.status, drafted.text).to.equal(200);
        const granted = await admin.put(`/api/apps/${APP}/access`, { groups: readers });
        expect(granted.status, granted.text).to.equal(200);
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, { acceptRisks: true }));
        return { deployed };
    };
    let firstDeploy: ReturnType<typeof deployFirst> | undefined;
    const haveDeployed = () => (firstDeploy ??= deployFirst());

    it('a deploy makes the OpenID client at the provider and gives the app its values through the placeholders', async () => {
        const { deployed } = await haveDeployed();
        expect(deployed.state, deployed.text).to.equal('succeeded');
        const check = deployed.lines.find((line) => line.step === 'sign-in-method');
        expect(check?.level, deployed.text).to.equal('info');
        expect(check?.text).to.contain(`${authentik.url}/application/o/dp-${APP}-sso/ publishes its discovery document`);

        const provider = providerNamed(`dp-${APP}-sso`);
        expect(provider?.client_type).to.equal('confidential');
        expect(provider?.grant_types).to.equal(['authorization_code', 'refresh_token']);
        expect(provider?.redirect_uris).to.equal([
            { matching_mode: 'regex', url: `https://${APP}\\.apps\\.test:${httpsPort}/.*`, redirect_uri_type: 'authorization' },
        ]);
        expect(provider?.signing_key).to.exist();
        const mappings = authentik.state.scopeMappings.filter((mapping) =>
            (provider?.property_mappings as string[]).includes(String(mapping.pk)),
        );
        expect(mappings.map((mapping) => mapping.scope_name).sort()).to.equal(['email', 'openid', 'profile', 'profile']);
        expect(
            mappings.some((mapping) => String(mapping.expression).includes('"svc_groups": ["admin"] if request.user.username == "boss"')),
        ).to.be.true();
        const application = authentik.state.applications.find((candidate) => candidate.slug === `dp-${APP}-sso`);
        expect(application?.provider).to.equal(provider?.pk);
        const bound = authentik.state.bindings.filter((binding) => binding.target === application?.pk).map((binding) => binding.group);
        expect(bound).to.have.length(1);

        const appDir = Path.join(server.context.config.apps.appsDir, APP);
        const written = Fs.readFileSync(Path.join(appDir, 'compose.yaml'), 'utf8');
        expect(written).to.contain(`APP_URL: "https://${APP}.${BASE_DOMAIN}:${httpsPort}"`);
        expect(written).to.contain('APP_ADMIN: "boss <boss@example.com>"');
        expect(written).to.contain(`OIDC_CONFIG_URL: "${authentik.url}/application/o/dp-${APP}-sso/.well-known/openid-configuration"`);
        expect(written).to.contain(`OIDC_CLIENT_ID: "${String(provider?.client_id)}"`);
        expect(written).to.contain('OIDC_CLIENT_SECRET: "${OIDC_CLIENT_SECRET}"');
        expect(written).to.not.contain(String(provider?.client_secret));
        expect(Fs.readFileSync(Path.join(appDir, 'secrets.env'), 'utf8')).to.contain(
            `OIDC_CLIENT_SECRET=${String(provider?.client_secret)}`,
        );
        expect(authentik.violations).to.equal([]);
    });

    it("shows the values to copy, the client secret to editors and admins only, and the check's outcome", async () => {
        await haveDeployed();
        const provider = providerNamed(`dp-${APP}-sso`);
        const shown = await identity();
        expect(shown.account).to.equal('oidc');
        expect(shown.values).to.include({
            issuer: `${authentik.url}/application/o/dp-${APP}-sso/`,
            discoveryUrl: `${authentik.url}/application/o/dp-${APP}-sso/.well-known/openid-configuration`,
            clientId: String(provider?.client_id),
            clientSecret: String(provider?.client_secret),
        });
        expect(shown.values.redirectUri).to.contain(`https://${APP}.${BASE_DOMAIN}:${httpsPort}/`);
        expect(shown.check?.ok).to.be.true();

        const viewer = await server.signInAs('viewer');
        const response = await viewer.get(`/api/apps/${APP}`);
        expect(response.status).to.equal(200);
        expect(response.text).to.not.contain(String(provider?.client_secret));
        expect((await identity(viewer)).values.clientId).to.equal(String(provider?.client_id));
    });

    it("a signed-in visitor is the provider's user inside the app, and the admin account gets svc_groups admin", async () => {
        await haveDeployed();
        const clerk = await whoamiAs('clerk', 'clerk-password');
        expect(clerk).to.contain('REMOTE_USER=clerk\n');
        expect(clerk).to.contain('AUTH_TYPE=openid-connect');
        expect(clerk).to.contain('OIDC_CLAIM_svc_groups=user');
        expect(clerk).to.contain('OIDC_CLAIM_email=clerk@example.com');

        const boss = await whoamiAs('boss', 'boss-password');
        expect(boss).to.contain('REMOTE_USER=boss\n');
        expect(boss).to.contain('OIDC_CLAIM_svc_groups=admin');
    });

    it('someone outside the chosen groups does not get in', async () => {
        await haveDeployed();
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, url('/cgi-bin/whoami'), 'outsider', 'outsider-password');
        expect(last(hops).status).to.not.equal(200);
        expect(hops.map((hop) => hop.body).join('')).to.not.contain('REMOTE_USER=outsider');
    });

    it('in a real browser: one sign-in at the provider, then the app knows the visitor', async () => {
        await haveDeployed();
        const chromium = await launchChromium({ loopbackDomain: BASE_DOMAIN });
        try {
            const page = await chromium.context.newPage();
            await page.goto(url('/cgi-bin/whoami'));
            await page.getByLabel('Username').fill('boss');
            await page.getByLabel('Password').fill('boss-password');
            await Promise.all([page.waitForURL(url('/cgi-bin/whoami')), page.getByRole('button').click()]);
            const body = (await page.textContent('body')) ?? '';
            expect(body).to.contain('REMOTE_USER=boss');
            expect(body).to.contain('OIDC_CLAIM_svc_groups=admin');
        } finally {
            await chromium.close();
        }
    });

    it('a method whose check fails is rolled back and OpenID Connect keeps working; changing the admin account updates the claim', async () => {
        await haveDeployed();
        try {
            const failed = await runToEnd(
                admin,
                await admin.post(`/api/apps/${APP}/sso`, {
                    account: 'basic',
                    sharedUser: 'nobody',
                    sharedPassword: 'not-accepted',
                    acceptRisks: true,
                }),
            );
            expect(failed.state, failed.text).to.equal('rolled back');
            expect((await identity()).account).to.equal('oidc');
            // The rollback starts the previous container again; Apache answers once it has started (nginx gives 502 before).
            const who = await waitUntil(
                'the app serves again after the rollback',
                () => whoamiAs('clerk', 'clerk-password').catch(() => undefined),
                {
                    timeoutMs: 60_000,
                    intervalMs: 500,
                },
            );
            expect(who).to.contain('REMOTE_USER=clerk\n');

            const changed = await runToEnd(
                admin,
                await admin.post(`/api/apps/${APP}/sso`, { account: 'oidc', adminUser: 'clerk', acceptRisks: true }),
            );
            expect(changed.state, changed.text).to.equal('succeeded');
            expect(changed.text).to.contain(`OpenID provider dp-${APP}-sso updated`);
            expect(await whoamiAs('clerk', 'clerk-password')).to.contain('OIDC_CLAIM_svc_groups=admin');
            expect(authentik.violations).to.equal([]);
        } finally {
            // The other tests expect boss as the admin account: it is put back, and the app serves it again.
            const back = await runToEnd(
                admin,
                await admin.post(`/api/apps/${APP}/sso`, { account: 'oidc', adminUser: 'boss', acceptRisks: true }),
            );
            expect(back.state, back.text).to.equal('succeeded');
            await waitUntil(
                'the app gives boss svc_groups admin again',
                async () => (await whoamiAs('boss', 'boss-password').catch(() => '')).includes('OIDC_CLAIM_svc_groups=admin'),
                { timeoutMs: 60_000, intervalMs: 500 },
            );
        }
    });

    it("deleting with removeAccess removes the app's OpenID client and its claim mapping with its forward-auth objects", async () => {
        await haveDeployed();
        try {
            const deleted = await runToEnd(admin, await admin.delete(`/api/apps/${APP}`, { confirm: APP, removeAccess: true }));
            expect(deleted.state, deleted.text).to.equal('succeeded');
            expect(providerNamed(`dp-${APP}-sso`)).to.not.exist();
            expect(providerNamed(`dp-${APP}`)).to.not.exist();
            expect(authentik.state.applications).to.equal([]);
            expect(authentik.state.scopeMappings.some((mapping) => String(mapping.name).startsWith(`dp-${APP}-sso`))).to.be.false();
            expect(authentik.violations).to.equal([]);
        } finally {
            // The app is gone: a test after this one makes and deploys it again.
            firstDeploy = undefined;
        }
    });
});
