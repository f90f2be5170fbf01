// needs: chromium
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { temporaryDirectory } from '../helpers/server.ts';
import { checkAccessibility, openAdminPage, type PageProblems, screenshot, startWebServer, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const APP = 'reviewed';
const IMAGE = 'gatehouse-test/review';

/** A recipe whose choices would be written into the app: its login path, a variable, a step. */
const RECIPE = [
    `image: ${IMAGE}`,
    'title: Review app',
    'method: autologin',
    'level: documented',
    'sources: ["https://example.org/review/sign-in"]',
    'login: { adapter: form, path: /accounts/login }',
    'env: { REVIEW_MODE: "on" }',
    'steps: ["Turn the review mode on in the settings."]',
    '',
].join('\n');

describe('web UI: what a recipe changes is shown before it is chosen', { timeout: 300_000 }, () => {
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    before({ timeout: 240_000 }, async () => {
        const recipeDir = temporaryDirectory('gatehouse-review-recipes-');
        Fs.writeFileSync(Path.join(recipeDir, 'review-app.yaml'), RECIPE);
        web = await startWebServer({ RECIPES_DIRS: recipeDir });
        const created = await (web.admin as Browser).post('/api/apps', { name: APP, image: IMAGE });
        expect(created.status, created.text).to.equal(201);
        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await web?.stop();
    });

    it("lists the recipe's login path, variables and steps under its method in the wizard's sign-in step", async () => {
        await page.goto(`${web.baseUrl}/apps/new?app=${APP}`);
        const row = page.locator('li.method[data-method="autologin"]');
        const review = row.locator('details.recipe-review');
        await review.locator('summary', { hasText: 'What the recipe Review app changes' }).click();
        await review.getByText('From a recipe file.').waitFor();
        expect(await review.locator('dd', { hasText: 'the login form' }).locator('code').textContent()).to.equal('/accounts/login');
        expect(await review.locator('li', { hasText: 'REVIEW_MODE' }).textContent()).to.equal('REVIEW_MODE = on');
        await review.getByText('Turn the review mode on in the settings.').waitFor();
        expect(await review.locator('.recipe-problems').count()).to.equal(0);
        await checkAccessibility(page);
        await screenshot(page, 'recipe-review');
        expect(problems.list()).to.equal([]);
    });
});
