import Crypto from 'node:crypto';

import {
    AdminApi,
    type ApiResponse,
    Configuration,
    CoreApi,
    CryptoApi,
    FetchError,
    FlowDesignationEnum,
    FlowsApi,
    IntentEnum,
    OutpostsApi,
    PoliciesApi,
    ProvidersApi,
    ProxyMode,
    ResponseError,
} from '@goauthentik/api';
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { type AuthentikStandIn, ForwardAuthBrowser, startAuthentikStandIn } from './authentik/index.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

type Json = Record<string, unknown>;

function clients(standIn: AuthentikStandIn, accessToken = standIn.bootstrapToken) {
    const configuration = new Configuration({ basePath: `${standIn.url}/api/v3`, accessToken });
    return {
        admin: new AdminApi(configuration),
        core: new CoreApi(configuration),
        crypto: new CryptoApi(configuration),
        flows: new FlowsApi(configuration),
        outposts: new OutpostsApi(configuration),
        policies: new PoliciesApi(configuration),
        providers: new ProvidersApi(configuration),
    };
}

type Clients = ReturnType<typeof clients>;

async function json<T = Json>(call: Promise<ApiResponse<unknown>>): Promise<T> {
    return (await (await call).raw.json()) as T;
}

/** The status and body of a call the server refused. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; body: Json }> {
    const error = (await expect(call).to.reject(ResponseError)) as ResponseError;
    return { status: error.response.status, body: (await error.response.json()) as Json };
}

async function flowPk(api: Clients, slug: string): Promise<string> {
    const page = await json<{ results: Json[] }>(api.flows.flowsInstancesListRaw({ slug }));
    return String(page.results[0]?.pk);
}

async function embeddedOutpost(api: Clients): Promise<Json> {
    const page = await json<{ results: Json[] }>(
        api.outposts.outpostsInstancesListRaw({ managedIexact: 'goauthentik.io/outposts/embedded' }),
    );
    return page.results[0] ?? {};
}

async function createProxyProvider(api: Clients, name: string, externalHost: string): Promise<Json> {
    return await json(
        api.providers.providersProxyCreateRaw({
            proxyProviderRequest: {
                name,
                mode: ProxyMode.ForwardSingle,
                externalHost,
                authorizationFlow: await flowPk(api, 'default-provider-authorization-implicit-consent'),
                invalidationFlow: await flowPk(api, 'default-provider-invalidation-flow'),
            },
        }),
    );
}

/** A forward-auth app as Gatehouse sets one up: provider, application, group bindings, then the outpost's list. */
async function protectApp(api: Clients, slug: string, externalHost: string, groups: string[]): Promise<Json> {
    const provider = await createProxyProvider(api, `dp-${slug}`, externalHost);
    const application = await json(
        api.core.coreApplicationsCreateRaw({
            applicationRequest: { name: slug, slug, provider: Number(provider.pk), metaLaunchUrl: externalHost },
        }),
    );
    for (const [order, group] of groups.entries()) {
        await api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target: String(application.pk), group, order } });
    }

    const outpost = await embeddedOutpost(api);
    const providers = [...(outpost.providers as number[]), Number(provider.pk)];
    await api.outposts.outpostsInstancesPartialUpdateRaw({ uuid: String(outpost.pk), patchedOutpostRequest: { providers } });
    return { provider, application };
}

