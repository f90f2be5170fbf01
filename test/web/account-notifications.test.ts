// needs: chromium
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { notifications } from '../../plugins/deploy/domain/notifications/notification-service.ts';
import { Browser } from '../helpers/browser.ts';
import { checkAccessibility, screenshot, watchPage, type WebServer, startWebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SECRET = 'a-webhook-secret-1';

describe('web UI: the account page, notifications', { timeout: 120_000 }, () => {
    let web: WebServer;

    before(async () => {
        web = await startWebServer();
    });

    after(async () => {
        await web?.stop();
    });

    it('chooses events per channel, sets a webhook with a secret that is never shown again, and shows a refusal at its field', async () => {
        const user = await web.signInAs('viewer');
        const { page } = user;
        const problems = watchPage(page);
        await page.goto(`${web.baseUrl}/account`);
        const card = page.getByRole('region', { name: 'Notifications' });
        await card.getByLabel(`Send e-mail to ${user.email}`).waitFor();
        await checkAccessibility(page);

        await card.getByLabel(`Send e-mail to ${user.email}`).check();
        const byEmail = card.getByRole('group', { name: 'Events by e-mail' });
        await byEmail.getByLabel('A run failed or was rolled back').check();
        // Each box sits at the start of its line, beside its words (the rule once lived in the admin pages' styles):
        // its middle is the label's middle, and it starts where the label does.
        const box = await byEmail.getByLabel('A run failed or was rolled back').boundingBox();
        const label = await byEmail.locator('label', { hasText: 'A run failed or was rolled back' }).boundingBox();
        const middle = (area: { y: number; height: number }) => area.y + area.height / 2;
        expect(box && label && Math.abs(middle(box) - middle(label)) < 5 && box.x - label.x < 5).to.be.true();
        await byEmail.getByLabel('A backup failed').check();
        await card.getByLabel(/^Webhook URL/).fill('ftp://hooks.example.com/');
        await card.getByRole('button', { name: 'Save notifications' }).click();
        await card.getByText('Only http and https URLs').waitFor();
        expect(await card.getByLabel(/^Webhook URL/).getAttribute('aria-invalid')).to.equal('true');

        await card.getByLabel(/^Webhook URL/).fill('https://hooks.example.com/gatehouse');
        await card.getByLabel(/^Webhook secret/).fill(SECRET);
        await card.getByRole('group', { name: 'Events by webhook' }).getByLabel('A certificate expires within 14 days').check();
        await card.getByRole('button', { name: 'Save notifications' }).click();
        await card.getByText('set', { exact: true }).waitFor();
        await screenshot(page, 'account-notifications');

        const saved = await user.api.get('/api/account/notifications');
        expect(saved.body).to.equal({
            email: { enabled: true, address: user.email, kinds: ['run-failed', 'backup-failed'] },
            webhook: { url: 'https://hooks.example.com/gatehouse', secretSet: true, kinds: ['certificate-expiring'] },
        });
        await page.reload();
        await card.getByLabel(/^New webhook secret/).waitFor();
        expect(await card.getByLabel(/^New webhook secret/).inputValue()).to.equal('');
        expect(await page.content()).to.not.include(SECRET);
        expect(await card.getByRole('group', { name: 'Events by e-mail' }).getByLabel('A backup failed').isChecked()).to.be.true();
        expect(problems.list()).to.equal([]);
    });

    it('shows administrators every delivery on the Notifications section of the admin page', async () => {
        const user = await web.signInAs('viewer');
        // A loopback address is not among the default allow-list's (external): the delivery is refused and recorded.
        await user.api.put('/api/account/notifications', {
            webhook: { url: 'http://127.0.0.1:9/hook', secret: SECRET, kinds: ['update-available'] },
        });
        await notifications(web.server).notify({
            kind: 'update-available',
            app: 'shown',
            summary: 'an update of shown is available',
            details: {},
        });
        await notifications(web.server).settled();

        const admin = await web.signInAs('admin');
        const problems = watchPage(admin.page);
        await admin.page.goto(`${web.baseUrl}/admin/notifications`);
        const row = admin.page.getByRole('row').filter({ hasText: 'an update of shown is available' });
        await row.waitFor();
        expect(await row.innerText()).to.include(user.email);
        expect(await row.innerText()).to.include('refused');
        expect(await row.innerText()).to.include('WEBHOOK_ALLOWED_HOST_LIST');
        await checkAccessibility(admin.page);
        expect(problems.list()).to.equal([]);
        expect((await new Browser(web.baseUrl).get('/api/admin/notifications/deliveries')).status).to.equal(401);
    });
});
