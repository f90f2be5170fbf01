/**
 * What the stand-in keeps, as authentik's database would: one array per object family. Each record holds the
 * fields an API request may write, under their API names, plus what authentik keeps beside them (a user's password,
 * a token's key, a provider's client id); read-only API fields are computed when a record is shown.
 */
import Crypto from 'node:crypto';

import type { Json } from './http.ts';

export type UserType = 'internal' | 'external' | 'service_account' | 'internal_service_account';
export type FlowDesignation =
    'authentication' | 'authorization' | 'invalidation' | 'enrollment' | 'unenrollment' | 'recovery' | 'stage_configuration';
export type TokenIntent = 'verification' | 'api' | 'recovery' | 'app_password';
export type ProxyMode = 'proxy' | 'forward_single' | 'forward_domain';

export interface UserRecord {
    pk: number;
    uuid: string;
    username: string;
    name: string;
    email: string;
    password: string;
    is_active: boolean;
    type: UserType;
    path: string;
    attributes: Json;
    date_joined: string;
    last_login: string | null;
    last_updated: string;
    password_change_date: string;
}

export interface GroupRecord {
    pk: string;
    num_pk: number;
    name: string;
    is_superuser: boolean;
    /** Member user pks. */
    users: number[];
    attributes: Json;
}

export interface TokenRecord {
    pk: string;
    identifier: string;
    key: string;
    intent: TokenIntent;
    user: number;
    description: string;
    expires: string | null;
    expiring: boolean;
    managed: string | null;
}

export interface FlowRecord {
    pk: string;
    slug: string;
    name: string;
    title: string;
    designation: FlowDesignation;
    authentication: string;
}

export interface KeypairRecord {
    pk: string;
    name: string;
    private_key_available: boolean;
    managed: string | null;
    fingerprint_sha256: string;
    fingerprint_sha1: string;
    cert_expiry: string;
    cert_subject: string;
}

export interface OutpostRecord {
    pk: string;
    name: string;
    type: 'proxy' | 'ldap' | 'radius' | 'rac';
    providers: number[];
    service_connection: string | null;
    config: Json;
    managed: string | null;
}

/** What every kind of provider has (authentik's Provider model). */
export interface ProviderBase {
    pk: number;
    name: string;
    authentication_flow: string | null;
    authorization_flow: string;
    invalidation_flow: string;
    property_mappings: string[];
}

export interface ProxyProviderRecord extends ProviderBase {
    kind: 'proxy';
    /** Set by authentik (`set_oauth_defaults`): the outpost logs users in as an OAuth client. */
    client_id: string;
    client_secret: string;
    internal_host: string;
    external_host: string;
    internal_host_ssl_validation: boolean;
    certificate: string | null;
    skip_path_regex: string;
    basic_auth_enabled: boolean;
    basic_auth_password_attribute: string;
    basic_auth_user_attribute: string;
    mode: ProxyMode;
    intercept_header_auth: boolean;
    cookie_domain: string;
    jwt_federation_sources: string[];
    jwt_federation_providers: number[];
    access_token_validity: string;
    refresh_token_validity: string;
}

export type SubMode = 'hashed_user_id' | 'user_id' | 'user_uuid' | 'user_username' | 'user_email' | 'user_upn';

/** One entry of an OAuth2 provider's `redirect_uris`: a URL compared exactly, or a regular expression matched whole. */
export interface RedirectUri {
    matching_mode: 'strict' | 'regex';
    url: string;
    redirect_uri_type: 'authorization' | 'logout';
}

export interface OAuth2ProviderRecord extends ProviderBase {
    kind: 'oauth2';
    client_type: 'confidential' | 'public';
    grant_types: string[];
    client_id: string;
    client_secret: string;
    access_code_validity: string;
    access_token_validity: string;
    refresh_token_validity: string;
    refresh_token_threshold: string;
    include_claims_in_id_token: boolean;
    signing_key: string | null;
    encryption_key: string | null;
    redirect_uris: RedirectUri[];
    logout_uri: string;
    logout_method: 'backchannel' | 'frontchannel';
    sub_mode: SubMode;
    issuer_mode: 'global' | 'per_provider';
    jwt_federation_sources: string[];
    jwt_federation_providers: number[];
}

