import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ValidationError } from '../../../../lib/errors.ts';
import { defaultSite, renderSite } from '../../../../plugins/deploy/domain/nginx/site-model.ts';
import type { MethodSettings, SiteSpec } from '../../../../plugins/sso/method-types.ts';
import saml from '../../../../plugins/sso/methods/saml.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const settings = (samlAcs: string): MethodSettings => ({
    app: 'archive',
    domain: 'archive.example.com',
    origin: 'https://archive.example.com',
    samlAcs,
});

function guardedSite(): SiteSpec {
    const site = defaultSite({ domain: 'archive.example.com', upstreamPort: 3000, forwardAuth: { outpostUrl: 'http://127.0.0.1:9000' } });
    site.locations.push({ path: '/api/', proxyPass: 'http://127.0.0.1:3001/api/', auth: true });
    return site;
}

function withAcs(samlAcs: string, site = guardedSite()): SiteSpec {
    if (!saml.site) {
        throw new Error('the SAML method adds no location');
    }

    return saml.site(site, settings(samlAcs));
}

describe('sign-in methods: SAML', () => {
    it('opens the ACS alone: an exact-match location, passed to the app as that path', () => {
        const site = withAcs('/mellon/postResponse');
        expect(site.locations.find((location) => !location.auth)).to.equal({
            path: '/mellon/postResponse',
            exact: true,
            proxyPass: 'http://127.0.0.1:3000/mellon/postResponse',
        });
        expect(site.locations.filter((location) => location.auth).map((location) => location.path)).to.equal(['/', '/api/']);
        const text = renderSite(site);
        expect(text).to.contain('location = /mellon/postResponse {');
        // Applied again, the method keeps one ACS location.
        expect(withAcs('/mellon/postResponse', site).locations).to.have.length(3);
    });

    it('refuses an ACS that opens / or a location of the app, or is not a plain path, whatever let it in', () => {
        for (const samlAcs of ['/', '/api', '/api/', '/a', '/saml/../api/', '/saml%2F..%2Fapi', '/saml acs']) {
            const error = expect(() => withAcs(samlAcs)).to.throw(ValidationError);
            expect(error.message, samlAcs).to.startWith('samlAcs: ');
        }
    });
});
