// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { NAGIOS_ADMIN, NAGIOS4 } from '../../../../../support/debian-apps.ts';
import { deployThroughRecipe, expectShippedAsTested, type TestedRecipeApp, testedRecipeApp } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/nagios.yaml';
const BASE_DOMAIN = 'nagios.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `watch-${Math.random().toString(36).slice(2, 8)}`;
const TACTICAL_OVERVIEW = '/nagios4/cgi-bin/tac.cgi';
/** What Nagios's CGIs say of the user the web server's login named. */
const SIGNED_IN = `Logged in as <i>${NAGIOS_ADMIN.username}</i>`;

describe('the Nagios recipe (HTTP Basic), tested on Debian’s nagios4', { timeout: 900_000 }, () => {
    let tested: TestedRecipeApp;

    before({ timeout: 900_000 }, async () => {
        tested = await testedRecipeApp({
            recipeFile: RECIPE_FILE,
            image: NAGIOS4,
            baseDomain: BASE_DOMAIN,
            app: APP,
            service: 'nagios',
            port: 80,
            group: 'watchers',
            users: [
                { username: 'watcher', password: 'watcher-password', email: 'watcher@example.com', member: true },
                { username: 'outsider', password: 'outsider-password', email: 'outsider@example.com', member: false },
            ],
            draft: { sharedUser: NAGIOS_ADMIN.username, sharedPassword: NAGIOS_ADMIN.password },
        });
    });

    after(async () => {
        await tested?.scene.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        await expectShippedAsTested(tested, {
            id: 'nagios',
            method: 'basic',
            packaging: 'Debian 12 package nagios4 4.4.6-4+deb12u2 under Apache',
            test: 'test/plugins/deploy/routes/recipes/tested/nagios.test.ts',
        });
    });

    it('deploys with the recipe’s method, checked against the app with the shared account', async () => {
        expect(await deployThroughRecipe(tested, APP, 'basic')).to.contain(
            `the app accepts the shared account ${NAGIOS_ADMIN.username} sent as HTTP Basic`,
        );
    });

    it('a member of the chosen group is the shared account in Nagios’s CGIs, with no login of its own', async () => {
        await deployThroughRecipe(tested, APP, 'basic');
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, tested.url(TACTICAL_OVERVIEW), 'watcher', 'watcher-password')).status).to.be.below(
            500,
        );
        const page = await visitor.request('GET', tested.url(TACTICAL_OVERVIEW));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain(SIGNED_IN);
    });

    it('someone outside the group is kept out, and the app alone still asks for its account', async () => {
        await deployThroughRecipe(tested, APP, 'basic');
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, tested.url(TACTICAL_OVERVIEW), 'outsider', 'outsider-password');
        expect(last(hops).body).to.not.contain(SIGNED_IN);
        const direct = await fetch(`http://127.0.0.1:${tested.hostPort}${TACTICAL_OVERVIEW}`);
        expect(direct.status).to.equal(401);
    });
});
