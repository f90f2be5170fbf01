/**
 * SAML providers: `/providers/saml/` and their metadata. authentik's rules beside the schema: the flows, keypairs
 * and mappings named must exist, names are unique across kinds, URLs are http(s), validity fields read as
 * `minutes=-5`, and a signing keypair needs `sign_assertion` or `sign_response` in the same request (the serializer's
 * `validate` reads only the fields sent). The entity ID is `issuer` (default "authentik") up to 2026.5.0-rc1, and
 * `issuer_override` from 2026.5 (empty: the application's metadata URL). saml-endpoints.ts serves the IdP side.
 */

import Samlify from 'samlify';

import type { ApiOperations } from './api.ts';
import { certificateOf } from './crypto.ts';
import { ApiError, fieldError, nonFieldError, unknownPk } from './errors.ts';
import type { Json } from './http.ts';
import { durationMs } from './oauth2-providers.ts';
import { applicationOf, checkFlows, checkUniqueName, providerOfKind, providerOperations, showProvider } from './providers.ts';
import { findSamlMapping } from './saml-mappings.ts';
import { findScopeMapping } from './scope-mappings.ts';
import type { ApplicationRecord, KeypairRecord, SamlProviderRecord, Store } from './store.ts';

/** The first version with `issuer_override` (and `url_issuer`, `url_unified`, `url_unified_init`) instead of `issuer`. */
const ISSUER_OVERRIDE_SINCE = [2026, 5];
/** authentik's `DEFAULT_ISSUER`: the entity ID of a provider without application or override. */
const DEFAULT_ISSUER = 'authentik';
const VALIDITY_FIELDS = ['assertion_valid_not_before', 'assertion_valid_not_on_or_after', 'session_valid_not_on_or_after'];
const URL_FIELDS = ['acs_url', 'sls_url'];
const KEYPAIR_FIELDS = ['signing_kp', 'verification_kp', 'encryption_kp'];
const MAPPING_FIELDS = ['name_id_mapping', 'authn_context_class_ref_mapping'];

export const NAME_ID_FORMAT = {
    email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
    x509: 'urn:oasis:names:tc:SAML:1.1:nameid-format:X509SubjectName',
    windows: 'urn:oasis:names:tc:SAML:2.0:nameid-format:WindowsDomainQualifiedName',
    transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
    unspecified: 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
};

export const SAML_BINDING = {
    redirect: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect',
    post: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST',
};

/** Whether the server has `issuer_override` (2026.5.0 and later; its release candidates still had `issuer`). */
export function usesIssuerOverride(version: string): boolean {
    if (/^2026\.5\.0-rc/.test(version)) return false;
    const [major = 0, minor = 0] = version.split('.').map(Number);
    const [sinceMajor = 0, sinceMinor = 0] = ISSUER_OVERRIDE_SINCE;
    return major > sinceMajor || (major === sinceMajor && minor >= sinceMinor);
}

/** Fresh each time: the model's defaults. */
const defaults = (): Omit<SamlProviderRecord, 'pk' | 'kind' | 'name' | 'authorization_flow' | 'invalidation_flow' | 'acs_url'> => ({
    authentication_flow: null,
    property_mappings: [],
    sls_url: '',
    audience: '',
    issuer: DEFAULT_ISSUER,
    issuer_override: '',
    assertion_valid_not_before: 'minutes=-5',
    assertion_valid_not_on_or_after: 'minutes=5',
    session_valid_not_on_or_after: 'minutes=86400',
    name_id_mapping: null,
    authn_context_class_ref_mapping: null,
    digest_algorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
    signature_algorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    signing_kp: null,
    verification_kp: null,
    encryption_kp: null,
    sign_assertion: true,
    sign_response: false,
    sign_logout_request: false,
    sign_logout_response: false,
    sp_binding: 'redirect',
    sls_binding: 'redirect',
    logout_method: 'frontchannel_iframe',
    default_relay_state: '',
    default_name_id_policy: NAME_ID_FORMAT.unspecified,
});

/** The IdP's URLs of an application, below `/application/saml/<slug>/`. */
export function samlRoot(store: Store, application: ApplicationRecord): string {
    return `${store.url}/application/saml/${application.slug}`;
}

