import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import own from '../../../../plugins/sso/methods/own.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe("sign-in method own: the app's own login, behind the provider", () => {
    it('changes neither the site nor the app, shows nothing, needs nothing and is not single sign-on', () => {
        expect(own.site).to.not.exist();
        expect(own.atProvider).to.not.exist();
        expect(own.check).to.not.exist();
        expect(own.values({ app: 'vault', domain: 'vault.apps.test', origin: 'https://vault.apps.test' })).to.equal({});
        expect(own.needs).to.equal([]);
        expect(own.singleSignOn).to.be.false();
    });
});
