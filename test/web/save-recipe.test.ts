// needs: chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';
import YAML from 'yaml';

import type { Browser } from '../helpers/browser.ts';
import {
    checkAccessibility,
    type PageProblems,
    screenshot,
    type SignedInUser,
    startWebServer,
    watchPage,
    type WebServer,
} from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const APP = 'keeper';
const IMAGE = 'gatehouse-test/keeper';
const SECRET = 'keeper-secret-1';

/**
 * The app as it would run after a deploy, without Docker: its compose file on disk, its state running, and a
 * succeeded run whose sign-in check passed (what the API asks of an app before saving a recipe from it).
 */
async function seedWorkingApp(web: WebServer): Promise<{ domain: string }> {
    const admin = web.admin as Browser;
    const created = await admin.post('/api/apps', { name: APP, image: IMAGE, tag: '1' });
    expect(created.status, created.text).to.equal(201);
    const { domain } = (created.body as { app: { domain: string } }).app;
    const compose = [
        'services:',
        '  web:',
        `    image: ${IMAGE}:1`,
        '    environment:',
        `      KEEPER_HOST: ${domain}`,
        '      KEEPER_THEME: dark',
        '      KEEPER_PASSWORD: ${KEEPER_PASSWORD}',
        `      KEEPER_DSN: postgres://keeper:${SECRET}@db/keeper`,
        '',
    ].join('\n');
    const saved = await admin.put(`/api/apps/${APP}/draft`, {
        compose,
        secrets: { KEEPER_PASSWORD: SECRET },
        account: 'basic',
        sharedUser: 'reader',
    });
    expect(saved.status, saved.text).to.equal(200);
    const appDir = Path.join(web.server.app.config.apps.appsDir, APP);
    Fs.mkdirSync(appDir, { recursive: true });
    Fs.writeFileSync(Path.join(appDir, 'compose.yaml'), compose);

    const knex = web.context.database.knex;
    const now = Date.now();
    await knex('dp_apps').where({ name: APP }).update({ state: 'running' });
    const [runId] = await knex('dp_runs').insert({
        app_name: APP,
        kind: 'deploy',
        state: 'succeeded',
        started_at: now - 60_000,
        ended_at: now,
    });
    await knex('dp_run_events').insert({
        run_id: runId,
        seq: 1,
        step: 'sign-in',
        level: 'info',
        text: 'the app accepted the shared account reader',
        at: now - 1_000,
    });
    return { domain };
}