async function postJson(standIn: AuthentikStandIn, path: string, body: unknown, method = 'POST'): Promise<{ status: number; body: Json }> {
    const response = await fetch(`${standIn.url}/api/v3${path}`, {
        method,
        headers: { authorization: `Bearer ${standIn.bootstrapToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
}

describe('authentik stand-in: admin API', () => {
    let standIn: AuthentikStandIn;
    let api: Clients;

    before(async () => {
        standIn = await startAuthentikStandIn();
        api = clients(standIn);
    });

    after(async () => {
        await standIn.close();
    });

    it('refuses a missing or unknown token with 403 and DRF detail, never 401', async () => {
        const unknown = await refusal(clients(standIn, 'not-a-token').core.coreUsersMeRetrieveRaw());
        expect(unknown).to.equal({ status: 403, body: { detail: 'Token invalid/expired' } });
        const missing = await fetch(`${standIn.url}/api/v3/core/users/me/`);
        expect(missing.status).to.equal(403);
        expect(await missing.json()).to.equal({ detail: 'Authentication credentials were not provided.' });
        expect(standIn.violations).to.equal([]);
    });

    it('starts as a fresh install: akadmin, version, default flows, keypair, embedded outpost', async () => {
        const me = await api.core.coreUsersMeRetrieve();
        expect(me.user.username).to.equal('akadmin');
        expect(me.user.isSuperuser).to.be.true();
        expect(me.users).to.have.length(1);
        expect((await api.admin.adminVersionRetrieve()).versionCurrent).to.equal('2026.8.3');
        const authorization = await api.flows.flowsInstancesList({ designation: FlowDesignationEnum.Authorization });
        expect(authorization.results.map((flow) => flow.slug).sort()).to.equal([
            'default-provider-authorization-explicit-consent',
            'default-provider-authorization-implicit-consent',
        ]);
        const invalidation = await api.flows.flowsInstancesList({
            designation: FlowDesignationEnum.Invalidation,
            slug: 'default-provider-invalidation-flow',
        });
        expect(invalidation.results).to.have.length(1);
        const keypairs = await api.crypto.cryptoCertificatekeypairsList({ hasKey: true });
        expect(keypairs.results.map((keypair) => keypair.name)).to.equal(['authentik Self-signed Certificate']);
        const outpost = await embeddedOutpost(api);
        expect(outpost).to.include({
            name: 'authentik Embedded Outpost',
            type: 'proxy',
            managed: 'goauthentik.io/outposts/embedded',
            providers: [],
        });
        expect((await api.core.coreTokensList({ identifier: 'authentik-bootstrap-token' })).results[0]).to.include({ expiring: false });
        expect(standIn.violations).to.equal([]);
    });

    it('gives a token of a user who is not a superuser 403 on the version and nothing to administer', async () => {
        standIn.addUser({ username: 'viewer', password: 'secret-1', groups: ['viewers'] });
        const viewer = clients(standIn, standIn.addToken({ username: 'viewer' }));
        const me = await json<{ user: Json }>(viewer.core.coreUsersMeRetrieveRaw());
        expect(me.user).to.include({ username: 'viewer', is_superuser: false });
        expect(await refusal(viewer.admin.adminVersionRetrieveRaw())).to.equal({
            status: 403,
            body: { detail: 'You do not have permission to perform this action.' },
        });
        expect((await viewer.core.coreGroupsList({})).results).to.equal([]);
        expect((await refusal(createProxyProvider(viewer, 'sneaky', 'https://sneaky.test'))).status).to.equal(403);
        expect(standIn.violations).to.equal([]);
    });

    it('creates, reads, patches and deletes a proxy provider', async () => {
        const created = await createProxyProvider(api, 'dp-wiki', 'https://wiki.apps.test:8443');
        expect(created).to.include({
            name: 'dp-wiki',
            mode: 'forward_single',
            external_host: 'https://wiki.apps.test:8443',
            outpost_set: [],
        });
        expect(created.pk).to.be.a.number();
        expect(created.client_id).to.match(/^[a-zA-Z0-9]{40}$/);
        expect(created).to.include({ component: 'ak-provider-proxy-form', meta_model_name: 'authentik_providers_proxy.proxyprovider' });
        const id = Number(created.pk);
        const found = await json<{ results: Json[] }>(api.providers.providersProxyListRaw({ nameIexact: 'DP-WIKI' }));
        expect(found.results.map((provider) => provider.pk)).to.equal([id]);
        const patched = await json(
            api.providers.providersProxyPartialUpdateRaw({
                id,
                patchedProxyProviderRequest: { mode: ProxyMode.ForwardSingle, externalHost: 'https://wiki.apps.test:9443' },
            }),
        );
        expect(patched).to.include({ external_host: 'https://wiki.apps.test:9443', client_id: created.client_id });
        expect((await api.providers.providersProxyRetrieve({ id })).externalHost).to.equal('https://wiki.apps.test:9443');
        await api.providers.providersProxyDestroyRaw({ id });
        expect((await refusal(api.providers.providersProxyRetrieveRaw({ id }))).status).to.equal(404);
        expect(standIn.violations).to.equal([]);
    });

    it("refuses what authentik's rules refuse with 400 in DRF's shape", async () => {
        await createProxyProvider(api, 'dp-taken', 'https://taken.apps.test');
        expect(await refusal(createProxyProvider(api, 'dp-taken', 'https://other.apps.test'))).to.equal({
            status: 400,
            body: { name: ['provider with this name already exists.'] },
        });
        const id = Number(standIn.state.providers.find((provider) => provider.name === 'dp-taken')?.pk);
        const withoutMode = await refusal(
            api.providers.providersProxyPartialUpdateRaw({ id, patchedProxyProviderRequest: { externalHost: 'https://x.test' } }),
        );
        expect(withoutMode).to.equal({
            status: 400,
            body: { non_field_errors: ['Internal host cannot be empty when forward auth is disabled.'] },
        });
        const unknownFlow = await refusal(
            api.providers.providersProxyPartialUpdateRaw({
                id,
                patchedProxyProviderRequest: { mode: ProxyMode.ForwardSingle, invalidationFlow: Crypto.randomUUID() },
            }),
        );
        expect(unknownFlow.status).to.equal(400);
        expect(unknownFlow.body.invalidation_flow).to.be.an.array();
        // authentik's own rules are not schema violations.
        expect(standIn.violations).to.equal([]);
    });

    it('refuses what the schema refuses with 400 and records each as a violation', async () => {
        const flow = await flowPk(api, 'default-provider-authorization-implicit-consent');
        const missing = await postJson(standIn, '/providers/proxy/', {
            name: 'dp-x',
            authorization_flow: flow,
            external_host: 'https://x.test',
        });
        expect(missing).to.equal({ status: 400, body: { invalidation_flow: ['This field is required.'] } });
        const slug = await refusal(api.core.coreApplicationsCreateRaw({ applicationRequest: { name: 'Bad', slug: 'has spaces' } }));
        expect(slug).to.equal({
            status: 400,
            body: { slug: ['Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.'] },
        });
        const query = await fetch(`${standIn.url}/api/v3/core/users/?is_active=maybe`, {
            headers: { authorization: `Bearer ${standIn.bootstrapToken}` },
        });
        expect(query.status).to.equal(400);
        expect(standIn.violations).to.have.length(3);
        expect(String(standIn.violations[0])).to.startWith('POST /api/v3/providers/proxy/: body');
        expect(standIn.violations[1]).to.contain('slug');
        expect(String(standIn.violations[2])).to.startWith('GET /api/v3/core/users/: query');
        standIn.violations.length = 0;
    });

    it('answers 404 for unknown paths and 501 (a violation) for operations the stand-in does not serve', async () => {
        const unknown = await fetch(`${standIn.url}/api/v3/no/such/path/`, {
            headers: { authorization: `Bearer ${standIn.bootstrapToken}` },
        });
        expect(unknown.status).to.equal(404);
        expect(await unknown.json()).to.equal({ detail: 'Not found.' });
        expect((await refusal(api.providers.providersLdapListRaw({}))).status).to.equal(501);
        expect(standIn.violations).to.have.length(1);
        expect(standIn.violations[0]).to.contain('providers_ldap_list');
        standIn.violations.length = 0;
    });

    it('binds groups to applications: exactly one of group, user or policy; deleting the application deletes its bindings', async () => {
        const provider = await createProxyProvider(api, 'dp-notes', 'https://notes.apps.test');
        const application = await json(
            api.core.coreApplicationsCreateRaw({ applicationRequest: { name: 'Notes', slug: 'notes', provider: Number(provider.pk) } }),
        );
        expect(application).to.include({ slug: 'notes', provider: provider.pk, launch_url: 'https://notes.apps.test' });
        expect((application.provider_obj as Json).assigned_application_slug).to.equal('notes');
        const target = String(application.pk);
        const writers = standIn.addGroup('writers');
        const binding = await json(api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target, group: writers, order: 0 } }));
        expect(binding).to.include({ target, group: writers, order: 0, enabled: true, negate: false });
        expect((binding.group_obj as Json).name).to.equal('writers');
        const neither = await refusal(api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target, order: 1 } }));
        expect(neither).to.equal({ status: 400, body: { non_field_errors: ["One of 'policy', 'group' or 'user' must be set."] } });
        const both = await refusal(
            api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target, order: 1, group: writers, user: 1 } }),
        );
        expect(both.body).to.equal({ non_field_errors: ["Only one of 'policy', 'group' or 'user' can be set."] });
        const ghost = Crypto.randomUUID();
        const unknownGroup = await refusal(
            api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target, order: 1, group: ghost } }),
        );
        expect(unknownGroup.body).to.equal({ group: [`Invalid pk "${ghost}" - object does not exist.`] });
        expect((await api.policies.policiesBindingsList({ target })).results).to.have.length(1);
        const duplicate = await refusal(api.core.coreApplicationsCreateRaw({ applicationRequest: { name: 'Notes 2', slug: 'notes' } }));
        expect(duplicate.body).to.equal({ slug: ['Application with this slug already exists.'] });
        const renamed = await json(
            api.core.coreApplicationsPartialUpdateRaw({ slug: 'notes', patchedApplicationRequest: { name: 'Team notes' } }),
        );
        expect(renamed).to.include({ name: 'Team notes', pk: target });
        await api.core.coreApplicationsDestroyRaw({ slug: 'notes' });
        expect((await api.policies.policiesBindingsList({ target })).results).to.equal([]);
        expect((await refusal(api.core.coreApplicationsRetrieveRaw({ slug: 'notes' }))).status).to.equal(404);
        expect(standIn.violations).to.equal([]);
    });

    it('lists only the applications a user may open, unless a superuser asks for the full list', async () => {
        const provider = await createProxyProvider(api, 'dp-secret', 'https://secret.apps.test');
        const application = await json(
            api.core.coreApplicationsCreateRaw({ applicationRequest: { name: 'Secret', slug: 'secret', provider: Number(provider.pk) } }),
        );
        const insiders = standIn.addGroup('insiders');
        await api.policies.policiesBindingsCreateRaw({
            policyBindingRequest: { target: String(application.pk), group: insiders, order: 0 },
        });
        const plain = await api.core.coreApplicationsList({ slug: 'secret' });
        expect(plain.results).to.equal([]);
        const full = await api.core.coreApplicationsList({ slug: 'secret', superuserFullList: true });
        expect(full.results.map((found) => found.slug)).to.equal(['secret']);
        expect(standIn.violations).to.equal([]);
    });

    it("replaces the outpost's providers with a PATCH; deleting a provider takes it off the outpost", async () => {
        const first = await createProxyProvider(api, 'dp-first', 'https://first.apps.test');
        const second = await createProxyProvider(api, 'dp-second', 'https://second.apps.test');
        const outpost = await embeddedOutpost(api);
        const uuid = String(outpost.pk);
        await api.outposts.outpostsInstancesPartialUpdateRaw({
            uuid,
            patchedOutpostRequest: { providers: [Number(first.pk), Number(second.pk)] },
        });
        const replaced = await json(
            api.outposts.outpostsInstancesPartialUpdateRaw({ uuid, patchedOutpostRequest: { providers: [Number(second.pk)] } }),
        );
        expect(replaced.providers).to.equal([second.pk]);
        expect((replaced.providers_obj as Json[]).map((provider) => provider.name)).to.equal(['dp-second']);
        expect((await api.providers.providersProxyRetrieve({ id: Number(second.pk) })).outpostSet).to.equal([
            'Outpost authentik Embedded Outpost',
        ]);
        const unknown = await refusal(
            api.outposts.outpostsInstancesPartialUpdateRaw({ uuid, patchedOutpostRequest: { providers: [9999] } }),
        );
        expect(unknown.body).to.equal({ providers: ['Invalid pk "9999" - object does not exist.'] });
        const renamed = await refusal(api.outposts.outpostsInstancesPartialUpdateRaw({ uuid, patchedOutpostRequest: { name: 'mine' } }));
        expect(renamed.body).to.equal({ name: ["Embedded outpost's name cannot be changed"] });
        await api.providers.providersProxyDestroyRaw({ id: Number(second.pk) });
        expect((await embeddedOutpost(api)).providers).to.equal([]);
        expect(standIn.violations).to.equal([]);
    });

    it('pages lists as authentik does, with 404 past the last page', async () => {
        for (const name of ['page-a', 'page-b', 'page-c', 'page-d', 'page-e']) {
            standIn.addGroup(name);
        }

        const second = await json<{ pagination: Json; results: Json[] }>(
            api.core.coreGroupsListRaw({ search: 'page-', pageSize: 2, page: 2 }),
        );
        expect(second.pagination).to.equal({ next: 3, previous: 1, count: 5, current: 2, total_pages: 3, start_index: 3, end_index: 4 });
        expect(second.results.map((group) => group.name)).to.equal(['page-c', 'page-d']);
        const last = await api.core.coreGroupsList({ search: 'page-', pageSize: 2, page: 3 });
        expect(last.pagination).to.include({ next: 0, previous: 2, endIndex: 5 });
        expect(await refusal(api.core.coreGroupsListRaw({ search: 'page-', pageSize: 2, page: 4 }))).to.equal({
            status: 404,
            body: { detail: 'Invalid page.' },
        });
        const withoutUsers = await json<{ results: Json[] }>(api.core.coreGroupsListRaw({ name: 'page-a', includeUsers: false }));
        expect(withoutUsers.results[0]?.users_obj).to.be.null();
        expect(standIn.violations).to.equal([]);
    });

    it('lists users with their groups and filters', async () => {
        standIn.addUser({ username: 'dora', password: 'pw-dora-1', name: 'Dora', email: 'dora@example.test', groups: ['explorers'] });
        standIn.addUser({ username: 'dormant', password: 'pw-2', isActive: false });
        const found = await api.core.coreUsersList({ search: 'dor', isActive: true });
        expect(found.results.map((user) => user.username)).to.equal(['dora']);
        expect(found.results[0]?.groupsObj?.map((group) => group.name)).to.equal(['explorers']);
        const quick = await json<{ results: Json[] }>(api.core.coreUsersListRaw({ username: 'dora', includeGroups: false }));
        expect(quick.results[0]?.groups_obj).to.be.null();
        expect(standIn.violations).to.equal([]);
    });

    it("makes API tokens: a superuser's expiring:false token works, its key is shown once asked, deleting it revokes it", async () => {
        await api.core.coreTokensCreateRaw({
            tokenRequest: { identifier: 'gatehouse', intent: IntentEnum.Api, expiring: false, description: 'Gatehouse' },
        });
        const { key } = await api.core.coreTokensViewKeyRetrieve({ identifier: 'gatehouse' });
        const listed = await api.core.coreTokensList({ identifier: 'gatehouse' });
        expect(listed.results[0]).to.include({ identifier: 'gatehouse', expiring: false, description: 'Gatehouse' });
        expect((await clients(standIn, key).core.coreUsersMeRetrieve()).user.username).to.equal('akadmin');
        const badIdentifier = await refusal(api.core.coreTokensCreateRaw({ tokenRequest: { identifier: 'no spaces allowed' } }));
        expect(badIdentifier.status).to.equal(400);
        standIn.violations.length = 0;
        await api.core.coreTokensDestroyRaw({ identifier: 'gatehouse' });
        expect((await refusal(clients(standIn, key).core.coreUsersMeRetrieveRaw())).status).to.equal(403);
        expect(standIn.violations).to.equal([]);
    });

    it('resets connections while down, as an unreachable server', async () => {
        standIn.down = true;
        try {
            await expect(api.core.coreUsersMeRetrieveRaw()).to.reject(FetchError);
        } finally {
            standIn.down = false;
        }

        expect(standIn.requests[standIn.requests.length - 1]).to.equal({ method: 'GET', path: '/api/v3/core/users/me/', status: 0 });
        expect((await api.core.coreUsersMeRetrieve()).user.username).to.equal('akadmin');
    });

    it('fails the Nth request matching a failure rule with its status, before the operation changes anything', async () => {
        const outpost = await embeddedOutpost(api);
        const before = outpost.providers as number[];
        const provider = await createProxyProvider(api, 'dp-refused', 'https://refused.apps.test');
        const patch = () =>
            api.outposts.outpostsInstancesPartialUpdateRaw({
                uuid: String(outpost.pk),
                patchedOutpostRequest: { providers: [...before, Number(provider.pk)] },
            });
        standIn.failures.add({ method: 'PATCH', path: /^\/outposts\/instances\//, nth: 2, status: 503 });
        // A GET of the same path and a PATCH of another path are not counted.
        await api.outposts.outpostsInstancesRetrieveRaw({ uuid: String(outpost.pk) });
        await api.providers.providersProxyPartialUpdateRaw({
            id: Number(provider.pk),
            patchedProxyProviderRequest: { mode: ProxyMode.ForwardSingle, externalHost: 'https://refused.apps.test' },
        });
        await api.outposts.outpostsInstancesPartialUpdateRaw({ uuid: String(outpost.pk), patchedOutpostRequest: { providers: before } });
        const refused = await refusal(patch());
        expect(refused.status).to.equal(503);
        expect(refused.body.detail).to.contain('the test made the stand-in fail this request');
        expect(standIn.failures.pending).to.equal(0);
        expect((await embeddedOutpost(api)).providers).to.equal(before);
        expect(standIn.requests[standIn.requests.length - 2]).to.include({ method: 'PATCH', status: 503 });

        // Used up: the next matching request goes through.
        await patch();
        expect((await embeddedOutpost(api)).providers).to.equal([...before, Number(provider.pk)]);
        await api.providers.providersProxyDestroyRaw({ id: Number(provider.pk) });
        expect(() => standIn.failures.add({ nth: 0 })).to.throw(/whole number/);
        expect(standIn.violations).to.equal([]);
    });
});

describe('authentik stand-in: an older server version', () => {
    it('leaves `users` out of /core/users/me/, so the 2026.8.3 client throws where a Raw call does not (reference §9.1)', async () => {
        const standIn = await startAuthentikStandIn({ version: '2026.5.2' });
        try {
            const api = clients(standIn);
            await expect(api.core.coreUsersMeRetrieve()).to.reject(TypeError);
            const me = await json<Json>(api.core.coreUsersMeRetrieveRaw());
            expect(me.users).to.not.exist();
            expect((await api.admin.adminVersionRetrieve()).versionCurrent).to.equal('2026.5.2');
            expect(standIn.violations).to.equal([]);
        } finally {
            await standIn.close();
        }
    });
});

describe('authentik stand-in: embedded outpost forward auth', () => {
    let standIn: AuthentikStandIn;
    let api: Clients;
    const ONE = 'https://one.apps.test:8443';
    const TWO = 'https://two.apps.test:8443';
    const OPEN = 'https://open.apps.test:8443';
    const alice = { username: 'alice', password: 'alice-password-1' };
    const bob = { username: 'bob', password: 'bob-password-1' };

    /** nginx's auth subrequest, made by hand. */
    async function authCheck(headers: Record<string, string>): Promise<Response> {
        return await fetch(`${standIn.url}/outpost.goauthentik.io/auth/nginx`, { headers, redirect: 'manual' });
    }

    before(async () => {
        standIn = await startAuthentikStandIn();
        api = clients(standIn);
        const staff = standIn.addGroup('staff');
        const ops = standIn.addGroup('ops');
        standIn.addUser({ ...alice, name: 'Alice Liddell', email: 'alice@example.test', groups: ['staff', 'readers'] });
        standIn.addUser({ ...bob, name: 'Bob', email: 'bob@example.test', groups: ['ops'] });
        await protectApp(api, 'one', ONE, [staff]);
        await protectApp(api, 'two', TWO, [ops]);
        await protectApp(api, 'open', OPEN, []);
    });

    after(async () => {
        await standIn.close();
    });

    it('lets a member of a bound group through, with the identity headers, back to the page asked for', async () => {
        const browser = new ForwardAuthBrowser(standIn.url);
        const visit = await browser.open(`${ONE}/notes?view=all`, alice);
        expect(visit.status).to.equal(200);
        expect(visit.url).to.equal(`${ONE}/notes?view=all`);
        expect(visit.headers).to.include({
            'x-authentik-username': 'alice',
            'x-authentik-groups': 'staff|readers',
            'x-authentik-entitlements': '',
            'x-authentik-email': 'alice@example.test',
            'x-authentik-name': 'Alice Liddell',
            'x-authentik-meta-app': 'one',
            'x-authentik-meta-provider': 'dp-one',
            'x-authentik-meta-outpost': 'authentik Embedded Outpost',
            'x-authentik-meta-version': 'goauthentik.io/outpost/2026.8.3',
        });
        expect(visit.headers['x-authentik-uid']).to.match(/^[0-9a-f]{64}$/);
        expect(visit.headers['x-authentik-jwt']?.split('.')).to.have.length(3);
        const paths = visit.trail.map((step) => `${step.method} ${new URL(step.url).pathname} ${step.status}`);
        expect(paths).to.equal([
            'GET /notes 302',
            'GET /outpost.goauthentik.io/start 302',
            'GET /application/o/authorize/ 302',
            'GET /if/flow/default-authentication-flow/ 200',
            'POST /if/flow/default-authentication-flow/ 302',
            'GET /application/o/authorize/ 302',
            'GET /outpost.goauthentik.io/callback 302',
            'GET /notes 200',
        ]);
        const provider = standIn.state.providers.find((candidate) => candidate.name === 'dp-one');
        const cookie = `authentik_proxy_${Crypto.createHash('sha256').update(String(provider?.client_id)).digest('hex').slice(0, 8)}`;
        expect([...browser.cookies('one.apps.test').keys()]).to.equal([cookie]);
        expect([...browser.cookies('127.0.0.1').keys()]).to.equal(['authentik_session']);
        // Signed in to authentik, the second app needs no password: only the redirects.
        const open = await browser.open(`${OPEN}/`);
        expect(open.status).to.equal(200);
        expect(open.headers['x-authentik-meta-app']).to.equal('open');
        expect(standIn.violations).to.equal([]);
    });

    it("refuses a user outside the app's groups at authentik's authorization step with 403", async () => {
        const visit = await new ForwardAuthBrowser(standIn.url).open(`${ONE}/`, bob);
        expect(visit.status).to.equal(403);
        expect(new URL(visit.url).pathname).to.equal('/application/o/authorize/');
        expect(visit.body).to.contain('Permission denied').and.to.contain('Request has been denied.');
        const own = await new ForwardAuthBrowser(standIn.url).open(`${TWO}/`, bob);
        expect(own.status).to.equal(200);
        expect(own.headers['x-authentik-groups']).to.equal('ops');
    });

    it('shows a real sign-in form, and again with "Invalid password" after a wrong one', async () => {
        const browser = new ForwardAuthBrowser(standIn.url);
        const visit = await browser.open(`${ONE}/`);
        expect(visit.status).to.equal(200);
        expect(visit.body).to.contain('<title>Sign in</title>').and.to.contain('<form method="post">');
        expect(visit.body).to.contain('name="uid_field"').and.to.contain('name="password"').and.to.contain('<button type="submit">');
        expect(visit.body).to.contain('>Username</label>').and.to.contain('>Password</label>');
        const wrong = await browser.request(visit.url, { form: { uid_field: 'alice', password: 'not-her-password' } });
        expect(wrong.status).to.equal(200);
        expect(wrong.body).to.contain('Invalid password').and.to.contain('name="uid_field"');
        expect([...browser.cookies('127.0.0.1').keys()]).to.equal([]);
    });

    it('answers 400 "no app for hostname" for a host no provider has, also a known host without its port', async () => {
        const unknown = await authCheck({ 'x-forwarded-host': 'three.apps.test:8443', 'x-original-url': 'https://three.apps.test:8443/' });
        expect(unknown.status).to.equal(400);
        expect(await unknown.json()).to.equal({ Message: 'no app for hostname' });
        const withoutPort = await new ForwardAuthBrowser(standIn.url, { forwardPort: false }).open(`${ONE}/`, alice);
        expect(withoutPort.status).to.equal(500);
        expect(withoutPort.trail).to.have.length(1);
    });

    it('answers 500 "configuration error" without X-Original-URL or X-Original-URI', async () => {
        const response = await authCheck({ 'x-forwarded-host': 'one.apps.test:8443' });
        expect(response.status).to.equal(500);
        expect(await response.text()).to.contain('configuration error');
        const byUri = await authCheck({ 'x-forwarded-host': 'one.apps.test:8443', 'x-forwarded-proto': 'https', 'x-original-uri': '/x' });
        expect(byUri.status).to.equal(401);
    });

    it('keeps a session when the bindings change; a new sign-in is judged by the current bindings', async () => {
        // An app of its own, whose bindings the test changes: `two` stays bound to ops for the other tests.
        const REBOUND = 'https://rebound.apps.test:8443';
        const groupPk = (name: string) => String(standIn.state.groups.find((group) => group.name === name)?.pk);
        await protectApp(api, 'rebound', REBOUND, [groupPk('ops')]);
        const signedIn = new ForwardAuthBrowser(standIn.url);
        expect((await signedIn.open(`${REBOUND}/`, bob)).status).to.equal(200);
        const application = standIn.state.applications.find((candidate) => candidate.slug === 'rebound');
        const [binding] = (await api.policies.policiesBindingsList({ target: String(application?.pk) })).results;
        await api.policies.policiesBindingsDestroyRaw({ policyBindingUuid: String(binding?.pk) });
        const staff = groupPk('staff');
        await api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target: String(application?.pk), group: staff, order: 0 } });
        expect((await signedIn.open(`${REBOUND}/again`)).status).to.equal(200);
        expect((await new ForwardAuthBrowser(standIn.url).open(`${REBOUND}/`, bob)).status).to.equal(403);
        expect((await new ForwardAuthBrowser(standIn.url).open(`${REBOUND}/`, alice)).status).to.equal(200);
        expect(standIn.violations).to.equal([]);
    });

    it('signs out: the session ends and the invalidation flow shows', async () => {
        const browser = new ForwardAuthBrowser(standIn.url);
        await browser.open(`${OPEN}/`, alice);
        const signOut = await browser.request(`${OPEN}/outpost.goauthentik.io/sign_out`);
        expect(signOut.status).to.equal(302);
        expect(signOut.headers.location).to.equal(`${standIn.url}/if/flow/default-provider-invalidation-flow/`);
        expect((await browser.request(`${OPEN}/`)).status).to.equal(302);
    });

    it('never lets an inactive user in, even to an app without bindings', async () => {
        standIn.addUser({ username: 'gone', password: 'gone-password-1', isActive: false });
        const visit = await new ForwardAuthBrowser(standIn.url).open(`${OPEN}/`, { username: 'gone', password: 'gone-password-1' });
        expect(visit.status).to.equal(200);
        expect(visit.body).to.contain('Invalid password');
    });

    it('answers every app with the one provider when the outpost has only one, without a host check', async () => {
        const single = await startAuthentikStandIn();
        try {
            await protectApp(clients(single), 'only', 'https://only.apps.test', []);
            single.addUser(alice);
            const visit = await new ForwardAuthBrowser(single.url).open('https://elsewhere.test:8080/', alice);
            // The host is not checked for the lookup, but authentik still refuses a redirect URI on another host.
            expect(visit.status).to.equal(400);
            expect(visit.body).to.contain('Redirect URI Error');
            const check = await fetch(`${single.url}/outpost.goauthentik.io/auth/nginx`, {
                headers: { 'x-forwarded-host': 'elsewhere.test:8080', 'x-original-url': 'https://elsewhere.test:8080/' },
            });
            expect(check.status).to.equal(401);
            expect(single.violations).to.equal([]);
        } finally {
            await single.close();
        }
    });
});
