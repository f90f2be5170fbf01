// needs: chromium
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Locator, Page } from 'playwright-core';

import { Browser } from '../helpers/browser.ts';
import { waitUntil } from '../helpers/wait.ts';
import { startAuthentikStandIn } from '../support/authentik/index.ts';
import { ADMIN_ACCOUNT, checkAccessibility, screenshot, startWebServer, watchPage, type WebServer } from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ListedUser {
    id: number;
    email: string;
    role: string;
    disabled: boolean;
}

/** An OpenID provider's discovery document, and nothing else: enough for the settings' test. */
async function startDiscoveryStandIn(): Promise<{ issuer: string; close(): Promise<void> }> {
    const server = Http.createServer((request, response) => {
        const { port } = server.address() as AddressInfo;
        const issuer = `http://127.0.0.1:${port}/`;
        if (request.url !== '/.well-known/openid-configuration') {
            response.writeHead(404).end();
            return;
        }

        response.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
                issuer,
                authorization_endpoint: `${issuer}authorize`,
                token_endpoint: `${issuer}token`,
                jwks_uri: `${issuer}jwks`,
                response_types_supported: ['code'],
                subject_types_supported: ['public'],
                id_token_signing_alg_values_supported: ['RS256'],
                code_challenge_methods_supported: ['S256'],
            }),
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        issuer: `http://127.0.0.1:${port}/`,
        close: () => new Promise((resolve) => server.close(() => resolve())),
    };
}

/** Through the API of an administrator who stays one (the first administrator is demoted for a while). */
async function listedUsers(admin: Browser): Promise<ListedUser[]> {
    return ((await admin.get('/api/admin/users')).body as { users: ListedUser[] }).users;
}

async function columnTexts(page: Page, column: number): Promise<string[]> {
    return (await page.locator(`.audit-table tbody tr td:nth-child(${column})`).allTextContents()).map((text) => text.trim());
}

function region(page: Page, name: string): Locator {
    return page.getByRole('region', { name, exact: true });
}

