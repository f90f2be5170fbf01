// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { TRANSMISSION, TRANSMISSION_ACCOUNT } from '../../../../../support/debian-apps.ts';
import { deployThroughRecipe, expectShippedAsTested, type TestedRecipeApp, testedRecipeApp } from '../../../../../support/tested-recipe.ts';
import { lastHop as last, signInThroughProvider, Visitor } from '../../../../../support/visitor.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECIPE_FILE = 'recipes/transmission.yaml';
const BASE_DOMAIN = 'torrents.test';
// Unique among the files that run at once on the one Docker engine.
const APP = `torrents-${Math.random().toString(36).slice(2, 8)}`;

describe('the Transmission recipe (HTTP Basic), tested on Debian’s transmission-daemon', { timeout: 900_000 }, () => {
    let tested: TestedRecipeApp;

    before({ timeout: 900_000 }, async () => {
        tested = await testedRecipeApp({
            recipeFile: RECIPE_FILE,
            image: TRANSMISSION,
            baseDomain: BASE_DOMAIN,
            app: APP,
            service: 'transmission',
            port: 9091,
            group: 'downloaders',
            users: [
                { username: 'seeder', password: 'seeder-password', email: 'seeder@example.com', member: true },
                { username: 'outsider', password: 'outsider-password', email: 'outsider@example.com', member: false },
            ],
            draft: { sharedUser: TRANSMISSION_ACCOUNT.username, sharedPassword: TRANSMISSION_ACCOUNT.password },
        });
    });

    after(async () => {
        await tested?.scene.close([APP]);
    });

    it('ships as tested, naming the packaging and this test', async () => {
        await expectShippedAsTested(tested, {
            id: 'transmission',
            method: 'basic',
            packaging: 'Debian 12 package transmission-daemon 3.00-2.1+deb12u1',
            test: 'test/plugins/deploy/routes/recipes/tested/transmission.test.ts',
        });
    });

    it('deploys with the recipe’s method, checked against the app with the shared account', async () => {
        expect(await deployThroughRecipe(tested, APP, 'basic')).to.contain(
            `the app accepts the shared account ${TRANSMISSION_ACCOUNT.username} sent as HTTP Basic`,
        );
    });

    it('a member of the chosen group reaches Transmission’s web interface and its RPC with no login of its own', async () => {
        await deployThroughRecipe(tested, APP, 'basic');
        const visitor = new Visitor(BASE_DOMAIN);
        expect(
            last(await signInThroughProvider(visitor, tested.url('/transmission/web/'), 'seeder', 'seeder-password')).status,
        ).to.be.below(500);
        const page = await visitor.request('GET', tested.url('/transmission/web/'));
        expect(page.status).to.equal(200);
        expect(page.body).to.contain('Transmission Web Interface');
        // Past Basic, Transmission's RPC asks only for its session id (409); without the account it would be 401.
        const rpc = await visitor.request('POST', tested.url('/transmission/rpc'), { method: 'session-get' });
        expect(rpc.status).to.equal(409);
        expect(rpc.body).to.contain('X-Transmission-Session-Id');
    });

    it('someone outside the group is kept out, and the app alone still asks for its account', async () => {
        await deployThroughRecipe(tested, APP, 'basic');
        const outsider = new Visitor(BASE_DOMAIN);
        const hops = await signInThroughProvider(outsider, tested.url('/transmission/web/'), 'outsider', 'outsider-password');
        expect(last(hops).body).to.not.contain('Transmission Web Interface');
        const direct = await fetch(`http://127.0.0.1:${tested.hostPort}/transmission/web/`);
        expect(direct.status).to.equal(401);
    });
});
