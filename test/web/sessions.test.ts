// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generate } from 'otplib';

import { ADMIN_ACCOUNT, checkAccessibility, screenshot, startWebServer, watchPage, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

function pathOf(url: string): string {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
}

describe('web UI: sessions', { timeout: 120_000 }, () => {
    let web: WebServer;

    before(async () => {
        web = await startWebServer();
    });

    after(async () => {
        await web?.stop();
    });

    it('signs in with a password and a TOTP code, and returns to the page that was asked for', async () => {
        const user = await web.createUser('editor');
        const setup = await user.api.post('/api/account/totp/setup');
        const { secret } = setup.body as { secret: string };
        const enabled = await user.api.post('/api/account/totp/enable', { code: await generate({ secret }) });
        expect(enabled.status).to.equal(200);

        const { page } = await web.openBrowser();
        const problems = watchPage(page);
        await page.goto(`${web.baseUrl}/apps`);
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        expect(pathOf(page.url())).to.equal('/sign-in?next=%2Fapps');
        await checkAccessibility(page);
        await screenshot(page, 'sign-in');

        await page.getByLabel('E-mail').fill(user.email);
        await page.getByLabel('Password').fill(user.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
        expect(pathOf(page.url())).to.equal('/sign-in/mfa?next=%2Fapps');
        await checkAccessibility(page);
        await screenshot(page, 'sign-in-mfa');

        await page.getByLabel('Code').fill('000000');
        await page.getByRole('button', { name: 'Verify' }).click();
        await page.getByText('the code is not valid').waitFor();
        expect(await page.getByLabel('Code').getAttribute('aria-invalid')).to.equal('true');

        // The current step's code was spent enabling two factors; the next step's is within the allowed drift.
        await page.getByLabel('Code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
        await page.getByRole('button', { name: 'Verify' }).click();
        await page.getByRole('heading', { name: 'Apps', level: 1 }).waitFor();
        expect(pathOf(page.url())).to.equal('/apps');
        expect(await page.getByRole('banner').textContent()).to.contain(user.name);
        expect(problems.list()).to.equal([]);
    });

    it('signs in with the password again from a pending code page, and says when a code was already used', async () => {
        const user = await web.createUser('viewer');
        const { secret } = (await user.api.post('/api/account/totp/setup')).body as { secret: string };
        // The next step's code: the current one's was spent turning two factors on.
        const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
        expect((await user.api.post('/api/account/totp/enable', { code: await generate({ secret }) })).status).to.equal(200);

        const { page } = await web.openBrowser();
        const signInWithPassword = async () => {
            await page.goto(`${web.baseUrl}/sign-in`);
            await page.getByLabel('E-mail').fill(user.email);
            await page.getByLabel('Password').fill(user.password);
            await page.getByRole('button', { name: 'Sign in' }).click();
            await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
        };
        // Left the code page unfinished, then the password again: the code page once more, not an error.
        await signInWithPassword();
        await signInWithPassword();
        await page.getByLabel('Code').fill(code);
        await page.getByRole('button', { name: 'Verify' }).click();
        await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();

        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        await signInWithPassword();
        await page.getByLabel('Code').fill(code);
        await page.getByRole('button', { name: 'Verify' }).click();
        const alert = page.getByRole('alert').filter({ hasText: 'already used' });
        await alert.waitFor();
        expect(await alert.textContent()).to.not.contain('code:');
    });

    it('shows a wrong password next to the form and stays on the sign-in page', async () => {
        const { page } = await web.openBrowser();
        await page.goto(`${web.baseUrl}/sign-in`);
        await page.getByLabel('E-mail').fill(ADMIN_ACCOUNT.email);
        await page.getByLabel('Password').fill('not-the-password');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').filter({ hasText: 'wrong e-mail or password' }).waitFor();
        expect(new URL(page.url()).pathname).to.equal('/sign-in');
    });

    it('shows a viewer no New-app button and no Admin section, and an editor the button', async () => {
        const viewer = await web.signInAs('viewer');
        await viewer.page.goto(`${web.baseUrl}/apps`);
        await viewer.page.getByRole('heading', { name: 'Apps', level: 1 }).waitFor();
        await viewer.page.getByText('No apps yet.').waitFor();
        expect(await viewer.page.getByRole('link', { name: 'New app' }).count()).to.equal(0);
        expect(await viewer.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).count()).to.equal(0);

        const editor = await web.signInAs('editor');
        await editor.page.goto(`${web.baseUrl}/apps`);
        await editor.page.getByRole('link', { name: 'New app' }).waitFor();
        expect(await editor.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).count()).to.equal(0);
    });

    it('sends the next navigation of an expired session (its record deleted) to the sign-in page, and back after', async () => {
        const editor = await web.signInAs('editor');
        const { page } = editor;
        await page.goto(`${web.baseUrl}/`);
        await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        // A dashboard call still in flight when the record goes would answer 401 and send the page to sign in first.
        await page.waitForLoadState('networkidle');

        const me = (await editor.api.get('/api/auth/me')).body as { user: { id: number } };
        const sessionsBefore = await web.context.database.knex('dp_sessions').where({ user_id: me.user.id }).count({ count: '*' }).first();
        expect(Number(sessionsBefore?.count)).to.equal(2);
        await web.context.database.knex('dp_sessions').where({ user_id: me.user.id }).delete();

        await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps' }).click();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        expect(pathOf(page.url())).to.equal('/sign-in?next=%2Fapps');

        await page.getByLabel('E-mail').fill(editor.email);
        await page.getByLabel('Password').fill(editor.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('heading', { name: 'Apps', level: 1 }).waitFor();
        expect(pathOf(page.url())).to.equal('/apps');
    });

    it('sends a browser whose session cookie is gone to the sign-in page on its next page load', async () => {
        const viewer = await web.signInAs('viewer');
        await viewer.page.goto(`${web.baseUrl}/account`);
        await viewer.page.getByRole('navigation', { name: 'Main' }).waitFor();
        await viewer.context.clearCookies({ name: 'dp_session' });
        await viewer.page.goto(`${web.baseUrl}/apps?state=running`);
        await viewer.page.getByRole('heading', { name: 'Sign in' }).waitFor();
        expect(pathOf(viewer.page.url())).to.equal('/sign-in?next=%2Fapps%3Fstate%3Drunning');
    });

    it('keeps a signed-in person on the page when reads get no answer at first, as when the connection drops', async () => {
        const made = await web.admin?.post('/api/apps', { name: 'dropped-reads', image: 'example/web', tag: '1' });
        expect(made?.status, made?.text).to.equal(201);
        const editor = await web.signInAs('editor');
        const dropped: string[] = [];
        // The session check and the apps list each lose their first request: without an answer, not with an error.
        for (const path of ['/api/auth/me', '/api/apps']) {
            let first = true;
            await editor.page.route(
                (url) => url.pathname === path,
                async (route) => {
                    if (!first) return await route.continue();
                    first = false;
                    dropped.push(path);
                    await route.abort('connectionreset');
                },
            );
        }

        await editor.page.goto(`${web.baseUrl}/apps`);
        await editor.page.getByRole('link', { name: 'dropped-reads' }).first().waitFor();
        expect(dropped.sort()).to.equal(['/api/apps', '/api/auth/me']);
        expect(pathOf(editor.page.url())).to.equal('/apps');
        expect(await editor.page.getByRole('alert').count()).to.equal(0);
        await screenshot(editor.page, 'apps-after-dropped-reads');
    });

    it('signs out: the session ends on the server and pages ask to sign in again', async () => {
        const editor = await web.signInAs('editor');
        await editor.page.goto(`${web.baseUrl}/`);
        await editor.page.getByRole('button', { name: 'Sign out' }).click();
        await editor.page.getByRole('heading', { name: 'Sign in' }).waitFor();
        const me = (await editor.api.get('/api/auth/me')).body as { user: { id: number } };
        expect(await web.context.database.knex('dp_sessions').where({ user_id: me.user.id }).count({ count: '*' }).first()).to.include({
            count: 1,
        });
        await editor.page.goto(`${web.baseUrl}/`);
        await editor.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    });

    it('offers the identity provider when OIDC sign-in is on, and says so when it failed', async () => {
        const saved = await web.admin?.put('/api/admin/oidc', { enabled: true, issuer: 'http://127.0.0.1:9/', clientId: 'gatehouse' });
        expect(saved?.status).to.equal(200);
        const { page } = await web.openBrowser();
        await page.goto(`${web.baseUrl}/?signin=failed`);
        await page.getByText('Sign-in through the identity provider failed').waitFor();
        const button = page.getByRole('link', { name: 'Sign in with the identity provider' });
        await button.waitFor();
        expect(await button.getAttribute('href')).to.equal('/api/auth/oidc/start');
        await checkAccessibility(page);
        await web.admin?.put('/api/admin/oidc', { enabled: false });
        await page.reload();
        await page.getByRole('heading', { name: 'Sign in' }).waitFor();
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
        expect(await button.count()).to.equal(0);
    });
});
