// needs: docker, chromium
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Page } from 'playwright-core';
import YAML from 'yaml';

import type { Browser } from '../helpers/browser.ts';
import { appHostPorts, temporaryDirectory } from '../helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../support/authentik/index.ts';
import { type DockerHubStandIn, startDockerHub } from '../support/docker-hub.ts';
import { buildWebImage, removeProjects } from '../support/images.ts';
import { type RunningServices, startServices } from '../support/services.ts';
import { runToEnd } from '../support/sse.ts';
import {
    ADMIN_ACCOUNT,
    checkAccessibility,
    type PageProblems,
    screenshot,
    startWebServer,
    watchPage,
    type WebServer,
    goLeavingUnsaved,
    waitShowing,
} from './harness.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const BASE_DOMAIN = 'apps.test';
// Unique among the files that run at once on the one Docker engine (npm test runs files in parallel).
const APP = `storefront-${Math.random().toString(36).slice(2, 8)}`;
const RUN_TIMEOUT_MS = 240_000;
/** The two groups the access step ticks, in the directory's order; the stand-in also has its administrators' group. */
const TEAM = `${APP}-team`;
const TEAMS = ['accounting', TEAM];
const ADMINS_GROUP = 'authentik Admins';
/**
 * Each test's own app: a draft the test takes on at the step it looks at, as the steps before would have left it.
 * The access step's is APP itself, the group ${APP}-team named like it; the name step's is never made.
 */
const NAMES = {
    name: `${APP}-named`,
    image: `${APP}-made`,
    signIn: `${APP}-signin`,
    access: APP,
    compose: `${APP}-compose`,
    nginx: `${APP}-nginx`,
    secrets: `${APP}-secrets`,
    preview: `${APP}-preview`,
    deploy: `${APP}-deploy`,
    changeSignIn: `${APP}-header`,
};
/** The steps a draft keeps, in the wizard's order. */
const DRAFT_STEPS = ['sign-in', 'access', 'compose', 'nginx', 'secrets', 'preview', 'deploy'] as const;
type DraftStep = (typeof DRAFT_STEPS)[number];

/** The compose file with GREETING=${GREETING} in its first service, as the compose step's test adds it. */
function withGreeting(compose: string): string {
    const document = YAML.parseDocument(compose);
    const services = document.get('services') as YAML.YAMLMap<YAML.Scalar<string>, unknown>;
    const first = services.items[0]?.key.value ?? '';
    document.setIn(['services', first, 'environment', 'GREETING'], '${GREETING}');
    return document.toString();
}

/** A recipe for the test image: its evidence (documented, with a source) and a catalog template. */
function recipeFor(repository: string): string {
    return [
        `image: ${repository}`,
        'title: Web UI test app',
        'description: A static page served by busybox httpd',
        'method: header',
        'level: documented',
        'sources: ["https://example.org/webui/sign-in"]',
        'compose: |',
        '  services:',
        '    web:',
        '      image: {{IMAGE}}',
        '      restart: unless-stopped',
        '      ports:',
        '        - "127.0.0.1:{{PORT}}:80"',
        '',
    ].join('\n');
}

interface AppAnswer {
    app: {
        state: string;
        url: string;
        draft: {
            step?: string;
            compose: string;
            account?: string;
            adminUser?: string;
            secrets: Record<string, string>;
            auth?: { groups?: Array<{ name: string }>; access?: string };
        };
        access: { mode: string; groups: Array<{ name: string }> };
    };
}

