// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../../helpers/browser.ts';
import { MEDIAWIKI, MEDIAWIKI_ADMIN } from '../../../../../support/debian-apps.ts';
import { debianImage } from '../../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../../support/sse.ts';
import { type TestedRecipe, recipeForTestImage } from '../../../../../support/tested-recipe.ts';
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
    let scene: SignInScene;
    let admin: Browser;
    let httpsPort: number;
    let recipe: TestedRecipe;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    before({ timeout: 900_000 }, async () => {
        const image = debianImage(MEDIAWIKI);
        recipe = recipeForTestImage(RECIPE_FILE, MEDIAWIKI.name);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipe.folder });
        ({ admin, httpsPort } = scene);
        const editors = scene.authentik.addGroup('wiki-editors');
        scene.authentik.addUser({ username: 'writer', password: 'writer-password', email: 'writer@example.com', groups: ['wiki-editors'] });
        const port = await scene.createApp(APP, image);
        const compose = ['services:', '  mediawiki:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join('\n');
        const saved = await admin.put(`/api/apps/${APP}/draft`, {
            compose,
            account: 'recipe',
            sharedUser: MEDIAWIKI_ADMIN.username,
            sharedPassword: MEDIAWIKI_ADMIN.password,
        });
        expect(saved.status, saved.text).to.equal(200);
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: [{ pk: editors, name: 'wiki-editors' }] })).status).to.equal(200);
    });

    after(async () => {
        await scene?.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        expect(recipe.shipped).to.include({ method: 'autologin', level: 'tested' });
        expect(recipe.shipped.tested).to.equal({
            packaging: 'Debian 12 package mediawiki 1:1.39.17-1+deb12u2 on SQLite',
            test: 'test/plugins/deploy/routes/recipes/tested/mediawiki.test.ts',
        });
        const listed = (await admin.get('/api/recipes')).body as { recipes: Array<{ id: string; level: string }> };
        expect(listed.recipes.find((candidate) => candidate.id === 'mediawiki')?.level).to.equal('tested');
    });

    it('deploys with the recipe’s adapter and login page, checked by signing in as the shared account', async () => {
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
        expect(shown.app.identity.recipe.id).to.equal(recipe.id);
        expect(shown.app.identity.method).to.equal('autologin');
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        expect(deployed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain(
            `the auto-login signs in to the app as ${MEDIAWIKI_ADMIN.username}`,
        );
    });

    it('a member of the chosen group is handed MediaWiki’s session after the provider’s sign-in', async () => {
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, url('/__svc/autologin'), 'writer', 'writer-password');
        expect(last(hops).status, JSON.stringify(hops.map((hop) => [hop.status, hop.url]))).to.equal(200);
        expect(last(hops).body).to.contain(SIGNED_IN);
        const page = await visitor.request('GET', url('/index.php/Main_Page'));
        expect(page.body).to.contain(SIGNED_IN);
    });
});
