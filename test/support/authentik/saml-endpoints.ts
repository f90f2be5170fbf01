/**
 * authentik's SAML IdP behind each SAML provider, keyed by the application's slug, with the `samlify` library doing
 * the protocol (parsing requests, signing answers, writing metadata):
 * - `/application/saml/<slug>/sso/binding/redirect/`, `/post/` (SP-initiated) and `/init/` (IdP-initiated): as
 *   authentik's `PolicyAccessView`, a visitor not signed in is sent to the sign-in page and back (a POSTed request
 *   waits in a cookie-keyed stash, as authentik keeps it in the session), one the application's policy bindings
 *   refuse gets the 403 page, and only then is the AuthnRequest read: an AssertionConsumerServiceURL other than the
 *   provider's `acs_url` is refused with authentik's 400 page. The answer is authentik's SAML Response (NameID from
 *   `name_id_mapping` or the requested format, attributes from the SAML mappings, AudienceRestriction only with
 *   `audience` set), signed as `sign_assertion` / `sign_response` say with the signing keypair, sent to `acs_url` by
 *   an auto-submitting form (`sp_binding` post) or a redirect;
 * - `/application/saml/<slug>/slo/binding/redirect/` and `/post/`: a LogoutRequest ends at the invalidation flow's
 *   page, or, with `sls_url`, is answered with a LogoutResponse there (as `frontchannel_native`, whatever
 *   `logout_method` says; the authentik session stays, as in authentik);
 * - `/application/saml/<slug>/metadata/`: the redirect to the metadata download, and that download
 *   (`/api/v3/providers/saml/<id>/metadata/?download`), which the JSON-only admin API cannot answer.
 * Signed AuthnRequests (`verification_kp`) and encrypted assertions are not supported: refused as violations.
 */
import Crypto from 'node:crypto';
import Zlib from 'node:zlib';

import Samlify, { type IdentityProviderInstance } from 'samlify';

import { type AuthentikWeb, SESSION_COOKIE } from './authorization.ts';
import { privateKeyOf } from './crypto.ts';
import { userUid } from './directory.ts';
import { AUTHENTICATION_FLOW, findFlow } from './flows.ts';
import { clearCookie, escapeHtml, html, type Reply, redirect, setCookie, type WebRequest, writeReply } from './http.ts';
import { deniedPage, messagePage } from './login-page.ts';
import { durationMs } from './oauth2-providers.ts';
import type { RawHandler } from './openid-endpoints.ts';
import { passesPolicies } from './policies.ts';
import { applicationOf } from './providers.ts';
import { findSamlMapping, samlMappingValues } from './saml-mappings.ts';
import { issuerOf, NAME_ID_FORMAT, SAML_BINDING, samlMetadata, signingKeypairOf } from './saml-providers.ts';
import { type ApplicationRecord, generateId, type SamlProviderRecord, type Store, type UserRecord } from './store.ts';

// samlify refuses to parse without an XML schema validator. The ones it offers need xmllint (not installed here) or
// another package; the stand-in and its tests only exchange messages samlify itself wrote, so any XML is let through.
Samlify.setSchemaValidator({ validate: async () => 'not validated against the SAML schema (authentik stand-in)' });

const ROOT = /^\/application\/saml\/([-a-zA-Z0-9_]+)\/(.*)$/;
const API_METADATA = /^\/api\/v3\/providers\/saml\/([^/]+)\/metadata\/$/;
const STASH_COOKIE = 'authentik_saml_request';
const STASH_LIFETIME_MS = 10 * 60_000;
const PASSWORD_CONTEXT = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';

interface Served {
    provider: SamlProviderRecord;
    application: ApplicationRecord;
}

/** What authentik's `AuthNRequest` keeps of a request: none of it for an IdP-initiated login. */
interface AuthnRequest {
    id?: string;
    relayState?: string;
    nameIdPolicy?: string;
}

type Binding = 'redirect' | 'post';
type Extract = Awaited<ReturnType<IdentityProviderInstance['parseLoginRequest']>>['extract'];

/** The request's form, query or stash, read as the binding says. */
type Parameters = Record<string, string>;

const isReply = (value: object): value is Reply => 'status' in value;
const badRequest = (message: string): Reply => html(400, messagePage('Bad Request', message));
const notFound = (message: string): Reply => html(404, messagePage('Not found', message));

