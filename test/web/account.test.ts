// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generate } from 'otplib';

import { Browser } from '../helpers/browser.ts';
import { waitUntil } from '../helpers/wait.ts';
import { checkAccessibility, screenshot, startWebServer, watchPage, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RECOVERY_CODE = /^[0-9a-f]{5}-[0-9a-f]{5}$/;

/** A password sign-in through the API: its status, and whether a second factor is asked for. */
async function signInThroughApi(baseUrl: string, email: string, password: string) {
    const browser = new Browser(baseUrl);
    await browser.get('/api/setup/status');
    const answer = await browser.post('/api/auth/login', { email, password });
    return { browser, status: answer.status, mfaRequired: (answer.body as { mfaRequired?: boolean } | undefined)?.mfaRequired };
}

describe('web UI: the account page', { timeout: 120_000 }, () => {
    let web: WebServer;

    before(async () => {
        web = await startWebServer();
    });

    after(async () => {
        await web?.stop();
    });

    it('changes the password (a wrong current one shown at its field), then signs in with the new one', async () => {
        const user = await web.signInAs('editor');
        const { page } = user;
        const problems = watchPage(page);
        await page.goto(`${web.baseUrl}/account`);
        await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'account');

        const passwordCard = page.getByRole('region', { name: 'Password' });
        const current = passwordCard.getByLabel(/^Current password/);
        const repeated = passwordCard.getByLabel(/^New password again/);
        await current.fill('not-the-password');
        await passwordCard.getByLabel(/^New password \(required\)$/).fill('a-new-password-2');
        await repeated.fill('a-new-password-2');
        await page.getByRole('button', { name: 'Change password' }).click();
        await page.getByRole('alert').filter({ hasText: 'the current password is wrong' }).waitFor();
        expect(await current.getAttribute('aria-invalid')).to.equal('true');

        await current.fill(user.password);
        await repeated.fill('something-else-3');
        await page.getByRole('button', { name: 'Change password' }).click();
        await page.getByText('The two new passwords differ.').waitFor();
        expect(await repeated.getAttribute('aria-invalid')).to.equal('true');

        await repeated.fill('a-new-password-2');
        await page.getByRole('button', { name: 'Change password' }).click();
        await page.getByText('Password changed. Your other sessions were signed out.').waitFor();
        expect(await current.inputValue()).to.equal('');

        // The other session (the API's) was ended; the old password no longer works, the new one does, through the sign-in page.
        expect((await user.api.get('/api/auth/me')).status).to.equal(401);
        expect((await signInThroughApi(web.baseUrl, user.email, user.password)).status).to.equal(401);
        const fresh = await web.openBrowser();
        await fresh.page.goto(`${web.baseUrl}/sign-in`);
        await fresh.page.getByLabel('E-mail').fill(user.email);
        await fresh.page.getByLabel('Password').fill('a-new-password-2');
        await fresh.page.getByRole('button', { name: 'Sign in' }).click();
        await fresh.page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();
        expect(problems.list()).to.equal([]);
    });

    it('changes the display name, shown in the header at once', async () => {
        const user = await web.signInAs('viewer');
        const { page } = user;
        await page.goto(`${web.baseUrl}/account`);
        const name = page.getByLabel(/^Name/);
        await name.waitFor();
        expect(await name.inputValue()).to.equal(user.name);
        expect(await page.getByLabel('E-mail address').inputValue()).to.equal(user.email);
        expect(await page.getByLabel('E-mail address').getAttribute('readonly')).to.not.equal(null);

        await name.fill('Vera Viewer');
        await page.getByRole('button', { name: 'Save profile' }).click();
        await page.getByText('Profile saved.').waitFor();
        await page.getByRole('banner').getByText('Vera Viewer').waitFor();
        const me = (await user.api.get('/api/auth/me')).body as { user: { name: string } };
        expect(me.user.name).to.equal('Vera Viewer');
    });

    it('turns two factors on through the QR code step, shows the recovery codes once, and turns them off', async () => {
        const user = await web.signInAs('editor');
        const { page, context } = user;
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: web.baseUrl });
        await page.goto(`${web.baseUrl}/account`);
        await page.getByText('Two factors are off').waitFor();
        await page.getByRole('button', { name: 'Set up two factors' }).click();

        const qrCode = page.getByRole('img', { name: /QR code/ });
        await qrCode.waitFor();
        expect((await qrCode.getAttribute('src')) ?? '').to.startWith('data:image/png;base64,');
        expect(await qrCode.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).to.be.true();
        const secret = (await page.locator('.totp-secret').textContent()) ?? '';
        expect(secret).to.match(/^[A-Z2-7]{16,}$/);
        const otpauth = await page.getByRole('link', { name: 'Open the key in your authenticator app' }).getAttribute('href');
        expect(otpauth ?? '').to.startWith('otpauth://totp/Gatehouse:');
        expect(new URL(otpauth ?? '').searchParams.get('secret')).to.equal(secret);
        await checkAccessibility(page);
        await screenshot(page, 'account-totp-setup');

        const code = page.getByLabel(/^Code from the app/);
        await code.fill('000000');
        await page.getByRole('button', { name: 'Turn on two factors' }).click();
        await page.getByRole('alert').filter({ hasText: 'the code is not valid' }).waitFor();
        expect(await page.getByRole('alert').textContent()).to.equal('The code is not valid');
        expect(await code.getAttribute('aria-invalid')).to.equal('true');

        await code.fill(await generate({ secret }));
        await page.getByRole('button', { name: 'Turn on two factors' }).click();
        const list = page.getByRole('list', { name: 'Recovery codes' });
        await list.waitFor();
        const codes = (await list.getByRole('listitem').allTextContents()).map((text) => text.trim());
        expect(codes).to.have.length(10);
        for (const recoveryCode of codes) {
            expect(recoveryCode).to.match(RECOVERY_CODE);
        }

        await checkAccessibility(page);
        await screenshot(page, 'account-recovery-codes');
        await page.getByRole('button', { name: 'Copy the recovery codes' }).click();
        await page.getByRole('button', { name: 'Copy the recovery codes' }).filter({ hasText: 'Copied' }).waitFor();
        expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(codes.join('\n'));

        // Shown once: gone when dismissed, and not there after a reload.
        await page.getByRole('button', { name: 'I have saved them' }).click();
        await page.getByText('Two factors are on').waitFor();
        expect(await page.getByRole('list', { name: 'Recovery codes' }).count()).to.equal(0);
        await page.reload();
        await page.getByText('Two factors are on').waitFor();
        const content = (await page.content()).toLowerCase();
        for (const recoveryCode of codes) {
            expect(content).to.not.contain(recoveryCode);
        }

        expect(content).to.not.contain(secret.toLowerCase());

        // The codes shown are the real ones: one completes a sign-in in place of a TOTP code.
        const signedIn = await signInThroughApi(web.baseUrl, user.email, user.password);
        expect(signedIn.mfaRequired).to.be.true();
        expect((await signedIn.browser.post('/api/auth/mfa', { code: codes[0] })).status).to.equal(200);

        const twoFactors = page.getByRole('region', { name: 'Two factors' });
        await twoFactors.getByLabel(/^Password/).fill('not-the-password');
        await page.getByRole('button', { name: 'Turn off two factors' }).click();
        await page.getByRole('alert').filter({ hasText: 'the password or code is wrong' }).waitFor();
        await twoFactors.getByLabel(/^Password/).fill(user.password);
        await page.getByRole('button', { name: 'Turn off two factors' }).click();
        await page.getByText('Two factors are off').waitFor();
        const me = (await user.api.get('/api/auth/me')).body as { user: { totpEnabled: boolean } };
        expect(me.user.totpEnabled).to.be.false();
    });

    it('makes new recovery codes with the password, shown once, and ends another session from the list', async () => {
        const user = await web.signInAs('viewer');
        const { page } = user;
        const { secret } = (await user.api.post('/api/account/totp/setup')).body as { secret: string };
        const enabled = await user.api.post('/api/account/totp/enable', { code: await generate({ secret }) });
        const oldCodes = (enabled.body as { recoveryCodes: string[] }).recoveryCodes;
        const problems = watchPage(page);
        await page.goto(`${web.baseUrl}/account`);
        const twoFactors = page.getByRole('region', { name: 'Two factors' });
        await twoFactors.getByText('Two factors are on').waitFor();
        await twoFactors.getByLabel(/^Password/).fill('not-the-password');
        await twoFactors.getByRole('button', { name: 'Make new recovery codes' }).click();
        await twoFactors.getByRole('alert').filter({ hasText: 'the password or code is wrong' }).waitFor();
        await twoFactors.getByLabel(/^Password/).fill(user.password);
        await twoFactors.getByRole('button', { name: 'Make new recovery codes' }).click();
        const list = page.getByRole('list', { name: 'Recovery codes' });
        await list.waitFor();
        const codes = (await list.getByRole('listitem').allTextContents()).map((text) => text.trim());
        expect(codes).to.have.length(10);
        expect(codes.some((code) => oldCodes.includes(code))).to.be.false();
        await checkAccessibility(page);
        await page.getByRole('button', { name: 'I have saved them' }).click();
        await twoFactors.getByText('Two factors are on').waitFor();
        expect((await user.api.get('/api/auth/me')).body).to.part.include({ user: { totpEnabled: true } });

        // Two sessions: this browser's and the API's. The other one is ended from here.
        const sessions = page.getByRole('region', { name: 'Where you are signed in' });
        await page.reload();
        const items = sessions.getByRole('listitem');
        await waitUntil('both sessions are listed', async () => (await items.count()) === 2);
        expect(await items.filter({ hasText: 'this browser' }).count()).to.equal(1);
        expect(await sessions.getByRole('button', { name: /^End the session from 127\.0\.0\.1, signed in / }).count()).to.equal(1);
        await checkAccessibility(page);
        await sessions.getByRole('button', { name: /^End the session/ }).click();
        await waitUntil('one session is left', async () => (await items.count()) === 1);
        expect((await user.api.get('/api/auth/me')).status).to.equal(401);
        expect(await items.first().textContent()).to.contain('this browser');
        expect(problems.list()).to.equal([]);
    });
});