/** The entity ID the IdP answers with (`url_issuer` from 2026.5, `issuer` before). */
export function issuerOf(store: Store, provider: SamlProviderRecord, application = applicationOf(store, provider)): string {
    if (!usesIssuerOverride(store.version)) return provider.issuer;
    if (provider.issuer_override) return provider.issuer_override;
    return application ? `${samlRoot(store, application)}/metadata/` : DEFAULT_ISSUER;
}

/** The read-only URL fields: "-" without an application, as the serializer's `RelatedObjectDoesNotExist` branch. */
function urlFields(store: Store, provider: SamlProviderRecord): Json {
    const application = applicationOf(store, provider);
    const root = application ? samlRoot(store, application) : undefined;
    const at = (path: string) => (root ? `${root}/${path}` : '-');
    const apiDownload = `${store.url}/api/v3/providers/saml/${provider.pk}/metadata/?download`;
    const urls: Json = {
        url_sso_post: at('sso/binding/post/'),
        url_sso_redirect: at('sso/binding/redirect/'),
        url_sso_init: at('sso/binding/init/'),
        url_slo_post: at('slo/binding/post/'),
        url_slo_redirect: at('slo/binding/redirect/'),
    };
    if (!usesIssuerOverride(store.version)) {
        return { ...urls, url_download_metadata: apiDownload };
    }

    return {
        ...urls,
        url_download_metadata: root ? `${root}/metadata/` : apiDownload,
        url_issuer: issuerOf(store, provider, application),
        url_unified: root ? `${root}/` : '-',
        url_unified_init: at('init/'),
    };
}

export function showSamlProvider(store: Store, provider: SamlProviderRecord): Json {
    const { kind: _kind, issuer, issuer_override, ...fields } = provider;
    const entityId = usesIssuerOverride(store.version) ? { issuer_override } : { issuer };
    return { ...fields, ...entityId, ...urlFields(store, provider), ...showProvider(store, provider) };
}

const keypairExists = (store: Store, pk: unknown): boolean => store.keypairs.some((keypair) => keypair.pk === pk);

function checkReferences(store: Store, body: Json): void {
    for (const field of KEYPAIR_FIELDS) {
        const pk = body[field];
        if (pk !== undefined && pk !== null && !keypairExists(store, pk)) throw unknownPk(field, pk);
    }

    for (const field of MAPPING_FIELDS) {
        const pk = body[field];
        if (pk !== undefined && pk !== null && !findSamlMapping(store, pk)) throw unknownPk(field, pk);
    }

    // `Provider.property_mappings` takes any kind of property mapping; only the SAML ones add attributes.
    const unknown = ((body.property_mappings ?? []) as string[]).find((pk) => !findSamlMapping(store, pk) && !findScopeMapping(store, pk));
    if (unknown) throw unknownPk('property_mappings', unknown);
}

/** The serializer's field checks, then its `validate`, on the fields the request sent. */
function checkRequest(store: Store, body: Json, existing?: SamlProviderRecord): void {
    checkFlows(store, body);
    checkUniqueName(store, body.name, existing);
    for (const field of URL_FIELDS) {
        const value = body[field];
        if (typeof value === 'string' && value !== '' && !/^https?:$/i.test(URL.parse(value)?.protocol ?? '')) {
            throw fieldError(field, 'Enter a valid URL.');
        }
    }

    checkReferences(store, body);
    for (const field of VALIDITY_FIELDS) {
        const value = body[field];
        if (typeof value === 'string' && durationMs(value) === undefined) {
            throw fieldError(field, `${value} is not in the correct format of 'hours=3;minutes=1'.`);
        }
    }

    if (body.signing_kp && !body.sign_assertion && !body.sign_response) {
        throw nonFieldError("With a signing keypair selected, at least one of 'Sign assertion' and 'Sign Response' must be selected.");
    }

    if (body.encryption_kp) {
        const detail = 'the authentik stand-in does not encrypt assertions (encryption_kp)';
        throw new ApiError(400, { encryption_kp: [detail] }, detail);
    }
}

function create(store: Store, body: Json): SamlProviderRecord {
    checkRequest(store, body);
    // The schema checked the body's fields and their types, and the required ones are there.
    const provider = { ...defaults(), ...body, pk: store.nextProviderPk(), kind: 'saml' } as SamlProviderRecord;
    store.providers.push(provider);
    return provider;
}

