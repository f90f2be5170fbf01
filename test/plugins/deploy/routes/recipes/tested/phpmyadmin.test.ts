// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../../helpers/browser.ts';
import { PHPMYADMIN, PHPMYADMIN_DATABASE_ACCOUNT } from '../../../../../support/debian-apps.ts';
import { debianImage } from '../../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../../support/sse.ts';
import { type TestedRecipe, recipeForTestImage } from '../../../../../support/tested-recipe.ts';
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
    let scene: SignInScene;
    let admin: Browser;
    let httpsPort: number;
    let recipe: TestedRecipe;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    before({ timeout: 900_000 }, async () => {
        const image = debianImage(PHPMYADMIN);
        recipe = recipeForTestImage(RECIPE_FILE, PHPMYADMIN.name);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipe.folder });
        ({ admin, httpsPort } = scene);
        const dbas = scene.authentik.addGroup('dbas');
        scene.authentik.addUser({ username: 'dba', password: 'dba-password', email: 'dba@example.com', groups: ['dbas'] });
        scene.authentik.addUser({ username: 'intern', password: 'intern-password', email: 'intern@example.com' });
        const port = await scene.createApp(APP, image);
        const compose = ['services:', '  phpmyadmin:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join(
            '\n',
        );
        const saved = await admin.put(`/api/apps/${APP}/draft`, { compose, account: 'recipe' });
        expect(saved.status, saved.text).to.equal(200);
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: [{ pk: dbas, name: 'dbas' }] })).status).to.equal(200);
    });

    after(async () => {
        await scene?.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        expect(recipe.shipped).to.include({ method: 'none', level: 'tested', outcome: 'no-login-after-provider' });
        expect(recipe.shipped.tested).to.equal({
            packaging: 'Debian 12 package phpmyadmin 4:5.2.1+dfsg-1+deb12u1 with MariaDB 10.11',
            test: 'test/plugins/deploy/routes/recipes/tested/phpmyadmin.test.ts',
        });
        const listed = (await admin.get('/api/recipes')).body as { recipes: Array<{ id: string; level: string }> };
        expect(listed.recipes.find((candidate) => candidate.id === 'phpmyadmin')?.level).to.equal('tested');
    });

    it('deploys with the recipe’s method, checked to answer without a login of its own', async () => {
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
        expect(shown.app.identity.recipe.id).to.equal(recipe.id);
        expect(shown.app.identity.method).to.equal('none');
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        expect(deployed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain('without its own login');
    });

    it('a member of the chosen group lands in phpMyAdmin with its database account, without a login form', async () => {
        const visitor = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(visitor, url('/'), 'dba', 'dba-password');
        expect(last(hops).status).to.be.below(500);
        const page = await visitor.request('GET', url('/'));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain(SIGNED_IN);
        expect(page.body).to.not.contain('name="pma_password"');
    });

    it('someone outside the group never reaches it', async () => {
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, url('/'), 'intern', 'intern-password');
        expect(last(hops).body).to.not.contain(SIGNED_IN);
        expect((await outsider.request('GET', url('/'))).body).to.not.contain(SIGNED_IN);
    });
});
