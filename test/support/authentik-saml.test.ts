import Crypto from 'node:crypto';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';
import Zlib from 'node:zlib';

import {
    type ApiResponse,
    Configuration,
    CoreApi,
    CryptoApi,
    FlowsApi,
    ForceBindingEnum,
    PoliciesApi,
    PropertymappingsApi,
    ProvidersApi,
    ResponseError,
    SAMLBindingsEnum,
    type SAMLProviderRequest,
} from '@goauthentik/api';
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
// The stand-in sets samlify's (process-wide) schema validator when it loads; see saml-endpoints.ts.
import Samlify, { type IdentityProviderInstance, type ServiceProviderInstance } from 'samlify';

import { type AuthentikStandIn, type BrowserResponse, ForwardAuthBrowser, startAuthentikStandIn } from './authentik/index.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

type Json = Record<string, unknown>;

const SAML = 'goauthentik.io/providers/saml/';
const ATTRIBUTES = ['username', 'email', 'name', 'groups'];
const CLAIM = {
    username: 'http://schemas.goauthentik.io/2021/02/saml/username',
    email: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
    name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
    groups: 'http://schemas.xmlsoap.org/claims/Group',
};

function clients(standIn: AuthentikStandIn) {
    const configuration = new Configuration({ basePath: `${standIn.url}/api/v3`, accessToken: standIn.bootstrapToken });
    return {
        core: new CoreApi(configuration),
        crypto: new CryptoApi(configuration),
        flows: new FlowsApi(configuration),
        mappings: new PropertymappingsApi(configuration),
        policies: new PoliciesApi(configuration),
        providers: new ProvidersApi(configuration),
    };
}

type Clients = ReturnType<typeof clients>;

async function json<T = Json>(call: Promise<ApiResponse<unknown>>): Promise<T> {
    return (await (await call).raw.json()) as T;
}

async function refusal(call: Promise<unknown>): Promise<{ status: number; body: Json }> {
    const error = (await expect(call).to.reject(ResponseError)) as ResponseError;
    return { status: error.response.status, body: (await error.response.json()) as Json };
}

async function flowPk(api: Clients, slug: string): Promise<string> {
    const page = await json<{ results: Json[] }>(api.flows.flowsInstancesListRaw({ slug }));
    return String(page.results[0]?.pk);
}

/** The pks of the managed SAML mappings, by the last part of their managed name (`username`, `email`...). */
async function samlMappings(api: Clients): Promise<Record<string, string>> {
    const page = await json<{ results: Json[] }>(api.mappings.propertymappingsProviderSamlListRaw({ managedIsnull: false }));
    return Object.fromEntries(page.results.map((mapping) => [String(mapping.managed).slice(SAML.length), String(mapping.pk)]));
}

async function signingKeypair(api: Clients): Promise<string> {
    const page = await json<{ results: Json[] }>(api.crypto.cryptoCertificatekeypairsListRaw({ hasKey: true }));
    return String(page.results[0]?.pk);
}

async function providerRequest(api: Clients, name: string, fields: Partial<SAMLProviderRequest> = {}): Promise<SAMLProviderRequest> {
    return {
        name,
        authorizationFlow: await flowPk(api, 'default-provider-authorization-implicit-consent'),
        invalidationFlow: await flowPk(api, 'default-provider-invalidation-flow'),
        acsUrl: 'https://wiki.apps.test/mellon/postResponse',
        ...fields,
    };
}

/** A SAML app as Gatehouse sets one up: signed, username as NameID, answers posted to the ACS; bound to groups. */
async function samlApp(api: Clients, slug: string, fields: Partial<SAMLProviderRequest>, groups: string[]): Promise<Json> {
    const mappings = await samlMappings(api);
    const request = await providerRequest(api, `dp-${slug}-saml`, {
        signingKp: await signingKeypair(api),
        signAssertion: true,
        signResponse: true,
        nameIdMapping: mappings.username,
        propertyMappings: ATTRIBUTES.map((name) => mappings[name] ?? ''),
        spBinding: SAMLBindingsEnum.Post,
        ...fields,
    });
    const provider = await json(api.providers.providersSamlCreateRaw({ sAMLProviderRequest: request }));
    const application = await json(
        api.core.coreApplicationsCreateRaw({ applicationRequest: { name: slug, slug, provider: Number(provider.pk) } }),
    );
    for (const [order, group] of groups.entries()) {
        await api.policies.policiesBindingsCreateRaw({ policyBindingRequest: { target: String(application.pk), group, order } });
    }

    return provider;
}

