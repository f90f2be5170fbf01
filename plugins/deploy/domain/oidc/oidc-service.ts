import type * as OpenId from 'openid-client';

import type { AddressKind } from '../../../../lib/addresses.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { settings } from '../../../../lib/settings.ts';
import { allowedProviderKinds, guardedProviderFetch } from './provider-fetch.ts';
import { Service } from '../../../../lib/service.ts';

const SETTINGS_NAME = 'deploy.oidc';
const CLIENT_SECRET_NAME = 'deploy.oidc.client_secret';
const SCOPE = 'openid email profile';
const PENDING_LIFETIME_MS = 10 * 60_000;
const REQUEST_TIMEOUT_SECONDS = 10;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** The one answer of a test that failed past the issuer URL's own checks. */
const DISCOVERY_FAILED = "the issuer's discovery document could not be read (the server log has the details)";

export interface OidcSettings {
    enabled: boolean;
    issuer: string;
    clientId: string;
}

export interface OidcSettingsView extends OidcSettings {
    hasClientSecret: boolean;
    redirectUri: string;
}

/** Fields left out keep their value; an empty `clientSecret` removes the stored one. */
export interface OidcSettingsChange {
    enabled?: boolean;
    issuer?: string;
    clientId?: string;
    clientSecret?: string;
}

export type ClientSecretChange = 'kept' | 'replaced' | 'removed';

/** What the browser carries, sealed, from the start of a sign-in to its callback. */
export interface PendingSignIn {
    state: string;
    nonce: string;
    codeVerifier: string;
    expiresAt: number;
}

export interface DiscoveryReport {
    ok: boolean;
    issuer: string;
    authorizationEndpoint?: string;
    error?: string;
}

/** A refused sign-in: the reason goes to the audit log only; the browser just learns that it failed. */
export class OidcSignInError extends Error {
    constructor(
        readonly reason: string,
        readonly email = '',
    ) {
        super(reason);
        this.name = 'OidcSignInError';
    }
}

interface IdentityClaims {
    email?: string;
    emailVerified: boolean;
}

export function isLoopbackUrl(url: URL): boolean {
    return LOOPBACK_HOSTS.has(url.hostname);
}

/** HTTPS, or plain HTTP to a provider on this machine (a local provider, the tests). */
function isAllowedTransport(url: URL): boolean {
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackUrl(url));
}

function parseIssuer(issuer: string): URL {
    let url: URL;
    try {
        url = new URL(issuer);
    } catch {
        throw new ValidationError('issuer: not a URL');
    }

    if (!isAllowedTransport(url)) {
        throw new ValidationError('issuer: must use https (http only on loopback)');
    }

    if (url.search || url.hash || url.username || url.password) {
        throw new ValidationError('issuer: must not carry a query, a fragment or credentials');
    }

    return url;
}

function checkSettings(next: OidcSettings): void {
    if (next.issuer) {
        parseIssuer(next.issuer);
    }

    if (next.enabled && (!next.issuer || !next.clientId)) {
        throw new ValidationError('issuer and clientId are required to enable OIDC sign-in');
    }
}

function describe(error: unknown): string {
    if (!(error instanceof Error)) {
        return String(error);
    }

    return error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message;
}

/** The endpoints the server and the browser will use must meet the same transport rule as the issuer. */
/** openid-client is loaded by the first sign-in or test of the provider, not at start (with jose, about 5 MB). */
async function openIdClient(): Promise<typeof OpenId> {
    return await import('openid-client');
}

function checkEndpoints(config: OpenId.Configuration): void {
    const metadata = config.serverMetadata();
    const endpoints = [metadata.authorization_endpoint, metadata.token_endpoint, metadata.userinfo_endpoint, metadata.jwks_uri];
    for (const endpoint of endpoints) {
        if (endpoint !== undefined && !isAllowedTransport(new URL(endpoint))) {
            throw new Error(`the provider's endpoint ${endpoint} must use https`);
        }
    }
}

interface DiscoverRequest {
    issuer: URL;
    clientId: string;
    clientSecret?: string;
    /** The kinds of address the provider may have (provider-fetch.ts). */
    allowedKinds: Set<AddressKind>;
}

