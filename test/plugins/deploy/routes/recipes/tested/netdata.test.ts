// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../../helpers/browser.ts';
import { NETDATA } from '../../../../../support/debian-apps.ts';
import { debianImage } from '../../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../../support/sse.ts';
import { type TestedRecipe, recipeForTestImage } from '../../../../../support/tested-recipe.ts';
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
    let scene: SignInScene;
    let admin: Browser;
    let httpsPort: number;
    let recipe: TestedRecipe;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    before({ timeout: 900_000 }, async () => {
        const image = debianImage(NETDATA);
        recipe = recipeForTestImage(RECIPE_FILE, NETDATA.name);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipe.folder });
        ({ admin, httpsPort } = scene);
        const operators = scene.authentik.addGroup('sre');
        scene.authentik.addUser({ username: 'oncall', password: 'oncall-password', email: 'oncall@example.com', groups: ['sre'] });
        scene.authentik.addUser({ username: 'guest', password: 'guest-password', email: 'guest@example.com' });
        const port = await scene.createApp(APP, image);
        const compose = ['services:', '  netdata:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:19999"`, ''].join(
            '\n',
        );
        const saved = await admin.put(`/api/apps/${APP}/draft`, { compose, account: 'recipe' });
        expect(saved.status, saved.text).to.equal(200);
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: [{ pk: operators, name: 'sre' }] })).status).to.equal(200);
    });

    after(async () => {
        await scene?.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        expect(recipe.shipped).to.include({ method: 'none', level: 'tested', outcome: 'no-login-after-provider' });
        expect(recipe.shipped.tested).to.equal({
            packaging: 'Debian 12 packages netdata-core and netdata-web 1.37.1-2',
            test: 'test/plugins/deploy/routes/recipes/tested/netdata.test.ts',
        });
        const listed = (await admin.get('/api/recipes')).body as { recipes: Array<{ id: string; level: string }> };
        expect(listed.recipes.find((candidate) => candidate.id === 'netdata')?.level).to.equal('tested');
    });

    it('deploys with the recipe’s method, checked to answer without a login of its own', async () => {
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
        expect(shown.app.identity.recipe.id).to.equal(recipe.id);
        expect(shown.app.identity.method).to.equal('none');
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        expect(deployed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain('without its own login');
    });

    it('a member of the chosen group sees the dashboard and its API past the provider', async () => {
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, url('/'), 'oncall', 'oncall-password')).status).to.be.below(500);
        const page = await visitor.request('GET', url('/'));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain(DASHBOARD);
        const info = await visitor.request('GET', url('/api/v1/info'));
        expect(info.status).to.equal(200);
        expect((JSON.parse(info.body) as { version: string }).version).to.equal('v1.37.1');
    });

    it('someone outside the group, or no one signed in, never reaches it', async () => {
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, url('/'), 'guest', 'guest-password');
        expect(last(hops).body).to.not.contain(DASHBOARD);
        const anonymous = await new Visitor(BASE_DOMAIN).request('GET', url('/api/v1/info'));
        expect(anonymous.status).to.not.equal(200);
        expect(anonymous.body).to.not.contain('v1.37.1');
    });
});
