import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { HostConfig } from '../../../../lib/config.ts';
import { methodCheckHelpers } from '../../../../plugins/deploy/domain/engine/access-steps.ts';
import { defaultSite, renderSite } from '../../../../plugins/deploy/domain/nginx/site-model.ts';
import basic, { basicCredentials } from '../../../../plugins/sso/methods/basic.ts';
import type { MethodSettings } from '../../../../plugins/sso/method-types.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SETTINGS: MethodSettings = {
    app: 'ledger',
    domain: 'ledger.apps.test',
    origin: 'https://ledger.apps.test',
    sharedUser: 'clerk',
    sharedPassword: 'counting-house',
};
const FORWARD_AUTH = { outpostUrl: 'http://127.0.0.1:9000' };

describe('sign-in method basic: one shared account sent as HTTP Basic', () => {
    let app: Http.Server;
    let port: number;
    const asked: Array<string | undefined> = [];

    before(async () => {
        // The app's own Basic authentication: it knows only clerk with its password.
        app = Http.createServer((request, response) => {
            asked.push(request.headers.authorization);
            response.writeHead(request.headers.authorization === basicCredentials(SETTINGS) ? 200 : 401).end();
        });
        await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
        port = (app.address() as AddressInfo).port;
    });

    after(() => {
        app.close();
    });

    const host = {} as HostConfig;
    const siteFor = (upstreamPort: number) =>
        renderSite(
            basic.site?.(defaultSite({ domain: SETTINGS.domain, upstreamPort, forwardAuth: FORWARD_AUTH }), SETTINGS) ??
                defaultSite({ domain: SETTINGS.domain, upstreamPort }),
        );

    it('sets the account on every location the site proxies, and needs both its fields', () => {
        expect(basicCredentials(SETTINGS)).to.equal(`Basic ${Buffer.from('clerk:counting-house').toString('base64')}`);
        const spec = basic.site?.(defaultSite({ domain: SETTINGS.domain, upstreamPort: 8080, forwardAuth: FORWARD_AUTH }), SETTINGS);
        expect(spec?.locations.length ?? 0).to.be.above(0);
        for (const location of spec?.locations ?? []) {
            expect(location.headers?.Authorization).to.equal(basicCredentials(SETTINGS));
        }

        expect(siteFor(8080)).to.contain(`proxy_set_header Authorization "${basicCredentials(SETTINGS)}";`);
        expect(basic.needs).to.equal(['sharedUser', 'sharedPassword']);
        expect(basic.singleSignOn).to.be.true();
    });

    it('shows the shared user, never the password', () => {
        expect(basic.values(SETTINGS)).to.equal({ sharedUser: 'clerk' });
    });

    it('checks that the app accepts the account, and says so when it does not', async () => {
        const passed = await basic.check?.({ ...methodCheckHelpers, settings: SETTINGS, host, https: true, site: siteFor(port) });
        expect(passed).to.equal({ ok: true, text: 'the app accepts the shared account clerk sent as HTTP Basic', fix: null });
        expect(asked.at(-1)).to.equal(basicCredentials(SETTINGS));

        const wrong = { ...SETTINGS, sharedPassword: 'not-it' };
        const refused = await basic.check?.({ ...methodCheckHelpers, settings: wrong, host, https: true, site: siteFor(port) });
        expect(refused?.ok).to.be.false();
        expect(refused?.text).to.equal(`the app at http://127.0.0.1:${port} did not accept the shared account clerk (status 401)`);
        expect(refused?.fix).to.contain('Sign-in tab');
    });
});
