// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { MEDIAWIKI, MEDIAWIKI_ADMIN } from '../../../../../support/debian-apps.ts';
import { deployThroughRecipe, expectShippedAsTested, type TestedRecipeApp, testedRecipeApp } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/mediawiki.yaml';
const BASE_DOMAIN = 'mediawiki-recipe.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `encyclopedia-${Math.random().toString(36).slice(2, 8)}`;
/** What MediaWiki's pages tell their scripts of a signed-in user (null for anyone else). */
const SIGNED_IN = `"wgUserName":"${MEDIAWIKI_ADMIN.username}"`;

describe('the MediaWiki recipe (auto-login with a form), tested on Debian’s mediawiki', { timeout: 900_000 }, () => {
    let tested: TestedRecipeApp;

    before({ timeout: 900_000 }, async () => {
        tested = await testedRecipeApp({
            recipeFile: RECIPE_FILE,
            image: MEDIAWIKI,
            baseDomain: BASE_DOMAIN,
            app: APP,
            service: 'mediawiki',
            port: 80,
            group: 'wiki-editors',
            users: [{ username: 'writer', password: 'writer-password', email: 'writer@example.com', member: true }],
            draft: { sharedUser: MEDIAWIKI_ADMIN.username, sharedPassword: MEDIAWIKI_ADMIN.password },
        });
    });

    after(async () => {
        await tested?.scene.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        await expectShippedAsTested(tested, {
            id: 'mediawiki',
            method: 'autologin',
            packaging: 'Debian 12 package mediawiki 1:1.39.17-1+deb12u2 on SQLite',
            test: 'test/plugins/deploy/routes/recipes/tested/mediawiki.test.ts',
        });
    });

    it('deploys with the recipe’s adapter and login page, checked by signing in as the shared account', async () => {
        expect(await deployThroughRecipe(tested, APP, 'autologin')).to.contain(
            `the auto-login signs in to the app as ${MEDIAWIKI_ADMIN.username}`,
        );
    });

    it('a member of the chosen group is handed MediaWiki’s session after the provider’s sign-in', async () => {
        await deployThroughRecipe(tested, APP, 'autologin');
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, tested.url('/__svc/autologin'), 'writer', 'writer-password');
        expect(last(hops).status, JSON.stringify(hops.map((hop) => [hop.status, hop.url]))).to.equal(200);
        expect(last(hops).body).to.contain(SIGNED_IN);
        const page = await visitor.request('GET', tested.url('/index.php/Main_Page'));
        expect(page.body).to.contain(SIGNED_IN);
    });
});
