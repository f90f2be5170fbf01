// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { NETDATA } from '../../../../../support/debian-apps.ts';
import { deployThroughRecipe, expectShippedAsTested, type TestedRecipeApp, testedRecipeApp } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/netdata.yaml';
const BASE_DOMAIN = 'metrics.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `metrics-${Math.random().toString(36).slice(2, 8)}`;
const DASHBOARD = '<title>netdata dashboard';

describe('the Netdata recipe (no login of its own), tested on Debian’s netdata', { timeout: 900_000 }, () => {
    let tested: TestedRecipeApp;

    before({ timeout: 900_000 }, async () => {
        tested = await testedRecipeApp({
            recipeFile: RECIPE_FILE,
            image: NETDATA,
            baseDomain: BASE_DOMAIN,
            app: APP,
            service: 'netdata',
            port: 19999,
            group: 'sre',
            users: [
                { username: 'oncall', password: 'oncall-password', email: 'oncall@example.com', member: true },
                { username: 'guest', password: 'guest-password', email: 'guest@example.com', member: false },
            ],
        });
    });

    after(async () => {
        await tested?.scene.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        await expectShippedAsTested(tested, {
            id: 'netdata',
            method: 'none',
            packaging: 'Debian 12 packages netdata-core and netdata-web 1.37.1-2',
            test: 'test/plugins/deploy/routes/recipes/tested/netdata.test.ts',
            outcome: 'no-login-after-provider',
        });
    });

    it('deploys with the recipe’s method, checked to answer without a login of its own', async () => {
        expect(await deployThroughRecipe(tested, APP, 'none')).to.contain('without its own login');
    });

    it('a member of the chosen group sees the dashboard and its API past the provider', async () => {
        await deployThroughRecipe(tested, APP, 'none');
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, tested.url('/'), 'oncall', 'oncall-password')).status).to.be.below(500);
        const page = await visitor.request('GET', tested.url('/'));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain(DASHBOARD);
        const info = await visitor.request('GET', tested.url('/api/v1/info'));
        expect(info.status).to.equal(200);
        expect((JSON.parse(info.body) as { version: string }).version).to.equal('v1.37.1');
    });

    it('someone outside the group, or no one signed in, never reaches it', async () => {
        await deployThroughRecipe(tested, APP, 'none');
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, tested.url('/'), 'guest', 'guest-password');
        expect(last(hops).body).to.not.contain(DASHBOARD);
        const anonymous = await new Visitor(BASE_DOMAIN).request('GET', tested.url('/api/v1/info'));
        expect(anonymous.status).to.not.equal(200);
        expect(anonymous.body).to.not.contain('v1.37.1');
    });
});
