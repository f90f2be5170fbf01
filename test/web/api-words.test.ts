// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';

import type { Browser } from '../helpers/browser.ts';
import { openAdminPage, type PageProblems, startWebServer, type WebServer } from './harness.ts';
import { seedApps, walkSignedInPages } from './page-walk.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** What the API says to programs, which a page must say in words. */
const API_WORDS: Array<{ what: string; pattern: RegExp }> = [
    { what: 'an API field', pattern: /\bacceptRisks\b|\blogin\.(?:path|adapter)\b/ },
    { what: 'an API route', pattern: /\b(?:GET|POST|PUT|PATCH|DELETE) \/|\/api\// },
    { what: 'a field name in front of a message', pattern: /(?:^|\n)[a-z]+[A-Z][A-Za-z]*(?:\.[A-Za-z]+)*: / },
    {
        what: 'an audit action id',
        pattern:
            /\b(?:setup\.complete|auth\.(?:login|logout|password|mfa|oidc)|account\.(?:password|profile|totp|session)|users\.(?:create|update|delete)|settings\.oidc|apps\.(?:create|draft|access|autologin|recipe)|runs\.(?:deploy|compose|nginx|action|delete|sso))\b/,
    },
];
const METHOD_IDS = ['oidc', 'saml', 'header', 'basic', 'autologin', 'none', 'own'];

/** Fails naming the page and the words when the page shows an API word, or a sign-in method's id as a chip. */
async function checkNoApiWords(page: Page): Promise<void> {
    // An address to copy (the OIDC redirect URI) is a value, not a word.
    const text = (await page.locator('body').innerText()).replace(/https?:\/\/\S+/g, '');
    for (const { what, pattern } of API_WORDS) {
        const found = pattern.exec(text);
        expect(found, `${page.url()} shows ${what}: ${found?.[0]}`).to.be.null();
    }

    const chips = (await page.locator('.badge').allInnerTexts()).map((chip) => chip.trim());
    expect(
        chips.filter((chip) => METHOD_IDS.includes(chip)),
        `${page.url()} shows a method id as a chip`,
    ).to.equal([]);
}

describe('web UI: the pages and their messages say things in words, not in the API words', { timeout: 300_000 }, () => {
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;

    before({ timeout: 240_000 }, async () => {
        web = await startWebServer({ HUB_URL: 'http://127.0.0.1:9', HUB_REGISTRY_URL: 'http://127.0.0.1:9' });
        const created = await (web.admin as Browser).post('/api/apps', { name: 'plain', image: 'gatehouse-test/plain' });
        expect(created.status, created.text).to.equal(201);
        ({ page, problems } = await openAdminPage(web));
    });

    after(async () => {
        await web?.stop();
    });

    it('shows no API word on any signed-in page, tab or section', async () => {
        await walkSignedInPages(web, page, await seedApps(web), checkNoApiWords);
    });

    it('says in words where to connect the identity provider when a sign-in method cannot be applied without one', async () => {
        await page.goto(`${web.baseUrl}/apps/plain/account`);
        await page.getByRole('button', { name: 'Change the method' }).click();
        await page.getByRole('button', { name: /^Show all methods/ }).click();
        await page.getByRole('radio', { name: /^Username from the proxy/ }).check();
        await page.getByRole('button', { name: 'Apply the sign-in method' }).click();
        await page.getByText(/connect an identity provider first \(Admin, Identity provider\)/i).waitFor();
        await checkNoApiWords(page);
    });

    it('shows no API word in the wizard, its sign-in step and its compose step', async () => {
        await page.goto(`${web.baseUrl}/apps/new?app=plain`);
        await page.getByRole('group', { name: 'Single sign-on through the identity provider' }).waitFor();
        await checkNoApiWords(page);
        await page.getByRole('button', { name: /Compose file$/ }).click();
        await page.getByTestId('compose-model').waitFor();
        await page.locator('.findings-status, .findings-list').first().waitFor();
        await checkNoApiWords(page);
        expect(problems.list()).to.equal([]);
    });
});