describe('web UI: a recipe saved from a working app, listed and exported', { timeout: 300_000 }, () => {
    let web: WebServer;
    let editor: SignedInUser;
    let page: Page;
    let problems: PageProblems;
    let recipeId = '';

    before({ timeout: 240_000 }, async () => {
        web = await startWebServer();
        await seedWorkingApp(web);
        editor = await web.signInAs('editor');
        page = editor.page;
        problems = watchPage(page);
    });

    after(async () => {
        await web?.stop();
    });

    /**
     * The recipe the first test saves through the form; a test that runs without it (alone, or before it) saves the
     * same one through the API.
     */
    const haveSavedRecipe = async () => {
        if (recipeId === '') {
            const saved = await editor.api.post(`/api/apps/${APP}/recipe`, {
                keys: ['KEEPER_HOST'],
                steps: ['Open the settings.', 'Turn on the proxy login.'],
                notes: 'Checked on keeper 1.',
            });
            expect(saved.status, saved.text).to.equal(201);
            recipeId = (saved.body as { recipe: { id: string } }).recipe.id;
        }
    };

    it('saves the ticked variable with placeholders and leaves the others out; a refused one is said in words', async () => {
        await page.goto(`${web.baseUrl}/apps/${APP}/account`);
        const form = page.locator('section.save-recipe');
        await form.getByRole('heading', { name: 'Save as a recipe' }).waitFor();
        await form.locator('[data-variable="KEEPER_HOST"] input').waitFor();
        expect(await form.locator('[data-variable="KEEPER_PASSWORD"] input').isDisabled()).to.equal(true);
        await form.locator('[data-variable="KEEPER_PASSWORD"]').getByText('a recipe keeps none').waitFor();

        // A literal secret is only found by the server: its answer is shown in words, without the API's field name.
        await form.getByLabel('KEEPER_DSN').check();
        await form.getByRole('button', { name: 'Save the recipe' }).click();
        const error = form.locator('.error-text[role="alert"]');
        await error.waitFor();
        const said = (await error.textContent()) ?? '';
        expect(said).to.contain('KEEPER_DSN holds a secret');
        expect(said).to.not.match(/^keys/i);
        await form.getByLabel('KEEPER_DSN').uncheck();

        await form.getByLabel('KEEPER_HOST').check();
        await form.getByLabel('Steps done by hand').fill('Open the settings.\n\nTurn on the proxy login.');
        await form.getByLabel('Notes').fill('Checked on keeper 1.');
        await form.getByRole('button', { name: 'Save the recipe' }).click();
        const id = form.locator('.saved-recipe-id');
        await id.waitFor();
        recipeId = (await id.textContent()) ?? '';
        expect(recipeId).to.match(/^saved-\d+$/);
        expect(await error.count()).to.equal(0);
        await form.locator('.saved-recipe .badge', { hasText: 'tested' }).waitFor();
        const variables = form.locator('.saved-recipe-variables li');
        await variables.first().waitFor();
        expect(await variables.allTextContents()).to.equal(['KEEPER_HOST = {{FQDN}}']);
        await checkAccessibility(page);
        await screenshot(page, 'save-recipe');
        expect(problems.list()).to.equal([]);
    });

    it('lists the saved recipe with its level and what backs it beside the shipped ones, and exports its file', async () => {
        await haveSavedRecipe();
        await page.goto(`${web.baseUrl}/apps/${APP}/account`);
        await page.getByRole('navigation').getByRole('link', { name: 'Recipes' }).click();
        await page.getByRole('heading', { name: 'Recipes', level: 1 }).waitFor();
        const row = page.locator(`tr[data-recipe="${recipeId}"]`);
        await row.waitFor();
        expect(await row.locator('td').first().textContent()).to.equal(IMAGE);
        expect(await row.locator('.recipe-level').textContent()).to.equal('tested');
        await row.getByText(`The sign-in check of the app ${APP}`).waitFor();
        const listed = (await editor.api.get('/api/recipes')).body as {
            recipes: Array<{ id: string; level: string; origin: { kind: string } }>;
        };
        const file = listed.recipes.find((recipe) => recipe.origin.kind === 'file');
        expect(file).to.exist();
        const shipped = page.locator(`tr[data-recipe="${file?.id}"]`);
        expect(await shipped.locator('.recipe-level').textContent()).to.equal(file?.level ?? null);
        await shipped.getByText('shipped').waitFor();
        // A shipped recipe that a test signs in through names the test and the package it ran on.
        const transmission = page.locator('tr[data-recipe="transmission"]');
        expect(await transmission.locator('.recipe-level').textContent()).to.equal('tested');
        await transmission.getByText('test/plugins/deploy/routes/recipes/tested/transmission.test.ts').waitFor();
        await transmission.getByText(/on Debian 12 package transmission-daemon/).waitFor();

        const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: /^Export / }).click()]);
        expect(download.suggestedFilename()).to.equal(`${recipeId}.yaml`);
        const text = Fs.readFileSync(await download.path(), 'utf8');
        expect(text).to.contain(`# Saved from the app ${APP} by ${editor.email}`);
        expect(text).to.contain('# Checked on keeper 1.');
        const exported = YAML.parse(text) as Record<string, unknown>;
        expect(exported).to.include({ image: IMAGE, method: 'basic', level: 'tested', service: 'web' });
        expect(exported.env).to.equal({ KEEPER_HOST: '{{FQDN}}' });
        expect(exported.steps).to.equal(['Open the settings.', 'Turn on the proxy login.']);
        expect(text).to.not.contain(SECRET);
        await checkAccessibility(page);
        await screenshot(page, 'recipes');
        expect(problems.list()).to.equal([]);
    });

    it('shows a viewer the sign-in card and the recipes, but no form to save one', async () => {
        await haveSavedRecipe();
        const viewer = await web.signInAs('viewer');
        await viewer.page.goto(`${web.baseUrl}/apps/${APP}/account`);
        await viewer.page.getByRole('heading', { name: 'How visitors are known inside the app' }).waitFor();
        await viewer.page.locator('[data-check="true"]').waitFor();
        expect(await viewer.page.getByRole('heading', { name: 'Save as a recipe' }).count()).to.equal(0);
        await viewer.page.goto(`${web.baseUrl}/recipes`);
        await viewer.page.locator(`tr[data-recipe="${recipeId}"]`).waitFor();
    });
});