/** authentik's `get_time_string`: UTC to the second. */
const samlTime = (offsetMs = 0): string => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
const randomId = (): string => `_${Crypto.randomBytes(16).toString('hex')}`;
const sha256 = (text: string): string => Crypto.createHash('sha256').update(text).digest('hex');
const relayStateField = (relayState: string | undefined): Parameters => (relayState ? { RelayState: relayState } : {});
/** What samlify reads of a parsed request when it answers one: its ID, for InResponseTo. */
const requestInfo = (id: string | undefined): { extract: { request: Record<string, string> } } => ({
    extract: { request: id === undefined ? {} : { id } },
});

function autosubmitPage(title: string, action: string, fields: Parameters): string {
    const inputs = Object.entries(fields).map(
        ([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`,
    );
    return [
        '<!DOCTYPE html>',
        '<html lang="en">',
        `<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>`,
        `<body><main><h1>${escapeHtml(title)}</h1>`,
        `<form method="post" action="${escapeHtml(action)}">`,
        ...inputs,
        '<button type="submit">Continue</button>',
        '</form>',
        '<script>document.forms[0].submit();</script>',
        '</main></body></html>',
    ].join('\n');
}

/** Whichever answer a binding gives: the auto-submitting form (post) or the redirect. */
function deliver(binding: Binding, title: string, url: string, fields: Parameters): Reply {
    if (binding === 'post') return html(200, autosubmitPage(title, url, fields));
    return redirect(`${url}${url.includes('?') ? '&' : '?'}${new URLSearchParams(fields)}`);
}

export class SamlEndpoints {
    /** POSTed AuthnRequests of visitors sent to sign in first, by the key in their STASH_COOKIE. */
    readonly #stash = new Map<string, { form: Parameters; expiresAt: number }>();

    constructor(
        private readonly store: Store,
        private readonly web: AuthentikWeb,
        /** Told what the stand-in cannot do and what fails inside it. */
        private readonly violation: (text: string) => void,
    ) {}

    /** The handler of a request this part serves, or undefined for the rest of the stand-in. */
    route(request: WebRequest): RawHandler | undefined {
        const path = request.url.pathname;
        const download = API_METADATA.exec(path)?.[1];
        if (download !== undefined && request.method === 'GET' && request.url.searchParams.has('download')) {
            return this.#handler(() => this.#download(download, request.url.searchParams.get('force_binding')));
        }

        const [, slug, rest] = ROOT.exec(path) ?? [];
        if (slug === undefined || rest === undefined) return undefined;
        return this.#handler(() => this.#byPath(request, slug, rest));
    }

    #handler(answer: () => Promise<Reply> | Reply): RawHandler {
        return async (_raw, response) => {
            writeReply(response, await answer());
        };
    }

    async #byPath(request: WebRequest, slug: string, rest: string): Promise<Reply> {
        const served = this.#served(slug);
        if (!served) return notFound('No SAML provider has this application.');
        switch (rest) {
            case 'metadata/':
                return redirect(`/api/v3/providers/saml/${served.provider.pk}/metadata/?download`);
            case 'sso/binding/redirect/':
                return await this.#signOn(request, served, 'redirect');
            case 'sso/binding/post/':
                return await this.#signOn(request, served, 'post');
            case 'sso/binding/init/':
                return await this.#signOn(request, served, 'init');
            case 'slo/binding/redirect/':
                return await this.#logOut(request, served, 'redirect');
            case 'slo/binding/post/':
                return await this.#logOut(request, served, 'post');
            default:
                return notFound('Not found.');
        }
    }

    #served(slug: string): Served | undefined {
        const application = this.store.applications.find((candidate) => candidate.slug === slug);
        const provider = this.store.providers.find((candidate) => candidate.pk === application?.provider);
        return application && provider?.kind === 'saml' ? { provider, application } : undefined;
    }

    /** The metadata download: JSON `{"metadata": ""}` without an application, as authentik answers it. */
    #download(id: string, forceBinding: string | null): Reply {
        const provider = this.store.providers.find((candidate) => String(candidate.pk) === id);
        if (provider?.kind !== 'saml') return { status: 404, body: { detail: 'Not found.' } };
        const application = applicationOf(this.store, provider);
        if (!application) return { status: 200, body: { metadata: '' } };
        const disposition = `attachment; filename="${provider.name}_authentik_meta.xml"`;
        return {
            status: 200,
            headers: { 'content-type': 'application/xml', 'content-disposition': disposition },
            body: samlMetadata(this.store, provider, application, forceBinding ?? undefined),
        };
    }

    /** The checks of authentik's `PolicyAccessView`, in its order: signed in, then allowed. */
    #gate(request: WebRequest, served: Served, cookies: string[] = []): UserRecord | Reply {
        const user = this.web.sessionUser(request);
        if (!user) {
            const next = `${request.url.pathname}${request.url.search}`;
            return redirect(`${this.store.url}/if/flow/${AUTHENTICATION_FLOW}/?${new URLSearchParams({ next })}`, cookies);
        }

        return passesPolicies(this.store, served.application, user) ? user : html(403, deniedPage());
    }

    /**
     * The POSTed form, or the one stashed before the visitor was sent to sign in (taken once); a visitor not signed
     * in gets it stashed (again) under a new cookie, as authentik keeps the POST body in the session.
     */
    #postBinding(request: WebRequest): { form: Parameters; cookies: string[] } {
        const key = request.cookies.get(STASH_COOKIE);
        const stashed = key ? this.#stash.get(key) : undefined;
        if (key) this.#stash.delete(key);
        const restored = stashed !== undefined && stashed.expiresAt > Date.now();
        const form = restored ? stashed.form : request.method === 'POST' ? Object.fromEntries(new URLSearchParams(request.body)) : {};
        if (!this.web.sessionUser(request) && form.SAMLRequest !== undefined) {
            const newKey = generateId(32);
            this.#stash.set(newKey, { form, expiresAt: Date.now() + STASH_LIFETIME_MS });
            return { form, cookies: [setCookie(STASH_COOKIE, newKey)] };
        }

        return { form, cookies: restored ? [clearCookie(STASH_COOKIE)] : [] };
    }

    async #signOn(request: WebRequest, served: Served, binding: Binding | 'init'): Promise<Reply> {
        const { form, cookies } =
            binding === 'post' ? this.#postBinding(request) : { form: Object.fromEntries(request.url.searchParams), cookies: [] };
        const user = this.#gate(request, served, cookies);
        if (isReply(user)) return user;
        const authnRequest =
            binding === 'init'
                ? { relayState: served.provider.default_relay_state || undefined }
                : await this.#readAuthnRequest(served, binding, form);
        const answer = isReply(authnRequest) ? authnRequest : await this.#answer(served, user, authnRequest, request);
        return cookies.length > 0 ? { ...answer, headers: { ...answer.headers, 'set-cookie': cookies } } : answer;
    }

    /** `AuthNRequestParser`: decoded, parsed, and its ACS URL the provider's (compared without case). */
    async #readAuthnRequest(served: Served, binding: Binding, parameters: Parameters): Promise<AuthnRequest | Reply> {
        const { provider, application } = served;
        if (parameters.SAMLRequest === undefined) return badRequest('The SAML request payload is missing.');
        if (provider.verification_kp) {
            this.violation(`the SAML provider ${provider.name} has a verification_kp: the stand-in does not verify signed AuthnRequests`);
            return badRequest('the authentik stand-in does not verify signed AuthnRequests (verification_kp)');
        }

        let extract: Extract;
        try {
            const idp = Samlify.IdentityProvider({ metadata: samlMetadata(this.store, provider, application) });
            const sp = Samlify.ServiceProvider({ entityID: 'unknown' });
            const request = binding === 'post' ? { body: parameters } : { query: parameters };
            ({ extract } = await idp.parseLoginRequest(sp, binding, request));
        } catch {
            return badRequest('Cannot decode SAML request.');
        }

        const fields = (extract.request ?? {}) as Record<string, string | undefined>;
        const acsUrl = fields.assertionConsumerServiceUrl ?? provider.acs_url;
        if (acsUrl.toLowerCase() !== provider.acs_url.toLowerCase()) {
            return badRequest(`ACS URL of ${acsUrl} doesn't match Provider ACS URL of ${provider.acs_url}.`);
        }

        const policy = (extract.nameIDPolicy ?? {}) as Record<string, string | undefined>;
        return { id: fields.id, relayState: parameters.RelayState, nameIdPolicy: policy.format };
    }

    /** `SAMLFlowFinalView`: the signed Response, to the ACS by the provider's binding. */
    async #answer(served: Served, user: UserRecord, authnRequest: AuthnRequest, request: WebRequest): Promise<Reply> {
        const { provider, application } = served;
        const sessionKey = request.cookies.get(SESSION_COOKIE) ?? '';
        const xml = this.#responseXml(served, user, authnRequest, sha256(sessionKey));
        const relayState = authnRequest.relayState;
        const title = `Redirecting to ${application.name}...`;
        const keypair = signingKeypairOf(this.store, provider);
        const privateKey = keypair && privateKeyOf(keypair);
        if (!keypair || !privateKey) {
            const encoded =
                provider.sp_binding === 'post'
                    ? Buffer.from(xml).toString('base64')
                    : Zlib.deflateRawSync(Buffer.from(xml)).toString('base64');
            return deliver(provider.sp_binding, title, provider.acs_url, { SAMLResponse: encoded, ...relayStateField(relayState) });
        }

        const idp = Samlify.IdentityProvider({
            metadata: samlMetadata(this.store, provider, application),
            privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }),
            requestSignatureAlgorithm: provider.signature_algorithm,
        });
        const sp = Samlify.ServiceProvider({
            entityID: provider.audience || 'unknown',
            assertionConsumerService: [{ Binding: SAML_BINDING[provider.sp_binding], Location: provider.acs_url }],
            wantAssertionsSigned: provider.sign_assertion,
            wantMessageSigned: provider.sign_response,
        });
        const built = await idp.createLoginResponse(
            sp,
            requestInfo(authnRequest.id),
            provider.sp_binding,
            {},
            {
                relayState,
                customTagReplacement: () => ({ id: '', context: xml }),
            },
        );
        if (provider.sp_binding === 'redirect') return redirect(built.context);
        return deliver('post', title, provider.acs_url, { SAMLResponse: built.context, ...relayStateField(relayState) });
    }

    /** `AssertionProcessor.get_name_id`: the mapping's value, else by the requested format. */
    #nameId(provider: SamlProviderRecord, user: UserRecord, format: string, sessionHash: string): string {
        const persistent = userUid(this.store, user);
        const mapping = findSamlMapping(this.store, provider.name_id_mapping);
        if (mapping) return samlMappingValues(this.store, mapping, user)?.[0] ?? persistent;
        const attribute = (name: string) => (typeof user.attributes[name] === 'string' ? (user.attributes[name] as string) : persistent);
        switch (format) {
            case NAME_ID_FORMAT.email:
                return user.email;
            case NAME_ID_FORMAT.x509:
                return attribute('distinguishedName');
            case NAME_ID_FORMAT.windows:
                return attribute('upn');
            case NAME_ID_FORMAT.transient:
                return sessionHash;
            default:
                return persistent;
        }
    }

    /** `AssertionProcessor.get_attributes`: one Attribute per SAML mapping, ordered by `saml_name`. */
    #attributeStatement(provider: SamlProviderRecord, user: UserRecord): string {
        const mappings = provider.property_mappings
            .map((pk) => findSamlMapping(this.store, pk))
            .filter((mapping) => mapping !== undefined)
            .sort((a, b) => a.saml_name.localeCompare(b.saml_name));
        const attributes = mappings.flatMap((mapping) => {
            const values = samlMappingValues(this.store, mapping, user);
            if (!values) {
                this.violation(`the SAML mapping ${mapping.name} has an expression the stand-in cannot run`);
                return [];
            }

            const friendly = mapping.friendly_name ? ` FriendlyName="${escapeHtml(mapping.friendly_name)}"` : '';
            const valueXml = values.map((value) => `<saml:AttributeValue>${escapeHtml(value)}</saml:AttributeValue>`).join('');
            return [`<saml:Attribute Name="${escapeHtml(mapping.saml_name)}"${friendly}>${valueXml}</saml:Attribute>`];
        });
        return `<saml:AttributeStatement>${attributes.join('')}</saml:AttributeStatement>`;
    }

    /** `AssertionProcessor.get_response`, unsigned: samlify signs it. */
    #responseXml(served: Served, user: UserRecord, authnRequest: AuthnRequest, sessionHash: string): string {
        const { provider, application } = served;
        const offset = (validity: string) => durationMs(validity) ?? 0;
        const format = authnRequest.nameIdPolicy ?? provider.default_name_id_policy;
        const audience = provider.audience
            ? '<saml:AudienceRestriction><saml:Audience>{Audience}</saml:Audience></saml:AudienceRestriction>'
            : '';
        const template = [
            '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"',
            ' Version="2.0" IssueInstant="{IssueInstant}" Destination="{Destination}" ID="{ID}" InResponseTo="{InResponseTo}">',
            '<saml:Issuer>{Issuer}</saml:Issuer>',
            '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>',
            '<saml:Assertion Version="2.0" ID="{AssertionID}" IssueInstant="{IssueInstant}">',
            '<saml:Issuer>{Issuer}</saml:Issuer>',
            '<saml:Subject><saml:NameID Format="{NameIDFormat}">{NameID}</saml:NameID>',
            '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">',
            '<saml:SubjectConfirmationData InResponseTo="{InResponseTo}" NotOnOrAfter="{NotOnOrAfter}" Recipient="{Destination}"/>',
            '</saml:SubjectConfirmation></saml:Subject>',
            `<saml:Conditions NotBefore="{NotBefore}" NotOnOrAfter="{NotOnOrAfter}">${audience}</saml:Conditions>`,
            '<saml:AuthnStatement AuthnInstant="{AuthnInstant}" SessionIndex="{SessionIndex}" SessionNotOnOrAfter="{SessionNotOnOrAfter}">',
            `<saml:AuthnContext><saml:AuthnContextClassRef>${PASSWORD_CONTEXT}</saml:AuthnContextClassRef></saml:AuthnContext>`,
            '</saml:AuthnStatement><ATTRIBUTES/></saml:Assertion></samlp:Response>',
        ].join('');
        const xml = Samlify.SamlLib.replaceTagsByValue(template, {
            ID: randomId(),
            AssertionID: randomId(),
            IssueInstant: samlTime(),
            Destination: provider.acs_url,
            InResponseTo: authnRequest.id,
            Issuer: issuerOf(this.store, provider, application),
            NameIDFormat: format,
            NameID: this.#nameId(provider, user, format, sessionHash),
            NotBefore: samlTime(offset(provider.assertion_valid_not_before)),
            NotOnOrAfter: samlTime(offset(provider.assertion_valid_not_on_or_after)),
            Audience: provider.audience,
            AuthnInstant: user.last_login ? user.last_login.replace(/\.\d{3}Z$/, 'Z') : samlTime(),
            SessionIndex: sessionHash,
            SessionNotOnOrAfter: samlTime(offset(provider.session_valid_not_on_or_after)),
        });
        // After the tags: every value was escaped, so the marker can only be the template's own.
        const attributes = this.#attributeStatement(provider, user);
        return xml.replace('<ATTRIBUTES/>', () => attributes);
    }

    /** SP-initiated logout: a LogoutResponse to `sls_url`, or the invalidation flow's page without one. */
    async #logOut(request: WebRequest, served: Served, binding: Binding): Promise<Reply> {
        const parameters =
            binding === 'post' ? Object.fromEntries(new URLSearchParams(request.body)) : Object.fromEntries(request.url.searchParams);
        if (parameters.SAMLResponse !== undefined) return redirect(parameters.RelayState || '/if/user/');
        const user = this.#gate(request, served);
        if (isReply(user)) return user;
        if (parameters.SAMLRequest === undefined) return badRequest('The SAML request payload is missing.');
        const { provider, application } = served;
        const keypair = signingKeypairOf(this.store, provider);
        const privateKey = keypair && privateKeyOf(keypair);
        const idp = Samlify.IdentityProvider({
            metadata: samlMetadata(this.store, provider, application),
            ...(privateKey ? { privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }) } : {}),
            requestSignatureAlgorithm: provider.signature_algorithm,
        });
        const sp = Samlify.ServiceProvider({
            entityID: provider.audience || 'unknown',
            singleLogoutService: provider.sls_url ? [{ Binding: SAML_BINDING[provider.sls_binding], Location: provider.sls_url }] : [],
            wantLogoutResponseSigned: provider.sign_logout_response && privateKey !== undefined,
        });
        let requestId: string | undefined;
        try {
            const { extract } = await idp.parseLogoutRequest(
                sp,
                binding,
                binding === 'post' ? { body: parameters } : { query: parameters },
            );
            requestId = (extract.request as Record<string, string | undefined> | undefined)?.id;
        } catch {
            return badRequest('Cannot decode SAML request.');
        }

        if (!provider.sls_url) {
            const flow = findFlow(this.store, provider.invalidation_flow);
            return redirect(`${this.store.url}/if/flow/${flow?.slug ?? ''}/`);
        }

        const built = idp.createLogoutResponse(sp, requestInfo(requestId), provider.sls_binding, parameters.RelayState ?? '');
        if (provider.sls_binding === 'redirect') return redirect(built.context);
        const fields = { SAMLResponse: built.context, ...relayStateField(parameters.RelayState) };
        return deliver('post', `Logging out of ${application.name}...`, provider.sls_url, fields);
    }
}
