// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { DOKUWIKI_AT_ROOT } from '../../../../../support/debian-apps.ts';
import { DOKUWIKI_ADMIN } from '../../../../../support/debian-images.ts';
import { deployThroughRecipe, expectShippedAsTested, type TestedRecipeApp, testedRecipeApp } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/dokuwiki.yaml';
const BASE_DOMAIN = 'wiki-recipe.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `handbook-${Math.random().toString(36).slice(2, 8)}`;
/** What DokuWiki shows a signed-in user, and only one. */
const SIGNED_IN = `Logged in as: <bdi>${DOKUWIKI_ADMIN.name}</bdi>`;

describe('the DokuWiki recipe (auto-login with a form), tested on Debian’s dokuwiki', { timeout: 900_000 }, () => {
    let tested: TestedRecipeApp;

    before({ timeout: 900_000 }, async () => {
        tested = await testedRecipeApp({
            recipeFile: RECIPE_FILE,
            image: DOKUWIKI_AT_ROOT,
            baseDomain: BASE_DOMAIN,
            app: APP,
            service: 'dokuwiki',
            port: 80,
            group: 'wiki-editors',
            users: [{ username: 'writer', password: 'writer-password', email: 'writer@example.com', member: true }],
            draft: { sharedUser: DOKUWIKI_ADMIN.username, sharedPassword: DOKUWIKI_ADMIN.password },
        });
    });

    after(async () => {
        await tested?.scene.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        await expectShippedAsTested(tested, {
            id: 'dokuwiki',
            method: 'autologin',
            packaging: 'Debian 12 package dokuwiki 0.0.20220731.a-2',
            test: 'test/plugins/deploy/routes/recipes/tested/dokuwiki.test.ts',
        });
    });

    it('deploys with the recipe’s adapter and login page, checked by signing in as the shared account', async () => {
        expect(await deployThroughRecipe(tested, APP, 'autologin')).to.contain(
            `the auto-login signs in to the app as ${DOKUWIKI_ADMIN.username}`,
        );
    });

    it('a member of the chosen group is handed DokuWiki’s session after the provider’s sign-in', async () => {
        await deployThroughRecipe(tested, APP, 'autologin');
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, tested.url('/__svc/autologin'), 'writer', 'writer-password');
        expect(last(hops).status, JSON.stringify(hops.map((hop) => [hop.status, hop.url]))).to.equal(200);
        expect(last(hops).body).to.contain(SIGNED_IN);
        const page = await visitor.request('GET', tested.url('/doku.php?id=start'));
        expect(page.body).to.contain(SIGNED_IN);
    });
});
