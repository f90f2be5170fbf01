// needs: docker, chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import type { AuthentikStandIn } from '../../../../support/authentik/index.ts';
import { launchChromium } from '../../../../support/chromium.ts';
import { DOKUWIKI, DOKUWIKI_ADMIN, debianImage } from '../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../support/sse.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `wiki-${Math.random().toString(36).slice(2, 8)}`;
const LOGIN = { adapter: 'form', path: '/dokuwiki/doku.php?do=login' };
/** What DokuWiki shows a signed-in user, and only one. */
const SIGNED_IN = `Logged in as: <bdi>${DOKUWIKI_ADMIN.name}</bdi>`;

interface AuditEntry {
    action: string;
    target: string;
    outcome: string;
    details: Record<string, unknown> | null;
}

describe('deploy manager: auto-login into a real DokuWiki with one shared account', { timeout: 900_000 }, () => {
    let scene: SignInScene;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let httpsPort: number;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;
    const siteText = () => Fs.readFileSync(Path.join(server.context.config.apps.nginxSitesDir, `${APP}.conf`), 'utf8');
    const tokenInSite = () => /X-Gatehouse-Autologin-Token\s+"?([^";\s]+)"?;/.exec(siteText())?.[1] ?? '';
    const autologinAudit = async () =>
        ((await admin.get(`/api/admin/audit?action=apps.autologin&target=${APP}`)).body as { entries: AuditEntry[] }).entries;

    before({ timeout: 900_000 }, async () => {
        const image = debianImage(DOKUWIKI);
        scene = await signInScene(BASE_DOMAIN);
        ({ authentik, server, admin, httpsPort } = scene);
        authentik.addGroup('wiki-users');
        authentik.addUser({ username: 'reader', password: 'reader-password', email: 'reader@example.com', groups: ['wiki-users'] });
        const port = await scene.createApp(APP, image);
        const compose = ['services:', '  web:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n');
        expect((await admin.put(`/api/apps/${APP}/draft`, { compose })).status).to.equal(200);
        const groups = (await admin.get('/api/idp/groups')).body as { groups: Array<{ pk: string; name: string }> };
        const chosen = groups.groups.filter((group) => group.name === 'wiki-users').map(({ pk, name }) => ({ pk, name }));
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: chosen })).status).to.equal(200);
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
    });

    after(async () => {
        await scene?.close([APP]);
    });

    /**
     * The switch to auto-login (after a refused unknown adapter), made by whichever test first needs it: the tests pass
     * in any order and alone. Its test asserts on what it answered.
     */
    const switchToAutologin = async () => {
        const unknown = await admin.post(`/api/apps/${APP}/sso`, {
            account: 'autologin',
            sharedUser: DOKUWIKI_ADMIN.username,
            sharedPassword: DOKUWIKI_ADMIN.password,
            login: { adapter: 'telepathy' },
        });
        const changed = await runToEnd(
            admin,
            await admin.post(`/api/apps/${APP}/sso`, {
                account: 'autologin',
                sharedUser: DOKUWIKI_ADMIN.username,
                sharedPassword: DOKUWIKI_ADMIN.password,
                login: LOGIN,
            }),
        );
        return { unknown, changed };
    };
    let switched: ReturnType<typeof switchToAutologin> | undefined;
    const haveAutologin = () => (switched ??= switchToAutologin());

    it('switching to auto-login checks that it signs in, and never shows the password or the token', async () => {
        const { unknown, changed } = await haveAutologin();
        expect(unknown.status).to.equal(422);
        expect(unknown.text).to.contain('form');

        expect(changed.state, changed.text).to.equal('succeeded');
        expect(changed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain(
            'the auto-login signs in to the app as admin',
        );
        expect(siteText()).to.contain('location /__svc/autologin');
        const token = tokenInSite();
        expect(token.length).to.be.above(30);

        for (const path of [`/api/apps/${APP}`, `/api/apps/${APP}/files`, `/api/apps/${APP}/runs`]) {
            const response = await admin.get(path);
            expect(response.text).to.not.contain(DOKUWIKI_ADMIN.password);
            expect(response.text).to.not.contain(token);
        }

        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { values: Record<string, string> } } };
        expect(shown.app.identity.values).to.include({ sharedUser: 'admin', adapter: 'form', loginPath: LOGIN.path });
    });

    it('answers only loopback requests with the app token; anything else is 403 and audited', async () => {
        await haveAutologin();
        const base = server.baseUrl;
        expect((await fetch(`${base}/api/autologin/${APP}`)).status).to.equal(403);
        const wrong = await fetch(`${base}/api/autologin/${APP}`, { headers: { 'X-Gatehouse-Autologin-Token': 'guessed' } });
        expect(wrong.status).to.equal(403);
        const fromAfar = await server.context.server.inject({
            url: `/api/autologin/${APP}`,
            headers: { 'X-Gatehouse-Autologin-Token': tokenInSite() },
            remoteAddress: '192.0.2.7',
        });
        expect(fromAfar.statusCode).to.equal(403);
        expect(JSON.parse(fromAfar.payload).error).to.contain('token');

        const refused = (await autologinAudit()).filter((entry) => entry.outcome === 'failure');
        expect(refused.map((entry) => entry.details?.reason)).to.include(['not a loopback request', 'no app with that token']);
    });

    it('without a provider session the proxy sends the visitor to the provider first', async () => {
        const visitor = new Visitor(BASE_DOMAIN);
        const first = await visitor.request('GET', url('/__svc/autologin'));
        expect(first.status).to.equal(302);
        expect(first.location).to.contain('/outpost.goauthentik.io/start');
    });

    it("after the provider's sign-in, /__svc/autologin hands the visitor DokuWiki's session", async () => {
        await haveAutologin();
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, url('/__svc/autologin'), 'reader', 'reader-password');
        expect(last(hops).status, JSON.stringify(hops.map((hop) => [hop.status, hop.url]))).to.equal(200);
        expect(last(hops).body).to.contain(SIGNED_IN);
        expect((await autologinAudit()).some((entry) => entry.outcome === 'success')).to.be.true();
    });

    it('in a real browser: sign in at the provider once, then the wiki knows the shared account', async () => {
        await haveAutologin();
        const chromium = await launchChromium({ loopbackDomain: BASE_DOMAIN });
        try {
            const page = await chromium.context.newPage();
            await page.goto(url('/__svc/autologin'));
            await page.getByLabel('Username').fill('reader');
            await page.getByLabel('Password').fill('reader-password');
            // The document tells who is signed in: its stylesheets and scripts are not waited for.
            const documentLoaded = { waitUntil: 'domcontentloaded' } as const;
            await Promise.all([page.waitForURL(/\/dokuwiki\//, documentLoaded), page.getByRole('button').click()]);
            expect(await page.content(), page.url()).to.contain(SIGNED_IN);
            await page.goto(url('/dokuwiki/doku.php?id=start'), documentLoaded);
            expect(await page.content(), page.url()).to.contain(SIGNED_IN);
        } finally {
            await chromium.close();
        }
    });

    it('a refused login is an error page and an audit entry, never a loop; a failing switch is rolled back', async () => {
        await haveAutologin();
        const failed = await runToEnd(
            admin,
            await admin.post(`/api/apps/${APP}/sso`, { account: 'autologin', sharedPassword: 'not-the-password' }),
        );
        expect(failed.state, failed.text).to.equal('rolled back');
        expect(failed.text).to.contain('the auto-login did not sign in as admin');

        // The draft's password changed without a run: the next hand-off uses it, and DokuWiki refuses it.
        expect((await admin.put(`/api/apps/${APP}/draft`, { sharedPassword: 'not-the-password' })).status).to.equal(200);
        let hops: Awaited<ReturnType<typeof signInThroughProvider>>;
        try {
            hops = await signInThroughProvider(new Visitor(BASE_DOMAIN), url('/__svc/autologin'), 'reader', 'reader-password');
        } finally {
            // The other tests hand visitors off with the right password.
            expect((await admin.put(`/api/apps/${APP}/draft`, { sharedPassword: DOKUWIKI_ADMIN.password })).status).to.equal(200);
        }

        expect(last(hops).status).to.equal(502);
        expect(last(hops).body).to.contain('did not sign in');
        expect(last(hops).body).to.not.contain('not-the-password');
        const entries = await autologinAudit();
        expect(entries[0]?.outcome).to.equal('failure');
        expect(JSON.stringify(entries)).to.not.contain('not-the-password');
        expect(authentik.violations).to.equal([]);
    });
});
