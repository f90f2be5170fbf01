import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import authentik from '../../../../plugins/idp/providers/authentik.ts';
import { type ForwardAuthApp, noForwardAuthChanges } from '../../../../plugins/idp/idp-types.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../../../support/authentik/index.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('identity provider: the authentik adapter', () => {
    let standIn: AuthentikStandIn;

    before(async () => {
        standIn = await startAuthentikStandIn();
    });

    after(async () => {
        await standIn?.close();
    });

    it('a group change that fails half-way puts the bindings back as they were', async () => {
        const provider = authentik.connect({ url: standIn.url, token: standIn.bootstrapToken });
        const discovery = await provider.discover();
        const defaults = authentik.defaults(discovery);
        const [first, second, third] = ['one', 'two', 'three'].map((name) => standIn.addGroup(`regroup-${name}`));
        const app: ForwardAuthApp = {
            objectName: 'dp-regroup',
            title: 'Regroup',
            externalHost: 'https://regroup.apps.test',
            launchUrl: 'https://regroup.apps.test/',
            authorizationFlow: defaults.authorizationFlow?.pk ?? '',
            invalidationFlow: defaults.invalidationFlow?.pk ?? '',
            outpost: defaults.outpost?.pk ?? '',
            groups: [first ?? '', second ?? ''],
        };
        await provider.ensureForwardAuthApp(app, (_key, work) => work(), noForwardAuthChanges(app.objectName));
        const bound = () => {
            const target = standIn.state.applications.find((application) => application.slug === app.objectName)?.pk;
            return standIn.state.bindings
                .filter((binding) => binding.target === target)
                .map((binding) => String(binding.group))
                .sort();
        };
        const before = bound();
        expect(before).to.equal([first, second].sort());

        // The binding of `second` is deleted first, then making the one of `third` is refused.
        standIn.failures.add({ method: 'POST', path: /^\/policies\/bindings\/$/ });
        await expect(provider.replaceGroups(app.objectName, [first ?? '', third ?? ''])).to.reject(/authentik answered 500/);
        expect(standIn.failures.pending).to.equal(0);
        expect(bound()).to.equal(before);

        // Refused before it changed anything: nothing to put back, and nothing removed.
        standIn.failures.add({ method: 'GET', path: /^\/policies\/bindings\/$/ });
        await expect(provider.replaceGroups(app.objectName, [third ?? ''])).to.reject(/authentik answered 500/);
        expect(bound()).to.equal(before);

        expect(await provider.replaceGroups(app.objectName, [third ?? ''])).to.equal([first, second]);
        expect(bound()).to.equal([third]);
        expect(standIn.violations).to.equal([]);
    });
});
