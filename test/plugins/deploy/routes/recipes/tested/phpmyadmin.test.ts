// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { PHPMYADMIN, PHPMYADMIN_DATABASE_ACCOUNT } from '../../../../../support/debian-apps.ts';
import { deployThroughRecipe, expectShippedAsTested, type TestedRecipeApp, testedRecipeApp } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/phpmyadmin.yaml';
const BASE_DOMAIN = 'databases.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `dbadmin-${Math.random().toString(36).slice(2, 8)}`;
/** What phpMyAdmin's start page says of the database account it is signed in with. */
const SIGNED_IN = `${PHPMYADMIN_DATABASE_ACCOUNT.username}@localhost`;

describe('the phpMyAdmin recipe (its login off), tested on Debian’s phpmyadmin', { timeout: 900_000 }, () => {
    let tested: TestedRecipeApp;

    before({ timeout: 900_000 }, async () => {
        tested = await testedRecipeApp({
            recipeFile: RECIPE_FILE,
            image: PHPMYADMIN,
            baseDomain: BASE_DOMAIN,
            app: APP,
            service: 'phpmyadmin',
            port: 80,
            group: 'dbas',
            users: [
                { username: 'dba', password: 'dba-password', email: 'dba@example.com', member: true },
                { username: 'intern', password: 'intern-password', email: 'intern@example.com', member: false },
            ],
        });
    });

    after(async () => {
        await tested?.scene.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        await expectShippedAsTested(tested, {
            id: 'phpmyadmin',
            method: 'none',
            packaging: 'Debian 12 package phpmyadmin 4:5.2.1+dfsg-1+deb12u1 with MariaDB 10.11',
            test: 'test/plugins/deploy/routes/recipes/tested/phpmyadmin.test.ts',
            outcome: 'no-login-after-provider',
        });
    });

    it('deploys with the recipe’s method, checked to answer without a login of its own', async () => {
        expect(await deployThroughRecipe(tested, APP, 'none')).to.contain('without its own login');
    });

    it('a member of the chosen group lands in phpMyAdmin with its database account, without a login form', async () => {
        await deployThroughRecipe(tested, APP, 'none');
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, tested.url('/'), 'dba', 'dba-password');
        expect(last(hops).status).to.be.below(500);
        const page = await visitor.request('GET', tested.url('/'));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain(SIGNED_IN);
        expect(page.body).to.not.contain('name="pma_password"');
    });

    it('someone outside the group never reaches it', async () => {
        await deployThroughRecipe(tested, APP, 'none');
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, tested.url('/'), 'intern', 'intern-password');
        expect(last(hops).body).to.not.contain(SIGNED_IN);
        expect((await outsider.request('GET', tested.url('/'))).body).to.not.contain(SIGNED_IN);
    });
});
