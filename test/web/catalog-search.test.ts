// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import { readRecipeFolders, SHIPPED_RECIPES_DIR } from '../../plugins/deploy/domain/recipes/recipe-files.ts';
import { checkAccessibility, openAdminPage, type PageProblems, screenshot, startWebServer, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const APP = 'from-catalog';
const shipped = readRecipeFolders([SHIPPED_RECIPES_DIR]);

describe("web UI: the wizard's catalog on a fresh install, searched by name and category", { timeout: 300_000 }, () => {
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    const entries = () => page.getByRole('list', { name: 'Templates' }).getByRole('listitem');
    const titles = async () => (await entries().locator('strong').allTextContents()).sort();

    before({ timeout: 240_000 }, async () => {
        web = await startWebServer({ HUB_URL: 'http://127.0.0.1:9', HUB_REGISTRY_URL: 'http://127.0.0.1:9' });
        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await web?.stop();
    });

    it('lists a template for every recipe, and narrows them by words and by category', async () => {
        await page.goto(`${web.baseUrl}/apps/new`);
        await page.getByLabel('Name (required)').fill(APP);
        await page.getByText(`${APP} is free`).waitFor();
        await page.getByRole('button', { name: /^Next: the image$/ }).click();
        await page.getByLabel('From the catalog').check();
        await page.getByText(`${shipped.length} templates`, { exact: true }).waitFor();
        expect(await titles()).to.equal(shipped.map((recipe) => recipe.title).sort());

        const search = page.getByRole('searchbox', { name: 'Search the catalog' });
        await search.fill('photo');
        await page.getByText(`2 of ${shipped.length} templates`).waitFor();
        expect(await titles()).to.equal(['Immich', 'PhotoPrism']);

        // Words match the description and the image too; every word must match.
        await search.fill('git self-hosted');
        const gitApps = shipped.filter((recipe) =>
            ['git', 'self-hosted'].every((word) =>
                [recipe.title, recipe.description ?? '', `${recipe.image}:${recipe.tag ?? 'latest'}`, recipe.category ?? '']
                    .join(' ')
                    .toLowerCase()
                    .includes(word),
            ),
        );
        expect(gitApps.length).to.be.above(1);
        await page.getByText(`${gitApps.length} of ${shipped.length} templates`).waitFor();

        await search.fill('');
        const category = page.getByLabel('Category');
        expect((await category.locator('option').allTextContents()).slice(1)).to.equal(
            [...new Set(shipped.map((recipe) => recipe.category as string))].sort(),
        );
        await category.selectOption('Monitoring');
        const monitoring = shipped.filter((recipe) => recipe.category === 'Monitoring').map((recipe) => recipe.title);
        await page.getByText(`${monitoring.length} of ${shipped.length} templates`).waitFor();
        expect(await titles()).to.equal(monitoring.sort());
        expect(await entries().first().textContent()).to.contain('Monitoring');

        await search.fill('no such app anywhere');
        await page.getByText('No template matches: try other words or all categories.').waitFor();
        await search.fill('uptime');
        await entries().first().getByRole('button', { name: 'Use this template: Uptime Kuma' }).click();
        await page.getByText('The app will be made from the template Uptime Kuma.').waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'new-app-catalog-search');
        expect(problems.list()).to.equal([]);
    });
});