interface Received {
    status: number;
    body: Json;
}

/**
 * A service provider as mod_auth_mellon plays one, on loopback: samlify makes its AuthnRequests, and its ACS
 * (`/mellon/postResponse`, HTTP-POST) checks each Response's signature against the IdP metadata's certificate.
 */
class ServiceProvider {
    readonly #server = Http.createServer((request, response) => void this.#receive(request, response));
    idp?: IdentityProviderInstance;
    origin = '';

    get entityId(): string {
        return `${this.origin}/mellon/metadata`;
    }

    get acsUrl(): string {
        return `${this.origin}/mellon/postResponse`;
    }

    async start(): Promise<void> {
        await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
        this.origin = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    }

    async stop(): Promise<void> {
        this.#server.closeAllConnections();
        await new Promise((resolve) => this.#server.close(resolve));
    }

    /** samlify's SP, for this ACS or another one. */
    entity(acsUrl = this.acsUrl): ServiceProviderInstance {
        return Samlify.ServiceProvider({
            entityID: this.entityId,
            assertionConsumerService: [{ Binding: Samlify.Constants.namespace.binding.post, Location: acsUrl }],
            wantAssertionsSigned: true,
        });
    }

    async #receive(request: Http.IncomingMessage, response: Http.ServerResponse): Promise<void> {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const body = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
        let answer: Received;
        try {
            if (request.method !== 'POST' || !request.url?.startsWith('/mellon/postResponse') || !this.idp) throw new Error('not the ACS');
            const { extract } = await this.entity().parseLoginResponse(this.idp, 'post', { body });
            answer = { status: 200, body: { ...extract, relayState: body.RelayState } };
        } catch (error) {
            answer = { status: 400, body: { error: (error as Error).message } };
        }

        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    }
}

/** Follows redirects while they stay on the stand-in, signing in once on its sign-in form; answers the last response. */
async function visit(
    browser: ForwardAuthBrowser,
    standIn: AuthentikStandIn,
    first: BrowserResponse,
    credentials?: { username: string; password: string },
): Promise<{ last: BrowserResponse; trail: string[] }> {
    const trail: string[] = [];
    let response = first;
    let signedIn = false;
    for (let hop = 0; hop < 20; hop++) {
        trail.push(`${new URL(response.url).pathname} ${response.status}`);
        const location = response.headers.location && new URL(response.headers.location, response.url).href;
        if (location?.startsWith(standIn.url)) {
            response = await browser.request(location);
        } else if (credentials && !signedIn && response.body.includes('name="uid_field"')) {
            signedIn = true;
            response = await browser.request(response.url, { form: { uid_field: credentials.username, password: credentials.password } });
        } else {
            return { last: response, trail };
        }
    }

    throw new Error(`too many redirects: ${trail.join(' -> ')}`);
}

/** The auto-submitting form's action and fields, with the page's character references decoded. */
function autosubmitForm(page: string): { action: string; fields: Record<string, string> } {
    const decode = (value = '') => value.replace(/&#(\d+);/g, (_reference, code: string) => String.fromCharCode(Number(code)));
    const action = decode(/<form method="post" action="([^"]+)"/.exec(page)?.[1]);
    const inputs = [...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)];
    return { action, fields: Object.fromEntries(inputs.map((input) => [decode(input[1]), decode(input[2])])) };
}

async function submit(form: { action: string; fields: Record<string, string> }): Promise<Received> {
    const response = await fetch(form.action, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form.fields).toString(),
    });
    return { status: response.status, body: (await response.json()) as Json };
}

