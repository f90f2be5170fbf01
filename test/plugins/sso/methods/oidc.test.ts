import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { HostConfig } from '../../../../lib/config.ts';
import { methodCheckHelpers } from '../../../../plugins/deploy/domain/engine/access-steps.ts';
import { CLIENT_ID_VARIABLE, CLIENT_SECRET_VARIABLE, type MethodSettings } from '../../../../plugins/sso/method-types.ts';
import oidc, { oidcObjectName, redirectPattern } from '../../../../plugins/sso/methods/oidc.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const host = {} as HostConfig;

describe('sign-in method oidc: a confidential OpenID client for the app', () => {
    let issuer: Http.Server;
    let base: string;
    let discovery: { status: number; body: unknown } = { status: 200, body: {} };

    before(async () => {
        issuer = Http.createServer((_request, response) => {
            response.writeHead(discovery.status, { 'content-type': 'application/json' }).end(JSON.stringify(discovery.body));
        });
        await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
        base = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
    });

    after(() => {
        issuer.close();
    });

    const settings = (): MethodSettings => ({
        app: 'ledger',
        domain: 'ledger.apps.test',
        origin: 'https://ledger.apps.test:8443',
        oidc: {
            endpoints: {
                issuer: `${base}/application/o/dp-ledger-sso/`,
                configUrl: `${base}/application/o/dp-ledger-sso/.well-known/openid-configuration`,
                logoutUrl: `${base}/application/o/dp-ledger-sso/end-session/`,
            },
            clientId: 'client-id-1',
            clientSecret: 'client-secret-1',
        },
    });

    it('keeps a client id and secret in the app secrets, made once', () => {
        const made = oidc.secrets?.({}) ?? {};
        expect(made[CLIENT_ID_VARIABLE]).to.match(/^[0-9a-f]{40}$/);
        expect(made[CLIENT_SECRET_VARIABLE]).to.match(/^[0-9a-f]{64}$/);
        expect(oidc.secrets?.(made)).to.equal(made);
    });

    it('names its objects after the app, and lets redirects go to any path of the app origin only', () => {
        expect(oidcObjectName('ledger')).to.equal('dp-ledger-sso');
        const pattern = new RegExp(`^${redirectPattern('https://ledger.apps.test:8443')}$`);
        expect(pattern.test('https://ledger.apps.test:8443/oauth/callback')).to.be.true();
        for (const elsewhere of [
            'https://ledger.apps.test:8443.evil.test/x',
            'https://ledgerXapps.test:8443/x',
            'https://ledger.apps.test:8443',
        ]) {
            expect(pattern.test(elsewhere), elsewhere).to.be.false();
        }
    });

    it('shows the values to copy into the app, the secret only when it is opened', () => {
        const shown = oidc.values(settings());
        expect(shown).to.include({ clientId: 'client-id-1', clientSecret: 'client-secret-1' });
        expect(shown.redirectUri).to.contain('https://ledger.apps.test:8443/');
        const opened = settings();
        if (!opened.oidc) throw new Error('the settings have a client');
        const { clientSecret: _secret, ...closed } = opened.oidc;
        expect(oidc.values({ ...opened, oidc: closed }).clientSecret).to.not.exist();
        expect(oidc.values({ app: 'x', domain: 'x.apps.test', origin: 'https://x.apps.test' })).to.equal({});
    });

    it("checks the issuer's discovery document: published and naming the issuer, or says what is wrong", async () => {
        discovery = { status: 200, body: { issuer: settings().oidc?.endpoints.issuer } };
        expect(await oidc.check?.({ ...methodCheckHelpers, settings: settings(), host, https: true, site: '' })).to.include({
            ok: true,
            fix: null,
        });

        discovery = { status: 200, body: { issuer: 'https://someone.else/' } };
        const other = await oidc.check?.({ ...methodCheckHelpers, settings: settings(), host, https: true, site: '' });
        expect(other?.ok).to.be.false();
        expect(other?.text).to.equal(
            `the discovery document names the issuer https://someone.else/, not ${settings().oidc?.endpoints.issuer}`,
        );

        discovery = { status: 404, body: {} };
        const missing = await oidc.check?.({ ...methodCheckHelpers, settings: settings(), host, https: true, site: '' });
        expect(missing?.text).to.equal(`the discovery document ${settings().oidc?.endpoints.configUrl} answered 404`);

        const unconnected = await oidc.check?.({
            ...methodCheckHelpers,
            settings: { app: 'x', domain: 'x.apps.test', origin: 'https://x.apps.test' },
            host,
            https: true,
            site: '',
        });
        expect(unconnected).to.include({ ok: false, text: 'no identity provider is connected, so there is no issuer' });
    });
});