function change(store: Store, provider: SamlProviderRecord, body: Json): void {
    checkRequest(store, body, provider);
    Object.assign(provider, body);
}

const SIMPLE_FILTERS = [
    'acs_url',
    'assertion_valid_not_before',
    'assertion_valid_not_on_or_after',
    'audience',
    'authentication_flow',
    'authn_context_class_ref_mapping',
    'authorization_flow',
    'default_name_id_policy',
    'default_relay_state',
    'digest_algorithm',
    'encryption_kp',
    'invalidation_flow',
    'issuer_override',
    'logout_method',
    'name',
    'name_id_mapping',
    'session_valid_not_on_or_after',
    'sign_assertion',
    'sign_logout_request',
    'sign_logout_response',
    'sign_response',
    'signature_algorithm',
    'signing_kp',
    'sls_binding',
    'sls_url',
    'sp_binding',
    'verification_kp',
] as const;

function filtered(store: Store, query: Record<string, unknown>): SamlProviderRecord[] {
    const mappings =
        Array.isArray(query.property_mappings) && query.property_mappings.length > 0 ? (query.property_mappings as string[]) : undefined;
    const isBackchannel = (provider: SamlProviderRecord) =>
        store.applications.some((application) => application.backchannel_providers.includes(provider.pk));
    return store.providers
        .filter((provider): provider is SamlProviderRecord => provider.kind === 'saml')
        .filter(
            (provider) =>
                SIMPLE_FILTERS.every((field) => query[field] === undefined || provider[field] === query[field]) &&
                (query.is_backchannel === undefined || isBackchannel(provider) === query.is_backchannel) &&
                (!mappings || provider.property_mappings.some((pk) => mappings.includes(pk))),
        );
}

export function signingKeypairOf(store: Store, provider: SamlProviderRecord): KeypairRecord | undefined {
    return store.keypairs.find((keypair) => keypair.pk === provider.signing_kp);
}

/** The IdP metadata authentik's `MetadataProcessor` builds (unsigned here), limited to one binding when forced. */
export function samlMetadata(store: Store, provider: SamlProviderRecord, application: ApplicationRecord, forceBinding?: string): string {
    const root = samlRoot(store, application);
    const services = (kind: 'sso' | 'slo') =>
        [
            { Binding: SAML_BINDING.redirect, Location: `${root}/${kind}/binding/redirect/` },
            { Binding: SAML_BINDING.post, Location: `${root}/${kind}/binding/post/` },
        ].filter((service) => !forceBinding || service.Binding === forceBinding);
    const keypair = signingKeypairOf(store, provider);
    const certificate = keypair && certificateOf(keypair);
    return Samlify.IdPMetadata({
        entityID: issuerOf(store, provider, application),
        ...(certificate ? { signingCert: certificate } : {}),
        wantAuthnRequestsSigned: provider.verification_kp !== null,
        nameIDFormat: [NAME_ID_FORMAT.email, NAME_ID_FORMAT.persistent, NAME_ID_FORMAT.x509, NAME_ID_FORMAT.transient],
        singleSignOnService: services('sso'),
        singleLogoutService: services('slo'),
        // The schema's order of IDPSSODescriptor's children, as authentik writes them.
        elementsOrder: Samlify.Constants.elementsOrder.idp.shibboleth,
    }).getMetadata();
}

export const samlProviderOperations: ApiOperations = {
    ...providerOperations<SamlProviderRecord>('providers_saml', { kind: 'saml', filtered, show: showSamlProvider, create, change }),

    // Without `download`; saml-endpoints.ts answers the XML download, which this JSON API cannot.
    providers_saml_metadata_retrieve: {
        access: 'anonymous',
        run(context) {
            const provider = providerOfKind<SamlProviderRecord>('saml', context);
            const application = applicationOf(context.store, provider);
            const forceBinding = typeof context.query.force_binding === 'string' ? context.query.force_binding : undefined;
            const metadata = application ? samlMetadata(context.store, provider, application, forceBinding) : '';
            return { status: 200, body: { metadata } };
        },
    },
};