async function discover({ issuer, clientId, clientSecret, allowedKinds }: DiscoverRequest): Promise<OpenId.Configuration> {
    const client = await openIdClient();
    // client_secret_basic is what OpenID Connect assumes when a client registers no other method.
    const authentication = clientSecret ? client.ClientSecretBasic(clientSecret) : client.None();
    // parseIssuer lets plain http through for loopback hosts only; checkEndpoints holds the endpoints to the same rule.
    const execute = issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [];
    const config = await client.discovery(issuer, clientId, undefined, authentication, {
        execute,
        timeout: REQUEST_TIMEOUT_SECONDS,
        // Kept by the configuration for every later request to the provider (keys, tokens, user info).
        [client.customFetch]: guardedProviderFetch(allowedKinds),
    });
    checkEndpoints(config);
    return config;
}

function isPendingSignIn(value: unknown): value is PendingSignIn {
    const pending = (typeof value === 'object' && value !== null ? value : {}) as Partial<PendingSignIn>;
    return (
        typeof pending.state === 'string' &&
        typeof pending.nonce === 'string' &&
        typeof pending.codeVerifier === 'string' &&
        typeof pending.expiresAt === 'number'
    );
}

function readPending(value: unknown): PendingSignIn {
    if (!isPendingSignIn(value)) {
        throw new OidcSignInError('no sign-in in progress in this browser');
    }

    if (value.expiresAt <= Date.now()) {
        throw new OidcSignInError('the sign-in took too long');
    }

    return value;
}