describe('authentik stand-in: SAML providers and mappings', () => {
    let standIn: AuthentikStandIn;
    let api: Clients;

    before(async () => {
        standIn = await startAuthentikStandIn();
        api = clients(standIn);
    });

    after(async () => {
        await standIn.close();
    });

    it("lists the managed SAML mappings of authentik's blueprint, by their managed names", async () => {
        const managed = ['username', 'email', 'groups'].map((name) => `${SAML}${name}`);
        const page = await json<{ results: Json[] }>(api.mappings.propertymappingsProviderSamlListRaw({ managed }));
        expect(page.results.map((mapping) => mapping.saml_name)).to.equal([CLAIM.email, CLAIM.groups, CLAIM.username]);
        const username = page.results.find((mapping) => mapping.managed === `${SAML}username`) ?? {};
        expect(username).to.include({
            name: 'authentik default SAML Mapping: Username',
            expression: 'return request.user.username\n',
            friendly_name: null,
            component: 'ak-property-mapping-provider-saml-form',
            meta_model_name: 'authentik_providers_saml.samlpropertymapping',
        });
        const all = await samlMappings(api);
        expect(Object.keys(all).sort()).to.equal(['email', 'groups', 'ms-windowsaccountname', 'name', 'uid', 'upn', 'username']);
        const one = await json(api.mappings.propertymappingsProviderSamlRetrieveRaw({ pmUuid: all.upn ?? '' }));
        expect(one.saml_name).to.equal('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn');
        expect(standIn.violations).to.equal([]);
    });

    it("creates a SAML provider with authentik's defaults; its URLs wait for an application", async () => {
        const created = await json(
            api.providers.providersSamlCreateRaw({ sAMLProviderRequest: await providerRequest(api, 'dp-plain-saml') }),
        );
        const id = Number(created.pk);
        expect(created).to.include({
            sp_binding: 'redirect',
            sign_assertion: true,
            sign_response: false,
            audience: '',
            issuer_override: '',
            signing_kp: null,
            name_id_mapping: null,
            property_mappings: [],
            assertion_valid_not_before: 'minutes=-5',
            assertion_valid_not_on_or_after: 'minutes=5',
            default_name_id_policy: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
            component: 'ak-provider-saml-form',
            verbose_name: 'SAML Provider',
            meta_model_name: 'authentik_providers_saml.samlprovider',
            assigned_application_slug: null,
            url_sso_redirect: '-',
            url_issuer: 'authentik',
            url_download_metadata: `${standIn.url}/api/v3/providers/saml/${id}/metadata/?download`,
        });
        expect(created.issuer).to.not.exist();
        const patched = await json(
            api.providers.providersSamlPartialUpdateRaw({
                id,
                patchedSAMLProviderRequest: { spBinding: SAMLBindingsEnum.Post, audience: 'sp' },
            }),
        );
        expect(patched).to.include({ sp_binding: 'post', audience: 'sp', acs_url: 'https://wiki.apps.test/mellon/postResponse' });
        const replaced = await json(
            api.providers.providersSamlUpdateRaw({
                id,
                sAMLProviderRequest: await providerRequest(api, 'dp-plain-saml', { acsUrl: 'https://x.test/acs' }),
            }),
        );
        expect(replaced).to.include({ acs_url: 'https://x.test/acs', sp_binding: 'post' });
        const listed = await json<{ results: Json[] }>(api.providers.providersSamlListRaw({ name: 'dp-plain-saml' }));
        expect(listed.results.map((provider) => provider.pk)).to.equal([id]);
        await api.providers.providersSamlDestroyRaw({ id });
        expect((await refusal(api.providers.providersSamlRetrieveRaw({ id }))).status).to.equal(404);
        expect(standIn.violations).to.equal([]);
    });

    it('refuses invalid providers with 400 and field errors, as the serializer does', async () => {
        const mappings = await samlMappings(api);
        const scopes = await json<{ results: Json[] }>(
            api.mappings.propertymappingsProviderScopeListRaw({ managed: ['goauthentik.io/providers/oauth2/scope-email'] }),
        );
        const create = async (fields: Partial<SAMLProviderRequest>) =>
            await refusal(api.providers.providersSamlCreateRaw({ sAMLProviderRequest: await providerRequest(api, 'dp-bad-saml', fields) }));
        const missing = '00000000-0000-4000-8000-000000000000';
        expect(await create({ signingKp: missing, signAssertion: true })).to.equal({
            status: 400,
            body: { signing_kp: [`Invalid pk "${missing}" - object does not exist.`] },
        });
        expect((await create({ nameIdMapping: String(scopes.results[0]?.pk) })).body).to.equal({
            name_id_mapping: [`Invalid pk "${String(scopes.results[0]?.pk)}" - object does not exist.`],
        });
        expect((await create({ propertyMappings: [mappings.email ?? '', missing] })).body).to.equal({
            property_mappings: [`Invalid pk "${missing}" - object does not exist.`],
        });
        expect((await create({ signingKp: await signingKeypair(api), signAssertion: false })).body).to.equal({
            non_field_errors: ["With a signing keypair selected, at least one of 'Sign assertion' and 'Sign Response' must be selected."],
        });
        expect((await create({ acsUrl: 'ftp://wiki.apps.test/acs' })).body).to.equal({ acs_url: ['Enter a valid URL.'] });
        expect((await create({ assertionValidNotBefore: 'soon' })).body).to.equal({
            assertion_valid_not_before: ["soon is not in the correct format of 'hours=3;minutes=1'."],
        });
        await api.providers.providersSamlCreateRaw({ sAMLProviderRequest: await providerRequest(api, 'dp-taken-saml') });
        expect(
            (await refusal(api.providers.providersSamlCreateRaw({ sAMLProviderRequest: await providerRequest(api, 'dp-taken-saml') })))
                .body,
        ).to.equal({
            name: ['provider with this name already exists.'],
        });
        expect(standIn.violations).to.equal([]);
        // What the schema refuses is also a violation: a request Gatehouse must never send.
        const { acsUrl: _acsUrl, ...withoutAcs } = await providerRequest(api, 'dp-bad-saml');
        const noAcs = await fetch(`${standIn.url}/api/v3/providers/saml/`, {
            method: 'POST',
            headers: { authorization: `Bearer ${standIn.bootstrapToken}`, 'content-type': 'application/json' },
            body: JSON.stringify({
                name: withoutAcs.name,
                authorization_flow: withoutAcs.authorizationFlow,
                invalidation_flow: withoutAcs.invalidationFlow,
            }),
        });
        expect(noAcs.status).to.equal(400);
        expect(await noAcs.json()).to.equal({ acs_url: ['This field is required.'] });
        expect(standIn.violations).to.have.length(1);
        standIn.violations.length = 0;
    });

    it('shows a SAML provider with its application: URLs per slug, in provider_obj, and metadata', async () => {
        const provider = await samlApp(api, 'notes', { audience: 'https://notes.apps.test/mellon/metadata' }, []);
        const id = Number(provider.pk);
        const root = `${standIn.url}/application/saml/notes`;
        const shown = await json(api.providers.providersSamlRetrieveRaw({ id }));
        expect(shown).to.include({
            assigned_application_slug: 'notes',
            assigned_application_name: 'notes',
            url_sso_redirect: `${root}/sso/binding/redirect/`,
            url_sso_post: `${root}/sso/binding/post/`,
            url_sso_init: `${root}/sso/binding/init/`,
            url_slo_redirect: `${root}/slo/binding/redirect/`,
            url_slo_post: `${root}/slo/binding/post/`,
            url_download_metadata: `${root}/metadata/`,
            url_issuer: `${root}/metadata/`,
            url_unified: `${root}/`,
        });
        const application = await json(api.core.coreApplicationsRetrieveRaw({ slug: 'notes' }));
        expect(application.launch_url).to.equal('/application/saml/notes/sso/binding/init/');
        expect(application.provider_obj).to.include({ pk: id, component: 'ak-provider-saml-form', verbose_name: 'SAML Provider' });
        const listed = await json<{ results: Json[] }>(api.core.coreApplicationsListRaw({ slug: 'notes' }));
        expect((listed.results[0]?.provider_obj as Json).meta_model_name).to.equal('authentik_providers_saml.samlprovider');
        expect(standIn.violations).to.equal([]);
    });

    it('answers the metadata: empty without application, the XML with one, raw XML with download', async () => {
        const bare = await json(api.providers.providersSamlCreateRaw({ sAMLProviderRequest: await providerRequest(api, 'dp-bare-saml') }));
        expect(await json(api.providers.providersSamlMetadataRetrieveRaw({ id: Number(bare.pk) }))).to.equal({ metadata: '' });
        const provider = await samlApp(api, 'meta', {}, []);
        const id = Number(provider.pk);
        const root = `${standIn.url}/application/saml/meta`;
        const { metadata } = await json<{ metadata: string }>(api.providers.providersSamlMetadataRetrieveRaw({ id }));
        expect(metadata).to.contain(`entityID="${root}/metadata/"`);
        expect(metadata).to.contain(
            `<SingleSignOnService Binding="${Samlify.Constants.namespace.binding.redirect}" Location="${root}/sso/binding/redirect/"`,
        );
        expect(metadata).to.contain(
            `<SingleSignOnService Binding="${Samlify.Constants.namespace.binding.post}" Location="${root}/sso/binding/post/"`,
        );
        expect(metadata).to.contain(
            `<SingleLogoutService Binding="${Samlify.Constants.namespace.binding.redirect}" Location="${root}/slo/binding/redirect/"`,
        );
        expect(metadata).to.contain('<NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</NameIDFormat>');
        const certificate = /<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/.exec(metadata)?.[1] ?? '';
        expect(new Crypto.X509Certificate(Buffer.from(certificate, 'base64')).subject).to.equal('CN=authentik Self-signed Certificate');
        const download = (await api.providers.providersSamlMetadataRetrieveRaw({ id, download: true })).raw;
        expect(download.headers.get('content-type')).to.equal('application/xml');
        expect(download.headers.get('content-disposition')).to.equal('attachment; filename="dp-meta-saml_authentik_meta.xml"');
        expect(await download.text()).to.equal(metadata);
        const forced = await json<{ metadata: string }>(
            api.providers.providersSamlMetadataRetrieveRaw({ id, forceBinding: ForceBindingEnum.UrnOasisNamesTcSaml20BindingsHttpPost }),
        );
        expect(forced.metadata).to.not.contain('HTTP-Redirect');
        // The application's metadata URL is authentik's redirect to the download, which needs no token.
        const moved = await fetch(`${root}/metadata/`, { redirect: 'manual' });
        expect(moved.status).to.equal(302);
        expect(moved.headers.get('location')).to.equal(`/api/v3/providers/saml/${id}/metadata/?download`);
        expect(await (await fetch(`${root}/metadata/`)).text()).to.equal(metadata);
        expect(standIn.violations).to.equal([]);
    });

    it('takes and shows the entity ID as issuer before 2026.5', async () => {
        const older = await startAuthentikStandIn({ version: '2026.2.3' });
        try {
            const olderApi = clients(older);
            const request = { ...(await providerRequest(olderApi, 'dp-old-saml')), issuer: 'https://old.apps.test/idp' };
            const response = await fetch(`${older.url}/api/v3/providers/saml/`, {
                method: 'POST',
                headers: { authorization: `Bearer ${older.bootstrapToken}`, 'content-type': 'application/json' },
                body: JSON.stringify({
                    name: request.name,
                    authorization_flow: request.authorizationFlow,
                    invalidation_flow: request.invalidationFlow,
                    acs_url: request.acsUrl,
                    issuer: request.issuer,
                }),
            });
            const created = (await response.json()) as Json;
            expect(created.issuer).to.equal('https://old.apps.test/idp');
            expect(created.issuer_override).to.not.exist();
            expect(created.url_issuer).to.not.exist();
            expect(older.violations).to.equal([]);
        } finally {
            await older.close();
        }
    });
});

