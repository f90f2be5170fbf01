// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../../helpers/browser.ts';
import { ICINGAWEB2, ICINGAWEB2_ADMIN } from '../../../../../support/debian-apps.ts';
import { debianImage } from '../../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../../support/sse.ts';
import { type TestedRecipe, recipeForTestImage } from '../../../../../support/tested-recipe.ts';
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
    let scene: SignInScene;
    let admin: Browser;
    let httpsPort: number;
    let recipe: TestedRecipe;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    const dashboardOf = async (username: string, password: string) => {
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, url('/icingaweb2/dashboard'), username, password)).status).to.be.below(500);
        return await visitor.request('GET', url('/icingaweb2/dashboard'));
    };

    before({ timeout: 900_000 }, async () => {
        const image = debianImage(ICINGAWEB2);
        recipe = recipeForTestImage(RECIPE_FILE, ICINGAWEB2.name);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipe.folder });
        ({ admin, httpsPort } = scene);
        const operators = scene.authentik.addGroup('operators');
        scene.authentik.addUser({
            username: ICINGAWEB2_ADMIN,
            password: 'ops-admin-password',
            email: 'ops@example.com',
            groups: ['operators'],
        });
        scene.authentik.addUser({
            username: 'night-shift',
            password: 'night-shift-password',
            email: 'night@example.com',
            groups: ['operators'],
        });
        const port = await scene.createApp(APP, image);
        const compose = ['services:', '  icingaweb2:', `    image: ${image}`, '    ports:', `      - "127.0.0.1:${port}:80"`, ''].join(
            '\n',
        );
        const saved = await admin.put(`/api/apps/${APP}/draft`, { compose, account: 'recipe', adminUser: ICINGAWEB2_ADMIN });
        expect(saved.status, saved.text).to.equal(200);
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: [{ pk: operators, name: 'operators' }] })).status).to.equal(200);
    });

    after(async () => {
        await scene?.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        expect(recipe.shipped).to.include({ method: 'header', level: 'tested', outcome: 'admin-checked' });
        expect(recipe.shipped.tested).to.equal({
            packaging: 'Debian 12 package icingaweb2 2.11.4-2+deb12u1 under Apache',
            test: 'test/plugins/deploy/routes/recipes/tested/icingaweb2.test.ts',
        });
        const listed = (await admin.get('/api/recipes')).body as { recipes: Array<{ id: string; level: string }> };
        expect(listed.recipes.find((candidate) => candidate.id === 'icingaweb2')?.level).to.equal('tested');
    });

    it('deploys with the recipe’s method, its variables filled with the admin account', async () => {
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
        expect(shown.app.identity.recipe.id).to.equal(recipe.id);
        expect(shown.app.identity.method).to.equal('header');
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        const files = (await admin.get(`/api/apps/${APP}/files`)).body as { files: Array<{ kind: string; content: string }> };
        const compose = files.files.find((file) => file.kind === 'compose')?.content ?? '';
        expect(compose).to.contain(`icingaweb.roles.Administrators.users: "${ICINGAWEB2_ADMIN}"`);
    });

    it('each member of the group is signed in to Icinga Web 2 as themselves; only the admin account may configure it', async () => {
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
        const visitor = new Visitor(BASE_DOMAIN);
        await signInThroughProvider(visitor, url('/icingaweb2/dashboard'), 'night-shift', 'night-shift-password');
        const forged = await visitor.request('GET', url('/icingaweb2/dashboard'), undefined, { 'Remote-User': ICINGAWEB2_ADMIN });
        expect(forged.body).to.contain('night-shift');
        expect(forged.body).to.not.contain(CONFIGURATION_LINK);
    });
});