describe('web UI: the admin pages', { timeout: 120_000 }, () => {
    let web: WebServer;
    /** The servers a test starts for itself. */
    const ownServers: WebServer[] = [];

    before(async () => {
        web = await startWebServer();
    });

    after(async () => {
        await Promise.allSettled([web, ...ownServers].map((server) => server?.stop()));
    });

    it('adds a viewer (errors at their fields), changes roles, disables and deletes; the viewer cannot open admin pages', async () => {
        // On a server of its own: it demotes the first administrator for a while and expects its own to be the last
        // active one, which the administrators the other tests add would not let it be.
        const server = await startWebServer();
        ownServers.push(server);
        const admin = await server.signInAs('admin');
        const { page } = admin;
        const problems = watchPage(page);
        await page.goto(`${server.baseUrl}/admin`);
        await region(page, 'Users').getByRole('table').waitFor();
        const sections = page.getByRole('navigation', { name: 'Administration sections' });
        expect(await sections.getByRole('link', { name: 'Users' }).getAttribute('aria-current')).to.equal('page');
        await checkAccessibility(page);
        await screenshot(page, 'admin-users');

        const form = region(page, 'Add a user');
        await form.getByLabel(/^E-mail address/).fill('vic@example.com');
        await form.getByLabel(/^Name/).fill('Vic Viewer');
        await form.getByLabel(/^Password/).fill('short');
        await form.getByLabel('Role').selectOption('viewer');
        await form.getByRole('button', { name: 'Add user' }).click();
        await form.getByRole('alert').filter({ hasText: 'Must be at least 10 characters' }).waitFor();
        expect(await form.getByRole('alert').textContent()).to.not.contain('password:');
        expect(await form.getByLabel(/^Password/).getAttribute('aria-invalid')).to.equal('true');

        await form.getByLabel(/^Password/).fill('viewer-password-1');
        await form.getByRole('button', { name: 'Add user' }).click();
        await form.getByText('vic@example.com was added as viewer.').waitFor();
        const row = page.getByRole('row').filter({ hasText: 'vic@example.com' });
        await row.waitFor();
        expect(await row.getByLabel('Role of vic@example.com').inputValue()).to.equal('viewer');
        expect((await listedUsers(admin.api)).find((user) => user.email === 'vic@example.com')?.role).to.equal('viewer');

        await form.getByLabel(/^E-mail address/).fill('vic@example.com');
        await form.getByLabel(/^Name/).fill('Vic Again');
        await form.getByLabel(/^Password/).fill('viewer-password-1');
        await form.getByRole('button', { name: 'Add user' }).click();
        await form.getByRole('alert').filter({ hasText: 'a user with this e-mail already exists' }).waitFor();
        expect(await form.getByLabel(/^E-mail address/).getAttribute('aria-invalid')).to.equal('true');

        // The viewer: no Admin link, and the admin pages say "not allowed" without showing anything.
        const viewer = await server.openBrowser();
        await server.signInBrowser(viewer.context, 'vic@example.com', 'viewer-password-1');
        for (const section of ['users', 'audit', 'oidc', 'idp', 'system']) {
            await viewer.page.goto(`${server.baseUrl}/admin/${section}`);
            await viewer.page.getByRole('alert').filter({ hasText: 'Not allowed' }).waitFor();
            expect(await viewer.page.getByRole('table').count()).to.equal(0);
            expect(await viewer.page.getByRole('navigation', { name: 'Administration sections' }).count()).to.equal(0);
        }

        expect(await viewer.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Admin' }).count()).to.equal(0);
        await checkAccessibility(viewer.page);
        await screenshot(viewer.page, 'admin-not-allowed');

        await row.getByLabel('Role of vic@example.com').selectOption('editor');
        await waitUntil(
            'vic is an editor',
            async () => (await listedUsers(admin.api)).find((user) => user.email === 'vic@example.com')?.role === 'editor',
        );

        // The last active administrator cannot be demoted: the refusal shows in that user's row.
        const firstAdminRow = page.getByRole('row').filter({ hasText: ADMIN_ACCOUNT.email });
        await firstAdminRow.getByLabel(`Role of ${ADMIN_ACCOUNT.email}`).selectOption('viewer');
        await waitUntil('the first administrator is a viewer', async () =>
            (await listedUsers(admin.api)).some((user) => user.email === ADMIN_ACCOUNT.email && user.role === 'viewer'),
        );
        const ownRow = page.getByRole('row').filter({ hasText: admin.email });
        await ownRow.getByLabel(`Role of ${admin.email}`).selectOption('viewer');
        await ownRow.getByRole('alert').filter({ hasText: 'the last active administrator cannot be demoted or disabled' }).waitFor();
        expect(await ownRow.getByLabel(`Role of ${admin.email}`).inputValue()).to.equal('admin');
        await firstAdminRow.getByLabel(`Role of ${ADMIN_ACCOUNT.email}`).selectOption('admin');
        await waitUntil('the first administrator is an administrator again', async () =>
            (await listedUsers(admin.api)).some((user) => user.email === ADMIN_ACCOUNT.email && user.role === 'admin'),
        );

        await row.getByRole('button', { name: 'Disable vic@example.com' }).click();
        await row.getByText('disabled', { exact: true }).waitFor();
        await row.getByRole('button', { name: 'Enable vic@example.com' }).waitFor();
        expect((await listedUsers(admin.api)).find((user) => user.email === 'vic@example.com')?.disabled).to.be.true();
        await viewer.page.goto(`${server.baseUrl}/`);
        await viewer.page.getByRole('heading', { name: 'Sign in' }).waitFor();

        await row.getByRole('button', { name: 'Delete vic@example.com' }).click();
        await row.getByRole('button', { name: 'Delete for good' }).click();
        await waitUntil('the row is gone', async () => (await page.getByRole('row').filter({ hasText: 'vic@example.com' }).count()) === 0);
        expect((await listedUsers(admin.api)).map((user) => user.email)).to.not.include('vic@example.com');
        expect(problems.list()).to.equal([]);
    });

    it('says a role change is saved, offers no Disable or Delete for the only active administrator, and sets a password', async () => {
        const admin = await web.signInAs('admin');
        const { page } = admin;
        const problems = watchPage(page);
        const editor = await web.createUser('editor');
        await page.goto(`${web.baseUrl}/admin/users`);
        const row = page.getByRole('row').filter({ hasText: editor.email });
        await row.getByLabel(`Role of ${editor.email}`).selectOption('viewer');
        await row
            .getByRole('status')
            .filter({ hasText: `Saved: ${editor.email} is now a viewer.` })
            .waitFor();

        // Each new user starts as a viewer, whatever the form said for the last one.
        const form = region(page, 'Add a user');
        await form.getByLabel('Role').selectOption('editor');
        await form.getByLabel(/^E-mail address/).fill(`ed-${Date.now()}@example.com`);
        await form.getByLabel(/^Name/).fill('Ed Editor');
        await form.getByLabel(/^Password/).fill('editor-password-1');
        await form.getByRole('button', { name: 'Add user' }).click();
        await form.getByText('was added as editor.').waitFor();
        expect(await form.getByLabel('Role').inputValue()).to.equal('viewer');

        // An administrator among others can be disabled; alone, neither Disable nor Delete is offered.
        const adminRow = page.getByRole('row').filter({ hasText: admin.email });
        await adminRow.getByRole('button', { name: `Disable ${admin.email}` }).waitFor();
        const demoted = (await listedUsers(admin.api)).filter(
            (user) => user.role === 'admin' && !user.disabled && user.email !== admin.email,
        );
        for (const other of demoted) {
            expect((await admin.api.put(`/api/admin/users/${other.id}`, { role: 'editor' })).status).to.equal(200);
        }

        try {
            await page.reload();
            await adminRow.getByText('The only active administrator').waitFor();
            expect(await adminRow.getByRole('button', { name: `Disable ${admin.email}` }).count()).to.equal(0);
            expect(await adminRow.getByRole('button', { name: `Delete ${admin.email}` }).count()).to.equal(0);
        } finally {
            for (const other of demoted) {
                await admin.api.put(`/api/admin/users/${other.id}`, { role: 'admin' });
            }
        }

        await row.getByRole('button', { name: `Set password for ${editor.email}` }).click();
        await row.getByLabel(/^New password for/).fill('short');
        await row.getByRole('button', { name: 'Set password', exact: true }).click();
        await row.getByRole('alert').filter({ hasText: 'Must be at least 10 characters' }).waitFor();
        await row.getByLabel(/^New password for/).fill('a-reset-password-1');
        await row.getByRole('button', { name: 'Set password', exact: true }).click();
        await row
            .getByRole('status')
            .filter({ hasText: `New password set for ${editor.email}` })
            .waitFor();
        expect((await editor.api.get('/api/auth/me')).status).to.equal(401);
        const again = new Browser(web.baseUrl);
        await again.get('/api/setup/status');
        expect((await again.post('/api/auth/login', { email: editor.email, password: 'a-reset-password-1' })).status).to.equal(200);
        await checkAccessibility(page);
        expect(problems.list()).to.equal([]);
    });

    it('filters the audit log and pages through it', async () => {
        for (let attempt = 0; attempt < 3; attempt += 1) {
            const stranger = new Browser(web.baseUrl);
            await stranger.get('/api/setup/status');
            expect((await stranger.post('/api/auth/login', { email: 'intruder@example.com', password: 'guessing-1' })).status).to.equal(
                401,
            );
        }

        for (let index = 0; index < 22; index += 1) {
            const created = await web.admin?.post('/api/admin/users', {
                email: `audited${index}@example.com`,
                name: `Audited ${index}`,
                password: 'audited-password-1',
                role: 'viewer',
            });
            expect(created?.status).to.equal(201);
        }

        const admin = await web.signInAs('admin');
        const { page } = admin;
        await page.goto(`${web.baseUrl}/admin/audit`);
        const log = region(page, 'Audit log');
        await log.getByRole('table').waitFor();
        expect(await log.locator('tbody tr').count()).to.equal(20);
        const pager = page.getByRole('navigation', { name: 'Audit log pages' });
        const pageCount = Number((/Page 1 of (\d+)/.exec((await pager.textContent()) ?? '') ?? [])[1]);
        expect(pageCount).to.be.at.least(2);
        await checkAccessibility(page);
        await screenshot(page, 'admin-audit');

        await pager.getByRole('button', { name: 'Older' }).click();
        await pager.getByText(`Page 2 of ${pageCount}`).waitFor();
        await pager.getByRole('button', { name: 'Newer' }).click();
        await pager.getByText(`Page 1 of ${pageCount}`).waitFor();

        await log.getByLabel('Action').selectOption('users.create');
        await log.getByRole('button', { name: 'Filter', exact: true }).click();
        await waitUntil('only users.create entries are listed', async () => {
            const actions = await columnTexts(page, 3);
            return actions.length === 20 && actions.every((action) => action === 'User added');
        });
        await pager.getByText('Page 1 of 2').waitFor();
        await pager.getByRole('button', { name: 'Older' }).click();
        await waitUntil('the second page of users.create entries', async () => {
            const actions = await columnTexts(page, 3);
            return actions.length > 0 && actions.length < 20 && actions.every((action) => action === 'User added');
        });

        await log.getByLabel('Action').selectOption('');
        await log.getByLabel('Outcome').selectOption('failure');
        await log.getByLabel('Target').fill('intruder@example.com');
        await log.getByRole('button', { name: 'Filter', exact: true }).click();
        await waitUntil('the three failed sign-ins', async () => {
            const outcomes = await columnTexts(page, 5);
            return outcomes.length === 3 && outcomes.every((outcome) => outcome === 'failure');
        });
        expect(await columnTexts(page, 3)).to.equal(['Sign-in', 'Sign-in', 'Sign-in']);
        expect(await columnTexts(page, 2)).to.equal(['—', '—', '—']);
        expect(await pager.textContent()).to.contain('Page 1 of 1');

        await log.getByRole('button', { name: 'Clear filters' }).click();
        await log.getByLabel('Actor (e-mail)').fill(ADMIN_ACCOUNT.email);
        await log.getByLabel('Action').selectOption('users.create');
        await log.getByRole('button', { name: 'Filter', exact: true }).click();
        await waitUntil("the first administrator's user creations", async () => {
            const actors = await columnTexts(page, 2);
            const targets = await columnTexts(page, 4);
            return (
                actors.length === 20 && actors.every((actor) => actor === ADMIN_ACCOUNT.email) && targets.includes('audited21@example.com')
            );
        });

        const tomorrow = new Date(Date.now() + 86_400_000);
        const local = new Date(tomorrow.getTime() - tomorrow.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
        await log.getByLabel('Since').fill(local);
        await log.getByRole('button', { name: 'Filter', exact: true }).click();
        await log.getByText('No entry matches.').waitFor();
        expect(await pager.count()).to.equal(0);

        await log.getByRole('button', { name: 'Clear filters' }).click();
        await waitUntil('every entry again', async () => (await columnTexts(page, 3)).length === 20);
        expect(await log.getByLabel('Since').inputValue()).to.equal('');
    });

    it('saves the OIDC sign-in settings, shows the client secret only as set, and tests the issuer', async () => {
        const discovery = await startDiscoveryStandIn();
        try {
            const admin = await web.signInAs('admin');
            const { page } = admin;
            await page.goto(`${web.baseUrl}/admin/oidc`);
            const card = region(page, 'OIDC sign-in');
            await card.getByText('not set', { exact: true }).waitFor();
            await card.getByText(`${web.baseUrl}/api/auth/oidc/callback`).waitFor();
            await card.getByRole('button', { name: 'Copy the redirect URI' }).waitFor();
            await checkAccessibility(page);

            await card.getByLabel(/^Issuer/).fill('http://id.example.com/');
            await card.getByRole('button', { name: 'Save OIDC settings' }).click();
            await card.getByRole('alert').filter({ hasText: 'Must use https (http only on loopback)' }).waitFor();
            expect(await card.getByLabel(/^Issuer/).getAttribute('aria-invalid')).to.equal('true');

            const clientSecret = 'client-secret-that-never-shows-4711';
            await card.getByLabel(/^Issuer/).fill(discovery.issuer);
            await card.getByLabel(/^Client ID/).fill('gatehouse');
            await card.getByLabel(/^Client secret/).fill(clientSecret);
            await card.getByLabel('Let people sign in through the provider').check();
            await card.getByRole('button', { name: 'Save OIDC settings' }).click();
            await card.getByText('set', { exact: true }).waitFor();
            await card.getByLabel(/^New client secret/).waitFor();
            expect(await card.getByLabel(/^New client secret/).inputValue()).to.equal('');
            expect(await page.content()).to.not.contain(clientSecret);
            const stored = (await web.admin?.get('/api/admin/oidc'))?.body as {
                enabled: boolean;
                issuer: string;
                hasClientSecret: boolean;
            };
            expect(stored).to.include({ enabled: true, issuer: discovery.issuer, hasClientSecret: true });

            await card.getByRole('button', { name: 'Test the issuer' }).click();
            await card.getByText(`its sign-in page is ${discovery.issuer}authorize`).waitFor();
            await screenshot(page, 'admin-oidc');

            await card.getByLabel(/^Issuer/).fill('http://127.0.0.1:9/');
            await card.getByRole('button', { name: 'Test the issuer' }).click();
            await card
                .getByRole('alert')
                .filter({ hasText: "The test failed: the issuer's discovery document could not be read" })
                .waitFor();

            await card.getByLabel('Let people sign in through the provider').uncheck();
            await card.getByLabel(/^Issuer/).fill(discovery.issuer);
            await card.getByLabel('Remove the client secret').check();
            await card.getByRole('button', { name: 'Save OIDC settings' }).click();
            await card.getByText('not set', { exact: true }).waitFor();
            const removed = (await web.admin?.get('/api/admin/oidc'))?.body as { enabled: boolean; hasClientSecret: boolean };
            expect(removed).to.include({ enabled: false, hasClientSecret: false });
        } finally {
            await discovery.close();
        }
    });

    it('connects the identity provider with a bootstrap token, disconnects, and connects again with discovered choices', async () => {
        const authentik = await startAuthentikStandIn();
        try {
            authentik.addUser({ username: 'operator', password: 'operator-password', isSuperuser: true });
            const operatorToken = authentik.addToken({ username: 'operator', identifier: 'operator-api' });
            const admin = await web.signInAs('admin');
            const { page } = admin;
            const problems = watchPage(page);
            await page.goto(`${web.baseUrl}/admin/idp`);
            const connection = region(page, 'Connection');
            await connection.getByText('not connected', { exact: true }).waitFor();
            await checkAccessibility(page);

            const bootstrap = region(page, 'Connect with a bootstrap token');
            await bootstrap.getByLabel(/^authentik URL/).fill(authentik.url);
            await bootstrap.getByLabel(/^Bootstrap token/).fill('not-a-token');
            await bootstrap.getByRole('button', { name: 'Connect with the bootstrap token' }).click();
            await bootstrap.getByRole('alert').waitFor();
            expect(await connection.getByText('not connected', { exact: true }).count()).to.equal(1);

            await bootstrap.getByLabel(/^Bootstrap token/).fill(authentik.bootstrapToken);
            await bootstrap.getByRole('button', { name: 'Connect with the bootstrap token' }).click();
            await connection.getByText('connected', { exact: true }).waitFor();
            await connection.getByText('Connected with a token of Gatehouse’s own.').waitFor();
            await connection.getByText('ok', { exact: true }).waitFor();
            await connection.getByText('default-provider-authorization-implicit-consent').waitFor();
            expect(await bootstrap.getByLabel(/^Bootstrap token/).inputValue()).to.equal('');
            expect(await page.content()).to.not.contain(authentik.bootstrapToken);
            expect(authentik.state.tokens.map((token) => token.identifier)).to.include('gatehouse-deploy-manager');
            await checkAccessibility(page);
            await screenshot(page, 'admin-idp');

            await connection.getByRole('button', { name: 'Disconnect…' }).click();
            await connection.getByRole('button', { name: 'Disconnect', exact: true }).click();
            await connection.getByText('The token was revoked at the provider.').waitFor();
            await connection.getByText('not connected', { exact: true }).waitFor();
            expect(authentik.state.tokens.map((token) => token.identifier)).to.not.include('gatehouse-deploy-manager');

            const connect = region(page, 'Connect with an API token');
            // The kind is chosen among those the server has; the saved one is chosen.
            const kinds = connect.getByLabel('Kind of provider');
            expect(await kinds.inputValue()).to.equal('authentik');
            expect(await kinds.locator('option').allTextContents()).to.equal(['authentik']);
            expect(await connect.getByLabel(/^authentik URL/).inputValue()).to.equal(authentik.url);
            await connect.getByLabel(/^API token/).fill('a-wrong-token');
            await connect.getByRole('button', { name: 'Discover' }).click();
            await connect.getByRole('alert').waitFor();
            expect(await connect.getByRole('group').count()).to.equal(0);

            await connect.getByLabel(/^API token/).fill(operatorToken);
            await connect.getByRole('button', { name: 'Discover' }).click();
            const choices = connect.getByRole('group', { name: /choices/ });
            await choices.waitFor();
            await choices.getByLabel('Outpost', { exact: true }).selectOption({ index: 1 });
            const authorizationFlow = choices.getByLabel('Authorization flow');
            const explicitConsent = await authorizationFlow.locator('option', { hasText: 'explicit-consent' }).getAttribute('value');
            await authorizationFlow.selectOption(explicitConsent ?? '');
            await checkAccessibility(page);
            await connect.getByRole('button', { name: 'Connect', exact: true }).click();
            await connection.getByText('Connection saved.').waitFor();
            await connection.getByText('connected', { exact: true }).waitFor();
            await connection.getByText('default-provider-authorization-explicit-consent').waitFor();
            expect(await connect.getByLabel(/^API token/).inputValue()).to.equal('');
            expect(await page.content()).to.not.contain(operatorToken);
            const saved = (await web.admin?.get('/api/admin/idp'))?.body as { connected: boolean; authorizationFlow: { slug: string } };
            expect(saved.connected).to.be.true();
            expect(saved.authorizationFlow.slug).to.equal('default-provider-authorization-explicit-consent');
            expect(authentik.violations).to.equal([]);
            expect(problems.list()).to.equal([]);
        } finally {
            await authentik.close();
        }
    });

    it('shows the system: tools, integration health and conventions', async () => {
        const admin = await web.signInAs('admin');
        const { page } = admin;
        await page.goto(`${web.baseUrl}/admin/system`);
        const integrations = region(page, 'Integrations');
        await integrations.waitFor();
        for (const name of [
            'Docker engine',
            'nginx',
            'Certificates (ACME)',
            'Image registry',
            'DNS',
            'Identity provider',
            'OIDC sign-in',
        ]) {
            await integrations.getByRole('heading', { name, exact: true }).waitFor();
        }

        // The dashboard's words for the same checks: nginx's default configuration does not include the apps' sites.
        const nginx = integrations.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'nginx', exact: true }) });
        expect(await nginx.locator('.integration-state').textContent()).to.equal("Problem Does not include the apps' sites");
        const docker = integrations
            .getByRole('listitem')
            .filter({ has: page.getByRole('heading', { name: 'Docker engine', exact: true }) });
        expect(await docker.locator('.integration-state').textContent()).to.match(/^Working Version /);
        await region(page, 'Tools on the host').getByText('git', { exact: true }).waitFor();
        await region(page, 'Conventions').getByText(`${web.baseUrl}/`).waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'admin-system');
    });
});
