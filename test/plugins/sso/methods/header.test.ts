import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { HostConfig } from '../../../../lib/config.ts';
import { methodCheckHelpers } from '../../../../plugins/deploy/domain/engine/access-steps.ts';
import { defaultSite, renderSite } from '../../../../plugins/deploy/domain/nginx/site-model.ts';
import header, { HEADER_MAP } from '../../../../plugins/sso/methods/header.ts';
import type { MethodSettings } from '../../../../plugins/sso/method-types.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const SETTINGS: MethodSettings = { app: 'wiki', domain: 'wiki.apps.test', origin: 'https://wiki.apps.test' };
const host = {} as HostConfig;

describe('sign-in method header: the visitor known from headers nginx sets from the provider', () => {
    const forwardAuthSite = defaultSite({
        domain: SETTINGS.domain,
        upstreamPort: 8080,
        forwardAuth: { outpostUrl: 'http://127.0.0.1:9000' },
    });

    it('passes each identity header from the provider answer, on a site behind forward auth only', () => {
        const spec = header.site?.(forwardAuthSite, SETTINGS);
        expect(spec?.forwardAuth?.identityHeaders).to.include(HEADER_MAP);
        const text = renderSite(spec ?? forwardAuthSite);
        expect(text).to.contain('auth_request_set');
        expect(text).to.contain('Remote-User');
        const open = defaultSite({ domain: SETTINGS.domain, upstreamPort: 8080 });
        expect(header.site?.(open, SETTINGS)).to.shallow.equal(open);
    });

    it('shows the headers and the address to trust, the real one once it is known', () => {
        const headers = 'Remote-User, Remote-Email, Remote-Name, X-idp-username, X-idp-email, X-idp-name';
        expect(header.values(SETTINGS)).to.equal({
            headers,
            trustedAddress: "the gateway of the app's network, known once the app is deployed",
        });
        expect(header.values({ ...SETTINGS, gateway: '172.20.0.1' })).to.equal({
            headers,
            trustedAddress: "172.20.0.1 (the gateway of the app's network, where nginx's requests come from)",
        });
    });

    it('checks the site as written: a hand edit that drops a header fails the check, with the fix', async () => {
        const written = renderSite(header.site?.(forwardAuthSite, SETTINGS) ?? forwardAuthSite);
        expect(await header.check?.({ ...methodCheckHelpers, settings: SETTINGS, host, https: true, site: written })).to.include({
            ok: true,
            fix: null,
        });

        const edited = renderSite(forwardAuthSite);
        const failed = await header.check?.({ ...methodCheckHelpers, settings: SETTINGS, host, https: true, site: edited });
        expect(failed?.ok).to.be.false();
        expect(failed?.text).to.equal(`the site does not pass ${Object.keys(HEADER_MAP).join(', ')} from the provider's answer`);
        expect(failed?.fix).to.contain('apply the sign-in method again');
    });
});