describe('web UI: the new-app wizard, from a name to a deployed app', { timeout: 900_000 }, () => {
    let services: RunningServices;
    let authentik: AuthentikStandIn;
    let web: WebServer;
    let page: Page;
    let problems: PageProblems;
    let image: string;
    let recipeDir: string;
    let hub: DockerHubStandIn;
    const teams: Record<string, string> = {};

    const admin = () => web.admin as Browser;
    const appAnswer = async (name: string) => (await admin().get(`/api/apps/${name}`)).body as AppAnswer;
    const stepHeading = (name: string) => page.getByRole('heading', { level: 2, name });
    /** Waits for the wizard to show the step; when it does not, the failure says what the page shows instead. */
    const waitForStep = async (name: string) => await waitShowing(page, stepHeading(name), `the step "${name}"`);
    const next = async (label: RegExp) => await page.getByRole('button', { name: label }).click();

    const go = async (url: string) => await goLeavingUnsaved(page, url);

    /**
     * Makes the draft `name` as the wizard leaves it on reaching `step`, through the API: made from the typed image,
     * the app's own login chosen, the two groups and boss as its admin, GREETING in the compose file and a value for
     * it. Each test that saves a step has a draft of its own.
     */
    const draftAt = async (name: string, step: DraftStep) => {
        const created = await admin().post('/api/apps', { name, image: image.replace(/:1$/, ''), tag: '1' });
        expect(created.status, created.text).to.equal(201);
        const past = (done: DraftStep) => DRAFT_STEPS.indexOf(step) > DRAFT_STEPS.indexOf(done);
        const fields: Record<string, unknown> = { step };
        if (past('sign-in')) {
            fields.account = 'own';
        }

        if (past('access')) {
            const groups = TEAMS.map((group) => ({ pk: teams[group], name: group }));
            const access = await admin().put(`/api/apps/${name}/access`, { groups });
            expect(access.status, access.text).to.equal(200);
            Object.assign(fields, { adminUser: 'boss', auth: { access: 'groups' } });
        }

        if (past('compose')) {
            fields.compose = withGreeting((created.body as AppAnswer).app.draft.compose);
        }

        if (past('secrets')) {
            fields.secrets = { GREETING: Crypto.randomBytes(18).toString('base64url') };
        }

        const saved = await admin().put(`/api/apps/${name}/draft`, fields);
        expect(saved.status, saved.text).to.equal(200);
    };

    /** A draft of its own at `step`, its wizard open there. */
    const openDraftAt = async (name: string, step: DraftStep, heading: string) => {
        await draftAt(name, step);
        await go(`${web.baseUrl}/apps/new?app=${name}`);
        await waitForStep(heading);
    };

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/webui:1`, '<h1>webui v1</h1>\n', true);
        authentik = await startAuthentikStandIn();
        authentik.addUser({ username: 'operator', password: 'operator-password', isSuperuser: true });
        for (const name of TEAMS) {
            teams[name] = authentik.addGroup(name);
        }

        authentik.addUser({
            username: 'boss',
            password: 'boss-password',
            email: 'boss@example.com',
            name: 'Bo Ss',
            groups: [TEAM],
        });
        const token = authentik.addToken({ username: 'operator', identifier: 'operator-api' });
        // Sites keep their stand-in certificates: this test is about the wizard, not ACME.
        const { ACME_DIRECTORY_URL: _acme, ACME_CA_FILE: _ca, ...withoutAcme } = services.exports;
        hub = await startDockerHub();
        recipeDir = temporaryDirectory('gatehouse-recipes-');
        Fs.writeFileSync(Path.join(recipeDir, 'webui.yaml'), recipeFor(image.replace(/:1$/, '')));
        web = await startWebServer({
            ...withoutAcme,
            BASE_DOMAIN,
            APPS_FIRST_HOST_PORT: String(await appHostPorts()),
            RECIPES_DIRS: recipeDir,
            HUB_URL: hub.url,
            // Docker Hub's registry is not reachable from the tests: a closed loopback port stands for it.
            HUB_REGISTRY_URL: 'http://127.0.0.1:9',
        });
        const connected = await web.admin?.put('/api/admin/idp', { url: authentik.url, token });
        expect(connected?.status, connected?.text).to.equal(200);
        const browser = await web.openBrowser();
        page = browser.page;
        problems = watchPage(page);
        await web.signInBrowser(browser.context, ADMIN_ACCOUNT.email, ADMIN_ACCOUNT.password);
    });

    after(async () => {
        await removeProjects([NAMES.deploy, NAMES.changeSignIn], image ? [image] : []);
        await web?.stop();
        await authentik?.close();
        await hub?.stop();
        services?.stop();
        if (recipeDir) {
            Fs.rmSync(recipeDir, { recursive: true, force: true });
        }
    });

    it('checks the name live and refuses one that is taken', async () => {
        const app = NAMES.name;
        await web.admin?.post('/api/apps', { name: 'taken', image: 'nginx', tag: '1.27' });
        await go(`${web.baseUrl}/apps/new`);
        await page.getByRole('heading', { level: 1, name: 'New app' }).waitFor();
        const name = page.getByLabel('Name (required)');
        await name.fill('taken');
        await page.getByText('taken cannot be used.').waitFor();
        expect(await page.getByText('an app named taken exists').first().isVisible()).to.be.true();
        expect(await page.getByRole('button', { name: 'Next: the image' }).isDisabled()).to.be.true();

        await name.fill(app);
        await page.getByText(`${app} is free: the app will live at ${app}.${BASE_DOMAIN}.`).waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'new-app-1-name');
        await next(/^Next: the image$/);
        await waitForStep('Image');
    });

    it('lists the catalog, then takes a typed image and a tag listed from its registry', async () => {
        const app = NAMES.image;
        await go(`${web.baseUrl}/apps/new`);
        await page.getByLabel('Name (required)').fill(app);
        await page.getByText(`${app} is free`).waitFor();
        await next(/^Next: the image$/);
        await waitForStep('Image');
        await page.getByLabel('From the catalog').check();
        const template = page.getByRole('list', { name: 'Templates' }).getByRole('listitem').filter({ hasText: 'Web UI test app' });
        await template.waitFor();
        expect(await template.textContent()).to.contain('documented');
        await template.getByRole('button', { name: 'Use this template: Web UI test app' }).click();
        await page.getByText('The app will be made from the template Web UI test app.').waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'new-app-2-catalog');

        await page.getByLabel('Search Docker Hub').check();
        await page.getByRole('searchbox', { name: 'Search Docker Hub' }).fill('nginx');
        await page.getByRole('button', { name: 'Search', exact: true }).click();
        const found = page.getByRole('list', { name: /repositories found$/ }).getByRole('listitem');
        await found.first().waitFor();
        expect(await found.first().textContent()).to.contain('official');
        await page.getByRole('button', { name: 'Choose nginx', exact: true }).click();
        expect(await page.getByRole('textbox', { name: 'Image', exact: true }).inputValue()).to.equal('nginx');
        await page.getByRole('button', { name: 'List the tags of nginx' }).click();
        await page.getByLabel(/^Tags of /).selectOption('1.27');
        await page.getByText('The app will run nginx:1.27.').waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'new-app-3-hub');

        await page.getByLabel('Type an image').check();
        const repository = image.replace(/:1$/, '');
        await page.getByRole('textbox', { name: 'Image', exact: true }).fill(repository);
        await page.getByRole('button', { name: /^List the tags of/ }).click();
        const tags = page.getByLabel(/^Tags of /);
        await tags.waitFor();
        await tags.selectOption('1');
        await page.getByText(`The app will run ${repository}:1.`).waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'new-app-3-typed-image');
        await next(/^Create the draft$/);
        await page.waitForURL(`${web.baseUrl}/apps/new?app=${app}`);
        await waitForStep('Sign-in method');
        expect((await appAnswer(app)).app.draft.step).to.equal('sign-in');
    });

    it('shows the sign-in methods in the API order with their evidence, the rest behind "Show all methods", the own login apart', async () => {
        const app = NAMES.signIn;
        await openDraftAt(app, 'sign-in', 'Sign-in method');
        const sso = page.getByRole('group', { name: 'Single sign-on through the identity provider' });
        await sso.waitFor();
        const header = sso.locator('li[data-method="header"]');
        expect(await header.textContent()).to.contain('documented');
        expect(await header.getByRole('link').getAttribute('href')).to.equal('https://example.org/webui/sign-in');
        expect(
            await sso.getByRole('radio', { name: /^The app's recipe decides \(Web UI test app: Username from the proxy\)/ }).isChecked(),
        ).to.be.true();

        const showAll = page.getByRole('button', { name: /^Show all methods/ });
        expect(await showAll.getAttribute('aria-expanded')).to.equal('false');
        const hidden = page.getByRole('radio', { name: /OpenID Connect/ });
        expect(await hidden.isVisible()).to.be.false();
        await showAll.click();
        expect(await page.getByRole('button', { name: 'Show fewer methods' }).getAttribute('aria-expanded')).to.equal('true');
        expect(await hidden.isVisible()).to.be.true();

        const own = page.getByRole('group', { name: "The app's own login (not single sign-on)" });
        expect(await own.getByRole('radio').count()).to.equal(1);
        await own.getByRole('radio').check();

        await page.getByText(`The evidence for ${image}`).click();
        await page.getByText(/^Recipe Web UI test app \(Username from the proxy, documented\), matched by/).waitFor({ timeout: 60_000 });
        await checkAccessibility(page);
        await screenshot(page, 'new-app-4-sign-in');
        await next(/^Save and continue: access and admin account$/);
        await waitForStep('Access and admin account');
        expect((await appAnswer(app)).app.draft.account).to.equal('own');
    });

    it('ticks the suggested groups at first, keeps two ticked groups through "Save and continue" and a reload, the hint following the ticks', async () => {
        const app = NAMES.access;
        await openDraftAt(app, 'access', 'Access and admin account');
        const ticked = (name: string) => page.getByRole('checkbox', { name, exact: true });
        const hint = page.locator('.access-hint');
        await ticked(TEAM).waitFor();
        expect(await page.getByText(/suggested: named like the app/).count()).to.equal(1);
        expect(await ticked(TEAM).isChecked()).to.be.true();
        expect(await ticked(ADMINS_GROUP).isChecked()).to.be.true();
        expect(await ticked('accounting').isChecked()).to.be.false();

        for (const name of [TEAM, ADMINS_GROUP]) {
            await ticked(name).uncheck();
        }

        expect(await hint.textContent()).to.equal('No group chosen: every user the identity provider knows gets in.');
        // No group lets every user in: the wizard asks for that to be said, and does not go on without it.
        const consent = page.getByRole('checkbox', { name: /^Let every user of the identity provider in: no group is chosen/ });
        expect(await consent.isChecked()).to.be.false();
        await page.getByRole('button', { name: /^Save and continue: compose file$/ }).click();
        await page.getByText('Choose at least one group, or tick the box to let every user of the identity provider in.').waitFor();
        expect(await stepHeading('Access and admin account').count()).to.equal(1);
        for (const name of TEAMS) {
            await ticked(name).check();
        }

        expect(await hint.textContent()).to.equal(`Only members of ${TEAMS.join(', ')} get in.`);
        expect(await consent.count()).to.equal(0);
        // What was said about no group chosen goes once groups are ticked.
        expect(await page.getByText('Choose at least one group, or tick the box').count()).to.equal(0);
        await page.getByLabel('Admin account in the app (a user of the identity provider)').fill('bo');
        await page.getByRole('button', { name: 'Use boss' }).click();
        await page.getByText("The app's admin: boss.").waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'new-app-5-access');
        await next(/^Save and continue: compose file$/);
        await waitForStep('Compose file');
        const saved = await appAnswer(app);
        expect(saved.app.draft.adminUser).to.equal('boss');
        expect(saved.app.draft.auth?.groups?.map((group) => group.name)).to.equal(TEAMS);
        expect(saved.app.access.groups.map((group) => group.name)).to.equal(TEAMS);
        expect(saved.app.access.mode).to.equal('groups');
        expect(saved.app.draft.auth?.access).to.equal('groups');

        await page.reload();
        await waitForStep('Compose file');
        await page.getByRole('button', { name: /Access and admin account$/ }).click();
        await waitForStep('Access and admin account');
        await ticked(TEAM).waitFor();
        expect(await ticked(TEAM).isChecked()).to.be.true();
        expect(await ticked('accounting').isChecked()).to.be.true();
        expect(await ticked(ADMINS_GROUP).isChecked()).to.be.false();
        expect(await hint.textContent()).to.equal(`Only members of ${TEAMS.join(', ')} get in.`);
        await next(/^Save and continue: compose file$/);
        await waitForStep('Compose file');
    });

    it('edits the compose file as a form, with its lint findings and their fixes', async () => {
        const app = NAMES.compose;
        await openDraftAt(app, 'compose', 'Compose file');
        const form = page.getByTestId('compose-model');
        await form.waitFor();
        expect(await form.getByLabel('Image', { exact: true }).inputValue()).to.equal(image);
        await form.getByRole('button', { name: 'Add a variable' }).click();
        await form.getByLabel('Name of variable 1').fill('GREETING');
        await form.getByLabel('Value of variable GREETING').fill('${GREETING}');
        await page.locator('.finding').filter({ hasText: 'no healthcheck' }).first().waitFor();
        expect(await page.locator('.finding-fix').count()).to.be.above(0);
        await checkAccessibility(page);
        await screenshot(page, 'new-app-6-compose');
        await next(/^Save and continue: nginx site$/);
        await waitForStep('nginx site');
    });

    it('shows the nginx site as a form and as text, checked with nginx -t', async () => {
        const app = NAMES.nginx;
        await openDraftAt(app, 'nginx', 'nginx site');
        const form = page.getByTestId('nginx-model');
        await form.waitFor();
        expect(await form.getByLabel('Server names').count()).to.equal(0);
        expect(await form.getByRole('textbox', { name: 'server name 1' }).inputValue()).to.equal(`${app}.${BASE_DOMAIN}`);
        await page.getByRole('button', { name: 'Text', exact: true }).click();
        const text = page.getByRole('textbox', { name: 'nginx site' });
        await text.waitFor();
        expect(await text.textContent()).to.contain(`server_name ${app}.${BASE_DOMAIN}`);
        await page.getByText('The nginx site: no findings.').waitFor({ timeout: 30_000 });
        expect(await page.locator('.cm-lint-marker').count()).to.equal(0);
        await checkAccessibility(page);
        await screenshot(page, 'new-app-7-nginx');
        await page.getByRole('button', { name: 'Form', exact: true }).click();
        await form.waitFor();
        await next(/^Save and continue: secrets$/);
        await waitForStep('Secrets');
    });

    it('generates the secret the compose file needs', async () => {
        const app = NAMES.secrets;
        await openDraftAt(app, 'secrets', 'Secrets');
        const name = page.getByLabel('Name', { exact: true });
        await name.waitFor();
        expect(await name.inputValue()).to.equal('GREETING');
        await page.getByRole('button', { name: 'Generate GREETING' }).click();
        const value = page.getByLabel('Value of GREETING');
        await page.waitForFunction(
            () => (document.querySelector<HTMLInputElement>('.secret-row input[type="password"]')?.value ?? '').length === 24,
        );
        expect(await value.getAttribute('type')).to.equal('password');
        await checkAccessibility(page);
        await screenshot(page, 'new-app-8-secrets');
        await next(/^Save and continue: preview$/);
        await waitForStep('Preview');
        expect((await appAnswer(app)).app.draft.secrets.GREETING).to.have.length(24);
    });

    it('previews what the deploy creates, with the secrets masked', async () => {
        const app = NAMES.preview;
        await openDraftAt(app, 'preview', 'Preview');
        const containers = page.getByRole('table', { name: 'Containers' });
        await containers.waitFor();
        expect(await containers.textContent()).to.contain(`${app}-app-1`);
        // What the deploy makes at the identity provider, with the groups chosen; the draft is no conflict of its own.
        const provider = page.getByRole('table', { name: 'At the identity provider' });
        expect(await provider.textContent())
            .to.contain(`dp-${app}`)
            .and.to.contain(`groups ${TEAMS.join(', ')} bound`);
        expect(await page.locator('.availability-checks').textContent()).to.contain("the name is this app's");
        await page.locator('.file-view summary').filter({ hasText: 'secrets.env' }).click();
        expect(await page.locator('.file-view pre').filter({ hasText: 'GREETING=' }).textContent()).to.contain('GREETING=••••••••');
        await checkAccessibility(page);
        await screenshot(page, 'new-app-9-preview');
        await next(/^Save and continue: deploy$/);
        await waitForStep('Deploy');
    });

    it('deploys with the live log visible, then opens the app page', async () => {
        const app = NAMES.deploy;
        await openDraftAt(app, 'deploy', 'Deploy');
        await page.getByRole('button', { name: 'Deploy', exact: true }).click();
        // A line while the run is still going: the log is followed live, not read afterwards.
        await page.locator('.run-log[data-state="running"] .run-line').first().waitFor();
        await page.locator('.run-log[data-state="succeeded"]').waitFor({ timeout: RUN_TIMEOUT_MS });
        const lines = await page.locator('.run-line-step').allTextContents();
        for (const step of ['files', 'containers', 'nginx', 'access']) {
            expect(lines, step).to.include(step);
        }

        // The log shows its end, the deploy is not offered again, and the app's address is a link.
        const log = page.locator('.run-log-lines');
        await page.waitForFunction(
            (element) => element !== null && element.scrollTop + element.clientHeight >= element.scrollHeight - 8,
            await log.elementHandle(),
        );
        expect(await page.getByRole('button', { name: /^Deploy/ }).count()).to.equal(0);
        const appLink = page.getByRole('status').getByRole('link', { name: /^https:\/\// });
        expect(await appLink.getAttribute('href')).to.equal((await appAnswer(app)).app.url);
        await checkAccessibility(page);
        await screenshot(page, 'new-app-10-deployed');
        const answer = await appAnswer(app);
        expect(answer.app.state).to.equal('running');
        expect(answer.app.access.mode).to.equal('groups');
        const application = authentik.state.applications.find((candidate) => candidate.slug === `dp-${app}`);
        const bound = authentik.state.bindings.filter((binding) => binding.target === application?.pk).map((binding) => binding.group);
        expect(bound.sort()).to.equal(TEAMS.map((name) => teams[name]).sort());

        await page.getByRole('link', { name: 'open its page' }).click();
        await page.waitForURL(`${web.baseUrl}/apps/${app}`);
        await page.getByRole('table', { name: 'Containers' }).getByRole('row', { name: /app/ }).waitFor();
        expect(problems.list()).to.equal([]);
    });

    it('changes the sign-in method on the account card, its run followed, then shows the values to copy', async () => {
        const app = NAMES.changeSignIn;
        // An app of its own, deployed as the wizard's deploy step does it (the app's own login), since this test changes it.
        await draftAt(app, 'deploy');
        const deployed = await runToEnd(admin(), await admin().post(`/api/apps/${app}/deploy`, { acceptRisks: false }));
        expect(deployed.state, deployed.text).to.equal('succeeded');
        await go(`${web.baseUrl}/apps/${app}`);
        await page.getByRole('link', { name: 'Sign-in', exact: true }).click();
        await page.getByText("Keep the app's own login").first().waitFor();
        await page.getByRole('button', { name: 'Change the method' }).click();
        await page.getByRole('radio', { name: /^Username from the proxy/ }).check();
        await checkAccessibility(page);
        await page.getByRole('button', { name: 'Apply the sign-in method' }).click();
        await page.locator('.run-log[data-state="running"]').waitFor();
        await page.locator('.run-log:not([data-state="running"])').waitFor({ timeout: RUN_TIMEOUT_MS });
        expect(await page.locator('.run-log').getAttribute('data-state')).to.equal('succeeded');
        expect(await page.locator('.run-line-step').allTextContents()).to.include('sign-in-method');

        const headers = page.locator('.identity-value[data-key="headers"]');
        await headers.waitFor();
        expect(await headers.textContent()).to.contain('Remote-User');
        expect(await headers.getByRole('button', { name: 'Copy Headers the app reads' }).count()).to.equal(1);
        await page.locator('p[data-check="true"]').waitFor();
        await checkAccessibility(page);
        await screenshot(page, 'new-app-11-sign-in-changed');
        expect((await appAnswer(app)).app.draft.account).to.equal('header');
    });

    it('a viewer cannot make apps', async () => {
        const viewer = await web.signInAs('viewer');
        await viewer.page.goto(`${web.baseUrl}/apps/new`);
        await viewer.page.getByText('Only editors and administrators make apps.').waitFor();
        expect(await viewer.page.getByLabel('Name (required)').count()).to.equal(0);
        await checkAccessibility(viewer.page);
    });
});
