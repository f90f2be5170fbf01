// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../../helpers/browser.ts';
import { NAGIOS4, NAGIOS_ADMIN } from '../../../../../support/debian-apps.ts';
import { debianImage } from '../../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../../support/sse.ts';
import { type TestedRecipe, recipeForTestImage } from '../../../../../support/tested-recipe.ts';
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
    let scene: SignInScene;
    let admin: Browser;
    let httpsPort: number;
    let recipe: TestedRecipe;
    let hostPort: number;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    before({ timeout: 900_000 }, async () => {
        const image = debianImage(NAGIOS4);
        recipe = recipeForTestImage(RECIPE_FILE, NAGIOS4.name);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipe.folder });
        ({ admin, httpsPort } = scene);
        const watchers = scene.authentik.addGroup('watchers');
        scene.authentik.addUser({ username: 'watcher', password: 'watcher-password', email: 'watcher@example.com', groups: ['watchers'] });
        scene.authentik.addUser({ username: 'outsider', password: 'outsider-password', email: 'outsider@example.com' });
        hostPort = await scene.createApp(APP, image);
        const compose = ['services:', '  nagios:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${hostPort}:80"`, ''].join(
            '\n',
        );
        const saved = await admin.put(`/api/apps/${APP}/draft`, {
            compose,
            account: 'recipe',
            sharedUser: NAGIOS_ADMIN.username,
            sharedPassword: NAGIOS_ADMIN.password,
        });
        expect(saved.status, saved.text).to.equal(200);
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: [{ pk: watchers, name: 'watchers' }] })).status).to.equal(200);
    });

    after(async () => {
        await scene?.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        expect(recipe.shipped).to.include({ method: 'basic', level: 'tested' });
        const listed = (await admin.get('/api/recipes')).body as { recipes: Array<{ id: string; level: string }> };
        expect(listed.recipes.find((candidate) => candidate.id === 'nagios')?.level).to.equal('tested');
        expect(recipe.shipped.tested).to.equal({
            packaging: 'Debian 12 package nagios4 4.4.6-4+deb12u2 under Apache',
            test: 'test/plugins/deploy/routes/recipes/tested/nagios.test.ts',
        });
    });

    it('deploys with the recipe’s method, checked against the app with the shared account', async () => {
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
        expect(shown.app.identity.recipe.id).to.equal(recipe.id);
        expect(shown.app.identity.method).to.equal('basic');
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        expect(deployed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain(
            `the app accepts the shared account ${NAGIOS_ADMIN.username} sent as HTTP Basic`,
        );
    });

    it('a member of the chosen group is the shared account in Nagios’s CGIs, with no login of its own', async () => {
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, url(TACTICAL_OVERVIEW), 'watcher', 'watcher-password')).status).to.be.below(500);
        const page = await visitor.request('GET', url(TACTICAL_OVERVIEW));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain(SIGNED_IN);
    });

    it('someone outside the group is kept out, and the app alone still asks for its account', async () => {
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, url(TACTICAL_OVERVIEW), 'outsider', 'outsider-password');
        expect(last(hops).body).to.not.contain(SIGNED_IN);
        const direct = await fetch(`http://127.0.0.1:${hostPort}${TACTICAL_OVERVIEW}`);
        expect(direct.status).to.equal(401);
    });
});