function stringClaim(value: unknown): string | undefined {
    return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function verifiedEmail(claims: IdentityClaims): string {
    if (!claims.email) {
        throw new OidcSignInError('the identity provider sent no e-mail');
    }

    const email = claims.email.toLowerCase();
    if (!claims.emailVerified) {
        throw new OidcSignInError('the e-mail is not verified by the identity provider', email);
    }

    return email;
}

/**
 * The deploy manager's own sign-in through an OpenID Connect provider (openid-client): authorization code
 * with PKCE (S256), state and nonce; the ID token's issuer, audience and nonce are checked by the library.
 * A user is matched by a verified e-mail to an existing, active deploy user; nobody is created.
 */
export class OidcService extends Service {
    get redirectUri(): string {
        return new URL('api/auth/oidc/callback', this.server.app.config.publicUrl).href;
    }

    get homeUrl(): string {
        return this.server.app.config.publicUrl;
    }

    get failureUrl(): string {
        return new URL('?signin=failed', this.server.app.config.publicUrl).href;
    }

    async view(): Promise<OidcSettingsView> {
        const stored = await this.#stored();
        const hasClientSecret = (await settings(this.server).get<string>(CLIENT_SECRET_NAME)) !== undefined;
        return { ...stored, hasClientSecret, redirectUri: this.redirectUri };
    }

    async update(change: OidcSettingsChange): Promise<{ view: OidcSettingsView; clientSecretChange: ClientSecretChange }> {
        const current = await this.#stored();
        const next: OidcSettings = {
            enabled: change.enabled ?? current.enabled,
            issuer: (change.issuer ?? current.issuer).trim(),
            clientId: (change.clientId ?? current.clientId).trim(),
        };
        checkSettings(next);
        await settings(this.server).set(SETTINGS_NAME, next);
        const clientSecretChange = await this.#changeClientSecret(change.clientSecret);
        return { view: await this.view(), clientSecretChange };
    }

    /**
     * Discovers the given issuer, or the stored one; reports instead of throwing, and stores nothing. Every failure
     * past the URL's own checks answers the same words (the details go to the server log): what went wrong would
     * otherwise tell an open port from a closed one.
     */
    async test(issuer?: string): Promise<DiscoveryReport> {
        const stored = await this.#stored();
        const target = issuer?.trim() || stored.issuer;
        if (!target) {
            return { ok: false, issuer: '', error: 'no issuer is configured' };
        }

        let url: URL;
        try {
            url = parseIssuer(target);
        } catch (error) {
            return { ok: false, issuer: target, error: (error as Error).message };
        }

        try {
            // Discovery needs a client id but sends none; a placeholder will do before one is set.
            const config = await discover({
                issuer: url,
                clientId: stored.clientId || 'gatehouse',
                allowedKinds: await this.#allowedKinds(),
            });
            const metadata = config.serverMetadata();
            return { ok: true, issuer: metadata.issuer, authorizationEndpoint: metadata.authorization_endpoint };
        } catch (error) {
            this.server.log(['warn', 'oidc'], `OIDC test: discovery of ${target} failed: ${describe(error)}`);
            return { ok: false, issuer: target, error: DISCOVERY_FAILED };
        }
    }

    async begin(): Promise<{ authorizationUrl: string; pending: PendingSignIn }> {
        const config = await this.#configuration();
        const client = await openIdClient();
        const pending: PendingSignIn = {
            state: client.randomState(),
            nonce: client.randomNonce(),
            codeVerifier: client.randomPKCECodeVerifier(),
            expiresAt: Date.now() + PENDING_LIFETIME_MS,
        };
        const authorizationUrl = client.buildAuthorizationUrl(config, {
            redirect_uri: this.redirectUri,
            scope: SCOPE,
            state: pending.state,
            nonce: pending.nonce,
            code_challenge: await client.calculatePKCECodeChallenge(pending.codeVerifier),
            code_challenge_method: 'S256',
        });
        return { authorizationUrl: authorizationUrl.href, pending };
    }

    /**
     * Completes a sign-in from the callback's query string: the e-mail the identity provider vouches for (verified,
     * in lower case), whose user the accounts' sign-in looks up; throws OidcSignInError when it is refused.
     */
    async complete(pendingValue: unknown, callbackQuery: string): Promise<string> {
        const pending = readPending(pendingValue);
        const config = await this.#configuration();
        return verifiedEmail(await this.#identityClaims(config, pending, callbackQuery));
    }

    async #allowedKinds(): Promise<Set<AddressKind>> {
        return await allowedProviderKinds(this.server.app.config.publicUrl);
    }

    async #stored(): Promise<OidcSettings> {
        const stored = await settings(this.server).get<Partial<OidcSettings>>(SETTINGS_NAME);
        return { enabled: stored?.enabled === true, issuer: stored?.issuer ?? '', clientId: stored?.clientId ?? '' };
    }

    async #changeClientSecret(clientSecret: string | undefined): Promise<ClientSecretChange> {
        if (clientSecret === undefined) {
            return 'kept';
        }

        if (clientSecret === '') {
            await settings(this.server).remove(CLIENT_SECRET_NAME);
            return 'removed';
        }

        await settings(this.server).setSecret(CLIENT_SECRET_NAME, clientSecret);
        return 'replaced';
    }

    async #configuration(): Promise<OpenId.Configuration> {
        const stored = await this.#stored();
        if (!stored.enabled || !stored.issuer || !stored.clientId) {
            throw new OidcSignInError('OIDC sign-in is not enabled');
        }

        try {
            const clientSecret = await settings(this.server).getSecret(CLIENT_SECRET_NAME);
            const issuer = parseIssuer(stored.issuer);
            return await discover({ issuer, clientId: stored.clientId, clientSecret, allowedKinds: await this.#allowedKinds() });
        } catch (error) {
            throw new OidcSignInError(`the identity provider could not be reached: ${describe(error)}`);
        }
    }

    async #identityClaims(config: OpenId.Configuration, pending: PendingSignIn, callbackQuery: string): Promise<IdentityClaims> {
        // The callback URL as registered (publicUrl), not as hapi saw it behind the proxy: the library sends it as redirect_uri.
        const callbackUrl = new URL(this.redirectUri);
        callbackUrl.search = callbackQuery;
        const client = await openIdClient();
        try {
            const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
                pkceCodeVerifier: pending.codeVerifier,
                expectedState: pending.state,
                expectedNonce: pending.nonce,
                idTokenExpected: true,
            });
            const idToken = tokens.claims();
            if (!idToken) {
                throw new Error('no ID token');
            }

            if (typeof idToken.email === 'string' && typeof idToken.email_verified === 'boolean') {
                return { email: stringClaim(idToken.email), emailVerified: idToken.email_verified };
            }

            // Providers that follow the spec strictly put scope claims in the userinfo answer only.
            const userInfo = await client.fetchUserInfo(config, tokens.access_token, idToken.sub);
            return { email: stringClaim(userInfo.email), emailVerified: userInfo.email_verified === true };
        } catch (error) {
            throw new OidcSignInError(`the identity provider's answer was refused: ${describe(error)}`);
        }
    }
}

export const oidc = defineService<OidcService>('deployOidc', (owner) => new OidcService(owner));