export type SamlBinding = 'redirect' | 'post';

export interface SamlProviderRecord extends ProviderBase {
    kind: 'saml';
    /**
     * No client id: declared only so that code comparing client ids across `store.providers` reads undefined here.
     */
    client_id?: never;
    acs_url: string;
    sls_url: string;
    audience: string;
    /** The entity ID up to 2026.5.0-rc1 (default "authentik"); shown only by those versions. */
    issuer: string;
    /** The entity ID from 2026.5: empty means the application's metadata URL. */
    issuer_override: string;
    assertion_valid_not_before: string;
    assertion_valid_not_on_or_after: string;
    session_valid_not_on_or_after: string;
    name_id_mapping: string | null;
    authn_context_class_ref_mapping: string | null;
    digest_algorithm: string;
    signature_algorithm: string;
    signing_kp: string | null;
    verification_kp: string | null;
    encryption_kp: string | null;
    sign_assertion: boolean;
    sign_response: boolean;
    sign_logout_request: boolean;
    sign_logout_response: boolean;
    sp_binding: SamlBinding;
    sls_binding: SamlBinding;
    logout_method: 'frontchannel_iframe' | 'frontchannel_native' | 'backchannel';
    default_relay_state: string;
    default_name_id_policy: string;
}

/** Every kind of provider the stand-in serves. */
export type ProviderRecord = ProxyProviderRecord | OAuth2ProviderRecord | SamlProviderRecord;

/** A scope mapping (`ScopeMapping`): the claims a scope adds, from a Python expression authentik runs. */
export interface ScopeMappingRecord {
    pk: string;
    managed: string | null;
    name: string;
    expression: string;
    scope_name: string;
    description: string;
}

/** A SAML property mapping (`SAMLPropertyMapping`): one assertion attribute, from a Python expression authentik runs. */
export interface SamlMappingRecord {
    pk: string;
    managed: string | null;
    name: string;
    expression: string;
    saml_name: string;
    friendly_name: string | null;
}

export interface ApplicationRecord {
    /** The pbm_uuid: policy bindings target it. */
    pk: string;
    name: string;
    slug: string;
    provider: number | null;
    backchannel_providers: number[];
    open_in_new_tab: boolean;
    meta_launch_url: string;
    meta_icon: string;
    meta_description: string;
    meta_publisher: string;
    policy_engine_mode: 'any' | 'all';
    group: string;
    meta_hide: boolean;
}

export interface BindingRecord {
    pk: string;
    target: string;
    order: number;
    policy: string | null;
    group: string | null;
    user: number | null;
    negate: boolean;
    enabled: boolean;
    timeout: number;
    failure_result: boolean;
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A random string of letters and digits, as authentik's `generate_id`. */
export function generateId(length = 40): string {
    return Array.from(Crypto.randomBytes(length), (byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('');
}

export const uuid = (): string => Crypto.randomUUID();
export const timestamp = (offsetMs = 0): string => new Date(Date.now() + offsetMs).toISOString();

export class Store {
    readonly users: UserRecord[] = [];
    readonly groups: GroupRecord[] = [];
    readonly tokens: TokenRecord[] = [];
    readonly flows: FlowRecord[] = [];
    readonly keypairs: KeypairRecord[] = [];
    readonly outposts: OutpostRecord[] = [];
    readonly providers: ProviderRecord[] = [];
    readonly applications: ApplicationRecord[] = [];
    readonly bindings: BindingRecord[] = [];
    readonly scopeMappings: ScopeMappingRecord[] = [];
    readonly samlMappings: SamlMappingRecord[] = [];
    readonly installId = uuid();
    #lastUserPk = 0;
    #lastGroupNumPk = 0;
    #lastProviderPk = 0;

    constructor(
        /** The stand-in's own URL, without a trailing slash. */
        readonly url: string,
        readonly version: string,
    ) {}

    nextUserPk(): number {
        return ++this.#lastUserPk;
    }

    nextGroupNumPk(): number {
        return ++this.#lastGroupNumPk;
    }

    nextProviderPk(): number {
        return ++this.#lastProviderPk;
    }
}
