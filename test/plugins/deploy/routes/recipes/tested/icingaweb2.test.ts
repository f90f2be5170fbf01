// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ICINGAWEB2, ICINGAWEB2_ADMIN } from '../../../../../support/debian-apps.ts';
import { deployThroughRecipe, expectShippedAsTested, type TestedRecipeApp, testedRecipeApp } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/icingaweb2.yaml';
const BASE_DOMAIN = 'monitoring.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `monitor-${Math.random().toString(36).slice(2, 8)}`;
/** The link Icinga Web 2 shows only to a user allowed to configure it. */
const CONFIGURATION_LINK = 'href="/icingaweb2/config/general"';

describe('the Icinga Web 2 recipe (username from the proxy), tested on Debian’s icingaweb2', { timeout: 900_000 }, () => {
    let tested: TestedRecipeApp;

    const dashboardOf = async (username: string, password: string) => {
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, tested.url('/icingaweb2/dashboard'), username, password)).status).to.be.below(500);
        return await visitor.request('GET', tested.url('/icingaweb2/dashboard'));
    };

    before({ timeout: 900_000 }, async () => {
        tested = await testedRecipeApp({
            recipeFile: RECIPE_FILE,
            image: ICINGAWEB2,
            baseDomain: BASE_DOMAIN,
            app: APP,
            service: 'icingaweb2',
            port: 80,
            group: 'operators',
            users: [
                { username: ICINGAWEB2_ADMIN, password: 'ops-admin-password', email: 'ops@example.com', member: true },
                { username: 'night-shift', password: 'night-shift-password', email: 'night@example.com', member: true },
            ],
            draft: { adminUser: ICINGAWEB2_ADMIN },
        });
    });

    after(async () => {
        await tested?.scene.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        await expectShippedAsTested(tested, {
            id: 'icingaweb2',
            method: 'header',
            packaging: 'Debian 12 package icingaweb2 2.11.4-2+deb12u1 under Apache',
            test: 'test/plugins/deploy/routes/recipes/tested/icingaweb2.test.ts',
            outcome: 'admin-checked',
        });
    });

    it('deploys with the recipe’s method, its variables filled with the admin account', async () => {
        await deployThroughRecipe(tested, APP, 'header');
        const files = (await tested.scene.admin.get(`/api/apps/${APP}/files`)).body as { files: Array<{ kind: string; content: string }> };
        const compose = files.files.find((file) => file.kind === 'compose')?.content ?? '';
        expect(compose).to.contain(`icingaweb.roles.Administrators.users: "${ICINGAWEB2_ADMIN}"`);
    });

    it('each member of the group is signed in to Icinga Web 2 as themselves; only the admin account may configure it', async () => {
        await deployThroughRecipe(tested, APP, 'header');
        const asAdmin = await dashboardOf(ICINGAWEB2_ADMIN, 'ops-admin-password');
        expect(asAdmin.status).to.equal(200);
        expect(asAdmin.body).to.contain(ICINGAWEB2_ADMIN);
        expect(asAdmin.body).to.contain(CONFIGURATION_LINK);

        const asUser = await dashboardOf('night-shift', 'night-shift-password');
        expect(asUser.status).to.equal(200);
        expect(asUser.body).to.contain('night-shift');
        expect(asUser.body).to.not.contain(ICINGAWEB2_ADMIN);
        expect(asUser.body).to.not.contain(CONFIGURATION_LINK);
    });

    it('a visitor naming another user in Remote-User is still known as who signed in at the provider', async () => {
        await deployThroughRecipe(tested, APP, 'header');
        const visitor = new Visitor(BASE_DOMAIN);
        await signInThroughProvider(visitor, tested.url('/icingaweb2/dashboard'), 'night-shift', 'night-shift-password');
        const forged = await visitor.request('GET', tested.url('/icingaweb2/dashboard'), undefined, { 'Remote-User': ICINGAWEB2_ADMIN });
        expect(forged.body).to.contain('night-shift');
        expect(forged.body).to.not.contain(CONFIGURATION_LINK);
    });
});