describe('authentik stand-in: SAML sign-in behind a SAML provider', () => {
    let standIn: AuthentikStandIn;
    let api: Clients;
    let provider: Json;
    const sp = new ServiceProvider();
    const alice = { username: 'alice', password: 'alice-password-1' };
    const bob = { username: 'bob', password: 'bob-password-1' };

    before(async () => {
        standIn = await startAuthentikStandIn();
        api = clients(standIn);
        await sp.start();
        standIn.addUser({ ...alice, name: 'Alice Liddell', email: 'alice@example.test', groups: ['staff', 'readers'] });
        standIn.addUser({ ...bob, name: 'Bob', email: 'bob@example.test', groups: ['ops'] });
        const staff = String(standIn.state.groups.find((group) => group.name === 'staff')?.pk);
        provider = await samlApp(api, 'wiki', { acsUrl: sp.acsUrl, audience: sp.entityId }, [staff]);
        const download = await api.providers.providersSamlMetadataRetrieveRaw({ id: Number(provider.pk), download: true });
        sp.idp = Samlify.IdentityProvider({ metadata: await download.raw.text() });
    });

    after(async () => {
        await sp.stop();
        await standIn.close();
    });

    it('signs alice in from an SP-initiated HTTP-Redirect request: sign-in page, then a signed Response posted to the ACS', async () => {
        const request = sp.entity().createLoginRequest(sp.idp as IdentityProviderInstance, 'redirect', { relayState: '/private/' });
        const browser = new ForwardAuthBrowser(standIn.url);
        const { last, trail } = await visit(browser, standIn, await browser.request(request.context), alice);
        expect(trail).to.equal([
            '/application/saml/wiki/sso/binding/redirect/ 302',
            '/if/flow/default-authentication-flow/ 200',
            '/if/flow/default-authentication-flow/ 302',
            '/application/saml/wiki/sso/binding/redirect/ 200',
        ]);
        expect(last.body).to.contain('Redirecting to wiki...');
        const form = autosubmitForm(last.body);
        expect(form.action).to.equal(sp.acsUrl);
        expect(form.fields.RelayState).to.equal('/private/');
        const received = await submit(form);
        expect(received.status).to.equal(200);
        expect(received.body).to.include({
            nameID: 'alice',
            issuer: `${standIn.url}/application/saml/wiki/metadata/`,
            audience: sp.entityId,
            relayState: '/private/',
        });
        expect(received.body.response).to.include({ inResponseTo: request.id, destination: sp.acsUrl });
        expect(received.body.attributes).to.equal({
            [CLAIM.email]: 'alice@example.test',
            [CLAIM.groups]: ['staff', 'readers'],
            [CLAIM.name]: 'Alice Liddell',
            [CLAIM.username]: 'alice',
        });
        const xml = Buffer.from(form.fields.SAMLResponse ?? '', 'base64').toString('utf8');
        expect(xml.match(/<ds:Signature /g)).to.have.length(2);
        expect(standIn.violations).to.equal([]);
    });

    it('refuses a Response whose signed content was changed', async () => {
        const request = sp.entity().createLoginRequest(sp.idp as IdentityProviderInstance, 'redirect');
        const browser = new ForwardAuthBrowser(standIn.url);
        const form = autosubmitForm((await visit(browser, standIn, await browser.request(request.context), alice)).last.body);
        const xml = Buffer.from(form.fields.SAMLResponse ?? '', 'base64').toString('utf8');
        const forged = xml.replace('>alice</saml:NameID>', '>akadmin</saml:NameID>');
        expect(forged).to.not.equal(xml);
        const received = await submit({ ...form, fields: { ...form.fields, SAMLResponse: Buffer.from(forged).toString('base64') } });
        expect(received).to.equal({ status: 400, body: { error: 'FAILED_TO_VERIFY_SIGNATURE' } });
        expect(standIn.violations).to.equal([]);
    });

    it('keeps an HTTP-POST request across the sign-in, and asks a signed-in user for nothing', async () => {
        const idp = sp.idp as IdentityProviderInstance;
        const posted = sp.entity().createLoginRequest(idp, 'post', { relayState: 'by-post' }) as {
            context: string;
            entityEndpoint: string;
            id: string;
        };
        expect(posted.entityEndpoint).to.equal(`${standIn.url}/application/saml/wiki/sso/binding/post/`);
        const browser = new ForwardAuthBrowser(standIn.url);
        const first = await browser.request(posted.entityEndpoint, { form: { SAMLRequest: posted.context, RelayState: 'by-post' } });
        const { last, trail } = await visit(browser, standIn, first, alice);
        expect(trail.at(-1)).to.equal('/application/saml/wiki/sso/binding/post/ 200');
        const received = await submit(autosubmitForm(last.body));
        expect(received.body).to.include({ nameID: 'alice', relayState: 'by-post' });
        expect(received.body.response).to.include({ inResponseTo: posted.id });
        const again = sp.entity().createLoginRequest(idp, 'redirect');
        const second = await visit(browser, standIn, await browser.request(again.context));
        expect(second.trail).to.equal(['/application/saml/wiki/sso/binding/redirect/ 200']);
        expect((await submit(autosubmitForm(second.last.body))).body.nameID).to.equal('alice');
        // IdP-initiated (the application's launch URL): a Response in answer to no request.
        const initiated = await browser.request(`${standIn.url}/application/saml/wiki/sso/binding/init/`);
        const unsolicited = await submit(autosubmitForm(initiated.body));
        expect(unsolicited.body.nameID).to.equal('alice');
        expect((unsolicited.body.response as Json).inResponseTo).to.not.exist();
        expect(standIn.violations).to.equal([]);
    });

    it("refuses a user outside the application's groups with authentik's 403 page", async () => {
        const request = sp.entity().createLoginRequest(sp.idp as IdentityProviderInstance, 'redirect');
        const browser = new ForwardAuthBrowser(standIn.url);
        const { last } = await visit(browser, standIn, await browser.request(request.context), bob);
        expect(last.status).to.equal(403);
        expect(last.body).to.contain('Permission denied');
        expect(last.body).to.not.contain('SAMLResponse');
        expect(standIn.violations).to.equal([]);
    });

    it('refuses an AuthnRequest whose AssertionConsumerServiceURL is not the provider ACS URL', async () => {
        const elsewhere = `${sp.origin}/other/acs`;
        const request = sp.entity(elsewhere).createLoginRequest(sp.idp as IdentityProviderInstance, 'redirect');
        const browser = new ForwardAuthBrowser(standIn.url);
        const { last } = await visit(browser, standIn, await browser.request(request.context), alice);
        expect(last.status).to.equal(400);
        expect(last.body).to.contain(`ACS URL of ${elsewhere} doesn&#39;t match Provider ACS URL of ${sp.acsUrl}.`);
        const missing = await browser.request(`${standIn.url}/application/saml/wiki/sso/binding/redirect/`);
        expect(missing.status).to.equal(400);
        expect(missing.body).to.contain('The SAML request payload is missing.');
        expect(standIn.violations).to.equal([]);
    });

    it('answers by redirect when sp_binding is redirect, and ends a logout at the invalidation flow', async () => {
        const id = Number(provider.pk);
        await api.providers.providersSamlPartialUpdateRaw({ id, patchedSAMLProviderRequest: { spBinding: SAMLBindingsEnum.Redirect } });
        try {
            const request = sp.entity().createLoginRequest(sp.idp as IdentityProviderInstance, 'redirect', { relayState: 'r' });
            const browser = new ForwardAuthBrowser(standIn.url);
            const { last } = await visit(browser, standIn, await browser.request(request.context), alice);
            expect(last.status).to.equal(302);
            const callback = new URL(last.headers.location ?? '');
            expect(`${callback.origin}${callback.pathname}`).to.equal(sp.acsUrl);
            expect(callback.searchParams.get('RelayState')).to.equal('r');
            const inflated = Zlib.inflateRawSync(Buffer.from(callback.searchParams.get('SAMLResponse') ?? '', 'base64'));
            expect(inflated.toString('utf8')).to.contain('>alice</saml:NameID>');
            const logout = sp.entity().createLogoutRequest(sp.idp as IdentityProviderInstance, 'redirect', { logoutNameID: 'alice' });
            const ended = await visit(browser, standIn, await browser.request(logout.context));
            expect(ended.trail).to.equal([
                '/application/saml/wiki/slo/binding/redirect/ 302',
                '/if/flow/default-provider-invalidation-flow/ 200',
            ]);
            expect(ended.last.body).to.contain('logged out');
            // With an SLS URL the SP gets a LogoutResponse there, in answer to its request.
            const slsUrl = `${sp.origin}/mellon/logout`;
            await api.providers.providersSamlPartialUpdateRaw({ id, patchedSAMLProviderRequest: { slsUrl } });
            const request2 = sp.entity().createLogoutRequest(sp.idp as IdentityProviderInstance, 'redirect', { logoutNameID: 'alice' });
            const answered = await visit(browser, standIn, await browser.request(request2.context));
            const sls = new URL(answered.last.headers.location ?? '');
            expect(`${sls.origin}${sls.pathname}`).to.equal(slsUrl);
            const logoutResponse = Zlib.inflateRawSync(Buffer.from(sls.searchParams.get('SAMLResponse') ?? '', 'base64')).toString('utf8');
            expect(logoutResponse).to.contain(`InResponseTo="${request2.id}"`);
        } finally {
            await api.providers.providersSamlPartialUpdateRaw({
                id,
                patchedSAMLProviderRequest: { spBinding: SAMLBindingsEnum.Post, slsUrl: '' },
            });
        }

        expect(standIn.violations).to.equal([]);
    });
});
