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
import { lastHop as last, signInThroughProvider, Visitor, type VisitorResponse } from '../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `archive-${Math.random().toString(36).slice(2, 8)}`;
const ACS = '/mellon/postResponse';

/**
 * mod_auth_mellon as the app's SAML service provider. Apache sits behind nginx's TLS on another port, so its own
 * URL (which mellon compares with the answer's Destination) is given as the canonical name.
 */
const mellonConf = (origin: string) =>
    [
        `ServerName ${origin}`,
        'UseCanonicalName On',
        '<Location />',
        '    MellonEnable auth',
        '    MellonEndpointPath /mellon',
        `    MellonSPentityId "${origin}/mellon/metadata"`,
        '    MellonSPPrivateKeyFile /etc/apache2/saml/sp.key',
        '    MellonSPCertFile /etc/apache2/saml/sp.crt',
        '    MellonIdPMetadataFile /etc/apache2/saml/idp.xml',
        '    MellonUser NAME_ID',
        '    AuthType Mellon',
        '    Require valid-user',
        '</Location>',
        '',
    ].join('\n');

/** Follows the identity provider's auto-submitting form (the POST binding) as a browser's script would. */
async function submitAutoPost(visitor: Visitor, page: VisitorResponse): Promise<VisitorResponse[]> {
    const action = /<form[^>]*action="([^"]+)"/i.exec(page.body)?.[1];
    if (!action) {
        throw new Error(`no auto-submitting form at ${page.url}: ${page.status}`);
    }

    const fields = Object.fromEntries(
        [...page.body.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/gi)].map((match) => [
            match[1] ?? '',
            (match[2] ?? '').replace(/&#x2B;|&#43;/g, '+'),
        ]),
    );
    const posted = await visitor.request('POST', new URL(action.replace(/&amp;/g, '&'), page.url).href, fields);
    return [posted, ...(posted.location ? await visitor.follow(posted.location) : [])];
}

