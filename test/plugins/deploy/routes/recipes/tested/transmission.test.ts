// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../../helpers/browser.ts';
import { TRANSMISSION, TRANSMISSION_ACCOUNT } from '../../../../../support/debian-apps.ts';
import { debianImage } from '../../../../../support/debian-images.ts';
import { type SignInScene, signInScene } from '../../../../../support/sign-in-scene.ts';
import { runToEnd } from '../../../../../support/sse.ts';
import { type TestedRecipe, recipeForTestImage } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/transmission.yaml';
const BASE_DOMAIN = 'torrents.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `torrents-${Math.random().toString(36).slice(2, 8)}`;

describe('the Transmission recipe (HTTP Basic), tested on Debian’s transmission-daemon', { timeout: 900_000 }, () => {
    let scene: SignInScene;
    let admin: Browser;
    let httpsPort: number;
    let recipe: TestedRecipe;
    let hostPort: number;

    const url = (path = '/') => `https://${APP}.${BASE_DOMAIN}:${httpsPort}${path}`;

    before({ timeout: 900_000 }, async () => {
        const image = debianImage(TRANSMISSION);
        recipe = recipeForTestImage(RECIPE_FILE, TRANSMISSION.name);
        scene = await signInScene(BASE_DOMAIN, { RECIPES_DIRS: recipe.folder });
        ({ admin, httpsPort } = scene);
        const downloaders = scene.authentik.addGroup('downloaders');
        scene.authentik.addUser({ username: 'seeder', password: 'seeder-password', email: 'seeder@example.com', groups: ['downloaders'] });
        scene.authentik.addUser({ username: 'outsider', password: 'outsider-password', email: 'outsider@example.com' });
        hostPort = await scene.createApp(APP, image);
        const compose = [
            'services:',
            '  transmission:',
            `    image: ${image}`,
            '    ports:',
            `      - "127.0.0.1:${hostPort}:9091"`,
            '',
        ].join('\n');
        const saved = await admin.put(`/api/apps/${APP}/draft`, {
            compose,
            account: 'recipe',
            sharedUser: TRANSMISSION_ACCOUNT.username,
            sharedPassword: TRANSMISSION_ACCOUNT.password,
        });
        expect(saved.status, saved.text).to.equal(200);
        expect((await admin.put(`/api/apps/${APP}/access`, { groups: [{ pk: downloaders, name: 'downloaders' }] })).status).to.equal(200);
    });

    after(async () => {
        await scene?.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        expect(recipe.shipped).to.include({ method: 'basic', level: 'tested' });
        const listed = (await admin.get('/api/recipes')).body as { recipes: Array<{ id: string; level: string }> };
        expect(listed.recipes.find((candidate) => candidate.id === 'transmission')?.level).to.equal('tested');
        expect(recipe.shipped.tested).to.equal({
            packaging: 'Debian 12 package transmission-daemon 3.00-2.1+deb12u1',
            test: 'test/plugins/deploy/routes/recipes/tested/transmission.test.ts',
        });
    });

    it('deploys with the recipe’s method, checked against the app with the shared account', async () => {
        const shown = (await admin.get(`/api/apps/${APP}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
        expect(shown.app.identity.recipe.id).to.equal(recipe.id);
        expect(shown.app.identity.method).to.equal('basic');
        const deployed = await runToEnd(admin, await admin.post(`/api/apps/${APP}/deploy`, {}));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        expect(deployed.lines.find((line) => line.step === 'sign-in-method')?.text).to.contain(
            `the app accepts the shared account ${TRANSMISSION_ACCOUNT.username} sent as HTTP Basic`,
        );
    });

    it('a member of the chosen group reaches Transmission’s web interface and its RPC with no login of its own', async () => {
        const visitor = new Visitor(BASE_DOMAIN);
        expect(last(await signInThroughProvider(visitor, url('/transmission/web/'), 'seeder', 'seeder-password')).status).to.be.below(500);
        const page = await visitor.request('GET', url('/transmission/web/'));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain('Transmission Web Interface');
        // Past Basic, Transmission's RPC asks only for its session id (409); without the account it would be 401.
        const rpc = await visitor.request('POST', url('/transmission/rpc'), { method: 'session-get' });
        expect(rpc.status).to.equal(409);
        expect(rpc.body).to.contain('X-Transmission-Session-Id');
    });

    it('someone outside the group is kept out, and the app alone still asks for its account', async () => {
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, url('/transmission/web/'), 'outsider', 'outsider-password');
        expect(last(hops).body).to.not.contain('Transmission Web Interface');
        const direct = await fetch(`http://127.0.0.1:${hostPort}/transmission/web/`);
        expect(direct.status).to.equal(401);
    });
});
