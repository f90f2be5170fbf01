import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { idpConnection } from '../../../../../plugins/idp/connection-service.ts';
import { applyAccess, applyMethodAtProvider, ProviderUndo } from '../../../../../plugins/deploy/domain/engine/access-steps.ts';
import { type AppRunData, RunContext } from '../../../../../plugins/deploy/domain/engine/run-context.ts';
import { undoFromJournal } from '../../../../../plugins/deploy/domain/engine/run-recovery.ts';
import type { RunMessage } from '../../../../../plugins/deploy/domain/runs/run-service.ts';
import type { MethodSettings } from '../../../../../plugins/sso/method-types.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';
import { type AuthentikStandIn, startAuthentikStandIn } from '../../../../support/authentik/index.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

type Json = Record<string, unknown>;

/**
 * The identity provider's side of a run (forward auth, then a sign-in method's objects) against the authentik
 * stand-in, without Docker: each request the step makes is failed in turn, and the run's undo must leave the
 * provider as it was before the run.
 */
describe('deploy runs: what a failed provider step made at the identity provider is undone', { timeout: 120_000 }, () => {
    let authentik: AuthentikStandIn;
    let test: TestServer;
    let groupPks: string[];

    before(async () => {
        authentik = await startAuthentikStandIn();
        groupPks = [authentik.addGroup('undo-readers'), authentik.addGroup('undo-writers')];
        test = await createTestServer();
        await idpConnection(test.server).connect({ url: authentik.url, token: authentik.bootstrapToken });
    });

    after(async () => {
        await test?.cleanup();
        await authentik?.close();
    });

    const uniqueApp = (prefix: string) => `${prefix}${Crypto.randomBytes(3).toString('hex')}`;

    /** The method's settings; `changed`: other ones (another port, ACS and admin), as a sign-in change would bring. */
    function settingsFor(app: string, method: 'oidc' | 'saml', changed = false): MethodSettings {
        const origin = changed ? `https://${app}.apps.test:8443` : `https://${app}.apps.test`;
        const common = { app, domain: `${app}.apps.test`, origin };
        if (method === 'saml') {
            return { ...common, samlAcs: changed ? '/saml/acs-2' : '/saml/acs', samlAudience: `${origin}/saml/metadata` };
        }

        const endpoints = { issuer: 'unused', configUrl: 'unused', logoutUrl: 'unused' };
        const adminUser = changed ? 'clerk' : 'akadmin';
        return { ...common, adminUser, oidc: { endpoints, clientId: `id-${app}`, clientSecret: `secret-${app}` } };
    }

    async function runContext(app: string, groups: string[], method?: 'oidc' | 'saml', runId = 1, changed = false) {
        const connection = await idpConnection(test.server).active();
        if (!connection) {
            throw new Error('the test server is not connected to the stand-in');
        }

        const messages: RunMessage[] = [];
        const data: AppRunData = {
            runId,
            app,
            kind: method ? 'sso' : 'deploy',
            domain: `${app}.apps.test`,
            access: { connection, title: `App ${app}`, groups },
            ...(method ? { signIn: { method, settings: settingsFor(app, method, changed) } } : {}),
        };
        const context = new RunContext(
            test.config,
            data,
            () => Promise.resolve(test.server.app.knex),
            (message) => messages.push(message),
        );
        return { context, messages };
    }

    /** The provider's objects at the stand-in, as a run step works them out: forward auth, then the method's. */
    async function providerStep(app: string, groups: string[], method?: 'oidc' | 'saml'): Promise<{ undo: ProviderUndo; failure?: Error }> {
        const { context } = await runContext(app, groups, method);
        const undo = new ProviderUndo();
        try {
            const applied = await applyAccess(context, true, undo);
            await applyMethodAtProvider(context, applied, undo);
            return { undo };
        } catch (error) {
            return { undo, failure: error as Error };
        }
    }

    /** Everything at the stand-in that belongs to the app: `dp-<app>*` objects, their bindings and outpost entries. */
    function objectsOf(app: string): Json {
        const state = authentik.state;
        const mine = (name: unknown) => String(name).startsWith(`dp-${app}`);
        const providers = state.providers.filter((provider) => mine(provider.name));
        const applications = state.applications.filter((application) => mine(application.slug));
        const providerPks = providers.map((provider) => provider.pk);
        const applicationPks = applications.map((application) => application.pk);
        return {
            providers: providers.map(({ pk, name, external_host, redirect_uris, acs_url }) => ({
                pk,
                name,
                external_host,
                redirect_uris,
                acs_url,
            })),
            applications: applications.map(({ slug, name, provider, meta_launch_url }) => ({ slug, name, provider, meta_launch_url })),
            bindings: state.bindings
                .filter((binding) => applicationPks.includes(binding.target))
                .map(({ target, group }) => ({ target, group }))
                .sort((a, b) => String(a.group).localeCompare(String(b.group))),
            outposts: state.outposts.flatMap((outpost) => (outpost.providers as number[]).filter((pk) => providerPks.includes(pk))),
            mappings: state.scopeMappings.filter((mapping) => mine(mapping.name)).map(({ name, expression }) => ({ name, expression })),
        };
    }

    const nothing = { providers: [], applications: [], bindings: [], outposts: [], mappings: [] };

    async function recorded(app: string): Promise<string[]> {
        return (await test.server.app.knex('dp_app_resources').where({ app_name: app, kind: 'access' }).select('name')).map((row) =>
            String(row.name),
        );
    }

    /** How many API requests the step makes when nothing fails (then undone, leaving nothing). */
    async function requestsOfStep(prepare: (app: string) => Promise<void>, method?: 'oidc' | 'saml'): Promise<number> {
        const app = uniqueApp('count');
        await prepare(app);
        const first = authentik.requests.length;
        const clean = await providerStep(app, groupPks, method);
        expect(clean.failure).to.not.exist();
        const count = authentik.requests.slice(first).filter((request) => request.path.startsWith('/api/v3/')).length;
        await clean.undo.run();
        return count;
    }

    /** Fails the step's 1st, 2nd... request in turn; after each failure the undo leaves the app's objects as `prepare` left them. */
    async function failEachRequest(prepare: (app: string) => Promise<void>, method?: 'oidc' | 'saml'): Promise<number> {
        const count = await requestsOfStep(prepare, method);
        expect(count).to.be.above(5);
        for (let nth = 1; nth <= count; nth += 1) {
            const app = uniqueApp(`fail${nth}x`);
            await prepare(app);
            const before = objectsOf(app);
            const recordedBefore = await recorded(app);
            authentik.failures.add({ path: /^\//, nth, status: 500 });
            const step = await providerStep(app, groupPks, method);
            expect(authentik.failures.pending, `request ${nth} of ${count} was not made`).to.equal(0);
            expect(step.failure?.message, `request ${nth} of ${count}`).to.contain('authentik answered 500');
            await step.undo.run();
            expect(objectsOf(app), `after a failure at request ${nth} of ${count}`).to.equal(before);
            expect(await recorded(app), `the ledger after a failure at request ${nth} of ${count}`).to.equal(recordedBefore);
        }

        expect(authentik.violations).to.equal([]);
        return count;
    }

    const newApp = () => Promise.resolve();

    /** The app deployed before, with one group, so that the run updates its forward-auth objects and binds other groups. */
    const deployedApp = async (app: string) => {
        const deployed = await providerStep(app, groupPks.slice(0, 1));
        expect(deployed.failure).to.not.exist();
    };

    it('a new app: a failure at each request of the forward-auth step leaves no dp-<app> object, binding or outpost entry', async () => {
        const count = await failEachRequest(newApp);
        expect(count).to.be.above(8);
    });

    it('a deployed app: a failure at each request of its forward-auth update puts its objects back as they were', async () => {
        await failEachRequest(deployedApp);
    });

    it("a deployed app: a server killed at each request of its forward-auth update is put back from the run's journal", async () => {
        const count = await requestsOfStep(deployedApp);
        for (let nth = 1; nth <= count; nth += 1) {
            const app = uniqueApp(`kill${nth}x`);
            await deployedApp(app);
            const before = objectsOf(app);
            // A run of its own, whose journal holds only this step; over plain HTTP, so the provider's host changes too.
            const { context } = await runContext(app, groupPks, undefined, Crypto.randomInt(1_000_000, 2_000_000_000));
            authentik.failures.add({ path: /^\//, nth, status: 500 });
            await expect(applyAccess(context, false, new ProviderUndo()), `request ${nth} of ${count}`).to.reject(/authentik answered 500/);
            const recovery = await undoFromJournal(context);
            expect(recovery.failed, `after a kill at request ${nth} of ${count}`).to.equal([]);
            expect(objectsOf(app), `after a kill at request ${nth} of ${count}`).to.equal(before);
        }

        expect(authentik.violations).to.equal([]);
    });

    /**
     * The app deployed with the method, then a change of its settings killed (the server gone, no undo in the
     * process) at each request in turn: the server that takes the run over puts the provider back from the journal.
     */
    async function killEachRequestOfChange(method: 'oidc' | 'saml'): Promise<void> {
        const withMethod = async (app: string) => {
            const deployed = await providerStep(app, groupPks.slice(0, 1), method);
            expect(deployed.failure).to.not.exist();
        };
        const counting = uniqueApp('killcount');
        await withMethod(counting);
        const first = authentik.requests.length;
        const { context: dry } = await runContext(counting, groupPks, method, Crypto.randomInt(1_000_000, 2_000_000_000), true);
        await applyMethodAtProvider(dry, await applyAccess(dry, true, new ProviderUndo()), new ProviderUndo());
        const count = authentik.requests.slice(first).filter((request) => request.path.startsWith('/api/v3/')).length;
        expect(count).to.be.above(5);
        for (let nth = 1; nth <= count; nth += 1) {
            const app = uniqueApp(`kill${method}${nth}x`);
            await withMethod(app);
            const before = objectsOf(app);
            const { context } = await runContext(app, groupPks, method, Crypto.randomInt(1_000_000, 2_000_000_000), true);
            authentik.failures.add({ path: /^\//, nth, status: 500 });
            const killed = async () =>
                await applyMethodAtProvider(context, await applyAccess(context, true, new ProviderUndo()), new ProviderUndo());
            await expect(killed(), `request ${nth} of ${count}`).to.reject(/authentik answered 500/);
            const journal = await test.server.app.knex('dp_run_journal').where({ run_id: context.data.runId }).select('entry');
            expect(journal.map((row) => String(row.entry)).join('\n'), 'the journal holds no secret').to.not.contain(`secret-${app}`);
            const recovery = await undoFromJournal(context);
            expect(recovery.failed, `after a kill at request ${nth} of ${count}`).to.equal([]);
            expect(objectsOf(app), `after a kill at request ${nth} of ${count}`).to.equal(before);
        }

        expect(authentik.violations).to.equal([]);
    }

    it('a changed OpenID Connect sign-in killed at each request is put back from the journal: client, claim mapping, application', async () => {
        await killEachRequestOfChange('oidc');
    });

    it('a changed SAML sign-in killed at each request is put back from the journal: provider and application', async () => {
        await killEachRequestOfChange('saml');
    });

    it('a sign-in change to OpenID Connect: a failure at each request leaves no client, claim mapping or application behind', async () => {
        await failEachRequest(deployedApp, 'oidc');
    });

    it('a sign-in change to SAML: a failure at each request leaves no SAML provider or application behind', async () => {
        await failEachRequest(deployedApp, 'saml');
    });

    it('the run says what it undid, and a step that fails before making anything undoes nothing', async () => {
        const app = uniqueApp('said');
        authentik.failures.add({ method: 'PATCH', path: /^\/outposts\/instances\//, status: 500 });
        const step = await providerStep(app, groupPks);
        expect(step.failure?.message).to.contain(`authentik answered 500 while setting up dp-${app}`);
        expect(objectsOf(app)).to.not.equal(nothing);
        expect(await step.undo.run()).to.equal(`removed dp-${app} from the identity provider`);
        expect(objectsOf(app)).to.equal(nothing);

        const untouched = uniqueApp('none');
        authentik.failures.add({ path: /^\/providers\/proxy\//, status: 500 });
        const early = await providerStep(untouched, groupPks);
        expect(early.failure).to.exist();
        expect(await early.undo.run()).to.equal(`dp-${untouched} had not been changed at the identity provider`);
        expect(await recorded(untouched)).to.equal([]);
    });
});