describe('deploy manager: SAML 2.0 into a real Apache with mod_auth_mellon', { timeout: 900_000 }, () => {
    let scene: SignInScene;
    let authentik: AuthentikStandIn;
    let server: DeployTestServer;
    let admin: Browser;
    let httpsPort: number;
    let image: string;
    let port: number;
    let appDir: string;

    const origin = () => `https://${APP}.${BASE_DOMAIN}:${httpsPort}`;
    const compose = (conf: string) =>
        [
            'services:',
            '  web:',
            `    image: ${image}`,
            '    ports:',
            `      - "127.0.0.1:${port}:80"`,
            '    volumes:',
            `      - ./${conf}:/etc/apache2/conf-enabled/zz-method.conf:ro`,
            '      - ./saml:/etc/apache2/saml:ro',
            '',
        ].join('\n');

    before({ timeout: 900_000 }, async () => {
        image = debianImage(APACHE_SSO);
        scene = await signInScene(BASE_DOMAIN);
        ({ authentik, server, admin, httpsPort } = scene);
        authentik.addGroup('archivists');
        authentik.addUser({ username: 'keeper', password: 'keeper-password', email: 'keeper@example.com', groups: ['archivists'] });
    });

    after(async () => {
        await scene?.close([APP]);
    });

    /** The app made and deployed before single sign-on, its SAML keys and Apache files written. */
    const deployApp = async () => {
        port = await scene.createApp(APP, image);
        appDir = Path.join(server.context.config.apps.appsDir, APP);
        const samlDir = Path.join(appDir, 'saml');
        Fs.mkdirSync(samlDir, { recursive: true });
        Fs.writeFileSync(Path.join(appDir, 'none.conf'), '# the app before single sign-on\n');
        Fs.writeFileSync(Path.join(appDir, 'mellon.conf'), mellonConf(origin()));
        const keyArgs = ['-keyout', Path.join(samlDir, 'sp.key'), '-out', Path.join(samlDir, 'sp.crt')];
        execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=archive-sp', ...keyArgs], {
            stdio: 'ignore',
        });
        Fs.chmodSync(Path.join(samlDir, 'sp.key'), 0o644);
        expect((await admin.put(`/api/apps/${APP}/draft`, { compose: compose('none.conf') })).status).to.equal(200);
        const groups = (await admin.get('/api/idp/groups')).body as { groups: Array<{ pk: string; name: string }> };
        const chosen = groups.groups.filter((group) => group.name === 'archivists').map(({ pk, name }) => ({ pk, name }));
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: chosen })).status).to.equal(200);
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
    };

    /**
     * The switch to SAML, made by whichever test first needs the app on SAML (each passes alone, in any order): refused
     * without the ACS path, then made with it. What it saw is kept for the test of it. The deletion test deletes the
     * app: it forgets both, and the next test that needs them makes the app and the switch again.
     */
    let made: Promise<void> | undefined;
    const switchToSaml = async () => {
        await (made ??= deployApp());
        const missing = await admin.post(`/api/apps/${APP}/sso`, { account: 'saml' });
        const changed = await runToEnd(
            admin,
            await admin.post(`/api/apps/${APP}/sso`, { account: 'saml', samlAcs: ACS, samlAudience: `${origin()}/mellon/metadata` }),
        );
        return { missing, changed };
    };
    let onSaml: ReturnType<typeof switchToSaml> | undefined;
    const haveSaml = () => (onSaml ??= switchToSaml());

    it('refuses SAML without the ACS path, then makes the provider, opens the ACS and checks the metadata', async () => {
        const { missing, changed } = await haveSaml();
        expect(missing.status).to.equal(422);
        expect(missing.text).to.contain('samlAcs');

        expect(changed.state, changed.text).to.equal('succeeded');
        expect(changed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain('publishes its metadata');
        const provider = authentik.state.providers.find((candidate) => candidate.name === `dp-${APP}-saml`);
        expect(provider).to.include({ acs_url: `${origin()}${ACS}`, sp_binding: 'post', sign_assertion: true });
        expect(provider?.signing_kp).to.exist();
        const site = Fs.readFileSync(Path.join(server.context.config.apps.nginxSitesDir, `${APP}.conf`), 'utf8');
        expect(site).to.not.contain(`location ${ACS}`);
        const acsBlock = site.slice(site.indexOf(`location = ${ACS} {`), site.indexOf('}', site.indexOf(`location = ${ACS} {`)));
        expect(acsBlock).to.contain(`proxy_pass http://127.0.0.1:${port}${ACS};`);
        expect(acsBlock).to.contain('proxy_set_header Remote-User "";');
        expect(acsBlock).to.not.contain('auth_request');

        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { values: Record<string, string> } } };
        const values = shown.app.identity.values;
        expect(values.entityId).to.equal(`${authentik.url}/application/saml/dp-${APP}-saml/metadata/`);
        expect(values.ssoUrl).to.equal(`${authentik.url}/application/saml/dp-${APP}-saml/sso/binding/redirect/`);
        expect(values.acsUrl).to.equal(`${origin()}${ACS}`);
        expect(values.certificate).to.contain('BEGIN CERTIFICATE');
        expect(authentik.violations).to.equal([]);
    });

    it("a signed-in visitor is the provider's user inside the app, through mellon's POST binding", async () => {
        await haveSaml();
        // The app is given the identity provider's metadata, as a person does with the values shown.
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { values: Record<string, string> } } };
        const metadata = await fetch(shown.app.identity.values.metadataUrl ?? '');
        expect(metadata.status).to.equal(200);
        Fs.writeFileSync(Path.join(appDir, 'saml', 'idp.xml'), await metadata.text());
        const switched = await runToEnd(admin, await admin.put(`/api/apps/${APP}/compose`, { mode: 'text', text: compose('mellon.conf') }));
        expect(switched.state, switched.text).to.equal('succeeded');

        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, `${origin()}/cgi-bin/whoami`, 'keeper', 'keeper-password');
        const answered = await submitAutoPost(visitor, last(hops));
        const page = last(answered);
        expect(page.status, JSON.stringify(answered.map((hop) => [hop.status, hop.url]))).to.equal(200);
        expect(page.body).to.contain('REMOTE_USER=keeper\n');
        expect(page.body).to.contain('AUTH_TYPE=Mellon');
        expect(authentik.violations).to.equal([]);
    });

    it("deleting with removeAccess removes the app's SAML provider and application", async () => {
        await haveSaml();
        try {
            const deleted = await runToEnd(admin, await admin.delete(`/api/apps/${APP}`, { confirm: APP, removeAccess: true }));
            expect(deleted.state, deleted.text).to.equal('succeeded');
            expect(authentik.state.providers.some((candidate) => String(candidate.name).startsWith(`dp-${APP}`))).to.be.false();
            expect(authentik.state.applications).to.equal([]);
        } finally {
            // The app is gone: a test after this one makes it, and its switch to SAML, again.
            made = undefined;
            onSaml = undefined;
        }
    });
});
