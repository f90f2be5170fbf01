/**
 * A shipped recipe as a test applies it to an app built from Debian's package: the recipe file's own fields (method,
 * env, steps, login...) for the test's image instead of the images users run, in a folder of its own for
 * RECIPES_DIRS. The test file names the shipped file (`recipes/<id>.yaml`), which is what keeps the recipe `tested`.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import YAML from 'yaml';

import { ROOT_DIR } from '../../lib/paths.ts';
import { temporaryDirectory } from '../helpers/server.ts';
import { type DebianImageSpec, debianImage } from './debian-images.ts';
import { type SignInScene, signInScene } from './sign-in-scene.ts';
import { runToEnd } from './sse.ts';

const { expect } = Code;

export interface TestedRecipe {
    /** The copy's id (`<id>-debian`), as the app's identity names its recipe. */
    id: string;
    /** The folder holding the copy, for RECIPES_DIRS. */
    folder: string;
    /** The shipped recipe's fields, as read from its file. */
    shipped: Record<string, unknown>;
}

/** `recipeFile`: `recipes/<id>.yaml`; `image`: the test image's repository (no tag). */
export function recipeForTestImage(recipeFile: string, image: string): TestedRecipe {
    const shipped = YAML.parse(Fs.readFileSync(Path.join(ROOT_DIR, recipeFile), 'utf8')) as Record<string, unknown>;
    // The catalog's template and the images users run are the shipped recipe's; what it sets up is kept as it is.
    const { aliases: _aliases, compose: _compose, tag: _tag, category: _category, tested: _tested, ...setUp } = shipped;
    const id = `${Path.basename(recipeFile, '.yaml')}-debian`;
    const folder = temporaryDirectory('gatehouse-tested-recipe-');
    Fs.writeFileSync(Path.join(folder, `${id}.yaml`), YAML.stringify({ ...setUp, image, level: 'tested' }));
    return { id, folder, shipped };
}

export interface TestedRecipeApp {
    scene: SignInScene;
    recipe: TestedRecipe;
    /** The app's port on 127.0.0.1, its own login still in front of it. */
    hostPort: number;
    /** An address on the app's domain, behind nginx and forward auth. */
    url(path?: string): string;
}

export interface TestedRecipeSetup {
    recipeFile: string;
    image: DebianImageSpec;
    baseDomain: string;
    app: string;
    /** The compose service and the container port the app serves on. */
    service: string;
    port: number;
    /** The provider's group the app lets through, and users in it (`member`) or not. */
    group: string;
    users: Array<{ username: string; password: string; email: string; member: boolean }>;
    /** What the draft takes besides its compose file and `account: recipe` (a shared account, the admin). */
    draft?: Record<string, unknown>;
}

/**
 * What every tested recipe's test starts from: the Debian image built, the shipped recipe applied to it, a scene
 * with the provider's group and users, and the app drafted with the recipe as its account and the group's access.
 */
export async function testedRecipeApp(setup: TestedRecipeSetup): Promise<TestedRecipeApp> {
    const image = debianImage(setup.image);
    const recipe = recipeForTestImage(setup.recipeFile, setup.image.name);
    const scene = await signInScene(setup.baseDomain, { RECIPES_DIRS: recipe.folder });
    const group = scene.authentik.addGroup(setup.group);
    for (const { member, ...user } of setup.users) {
        scene.authentik.addUser({ ...user, ...(member ? { groups: [setup.group] } : {}) });
    }

    const hostPort = await scene.createApp(setup.app, image);
    const compose = [
        'services:',
        `  ${setup.service}:`,
        `    image: ${image}`,
        '    ports:',
        `      - "127.0.0.1:${hostPort}:${setup.port}"`,
        '',
    ];
    const saved = await scene.admin.put(`/api/apps/${setup.app}/draft`, { compose: compose.join('\n'), account: 'recipe', ...setup.draft });
    expect(saved.status, saved.text).to.equal(200);
    const access = await scene.admin.put(`/api/apps/${setup.app}/access`, { groups: [{ pk: group, name: setup.group }] });
    expect(access.status, access.text).to.equal(200);
    return { scene, recipe, hostPort, url: (path = '/') => `https://${setup.app}.${setup.baseDomain}:${scene.httpsPort}${path}` };
}

/** The shipped recipe says it is tested, names the packaging and the test file, and the API lists it as tested. */
export async function expectShippedAsTested(
    tested: TestedRecipeApp,
    expected: { id: string; method: string; packaging: string; test: string; outcome?: string },
): Promise<void> {
    expect(tested.recipe.shipped).to.include({
        method: expected.method,
        level: 'tested',
        ...(expected.outcome ? { outcome: expected.outcome } : {}),
    });
    expect(tested.recipe.shipped.tested).to.equal({ packaging: expected.packaging, test: expected.test });
    const listed = (await tested.scene.admin.get('/api/recipes')).body as { recipes: Array<{ id: string; level: string }> };
    expect(listed.recipes.find((candidate) => candidate.id === expected.id)?.level).to.equal('tested');
}

const deploys = new WeakMap<TestedRecipeApp, Map<string, Promise<string>>>();

/**
 * Deploys the app with the recipe's method, which the app's identity names; answers the run's check of the sign-in.
 * Once: the first call deploys, whichever test makes it, and later calls answer the same (each test that needs the
 * app deployed calls it, so that the tests pass in any order and alone).
 */
export async function deployThroughRecipe(tested: TestedRecipeApp, app: string, method: string): Promise<string> {
    const ofTested = deploys.get(tested) ?? new Map<string, Promise<string>>();
    deploys.set(tested, ofTested);
    const deploy = ofTested.get(app) ?? deployOnce(tested, app, method);
    ofTested.set(app, deploy);
    return await deploy;
}

async function deployOnce(tested: TestedRecipeApp, app: string, method: string): Promise<string> {
    const { admin } = tested.scene;
    const shown = (await admin.get(`/api/apps/${app}`)).body as { app: { identity: { method: string; recipe: { id: string } } } };
    expect(shown.app.identity.recipe.id).to.equal(tested.recipe.id);
    expect(shown.app.identity.method).to.equal(method);
    const deployed = await runToEnd(admin, await admin.post(`/api/apps/${app}/deploy`, {}));
    expect(deployed.state, deployed.text).to.equal('succeeded');
    return deployed.lines.find((line) => line.step === 'sign-in-method')?.text ?? '';
}
