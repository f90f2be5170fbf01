/**
 * The connection to the identity provider: where it is, the token (sealed, never shown), and the outpost, flows and
 * signing key that apps' objects use. Nothing is saved until the provider has answered with the token.
 */

import { ValidationError } from '../../lib/errors.ts';
import { defineService } from '../../lib/services.ts';
import { settings } from '../../lib/settings.ts';
import { DEFAULT_IDP_KIND } from './forward-auth.ts';
import { findIdpKind, idpKindNames } from './idp-kinds.ts';
import { type Discovery, type FlowRef, type IdentityProvider, type IdentityProviderKind, IdpError, type NamedRef } from './idp-types.ts';
import { Service } from '../../lib/service.ts';

const CONNECTION = 'idp.connection';
const TOKEN = 'idp.token';
const GATEHOUSE_TOKEN = 'gatehouse-deploy-manager';
const HEALTH_TIMEOUT_MS = 3000;

export interface StoredConnection {
    kind: string;
    url: string;
    outpostUrl: string | null;
    outpost: NamedRef | null;
    authorizationFlow: Omit<FlowRef, 'name'> | null;
    invalidationFlow: Omit<FlowRef, 'name'> | null;
    signingKey: NamedRef | null;
    version: string;
    /** The identifier of the token Gatehouse created for itself (bootstrap), which a disconnect revokes. */
    tokenIdentifier: string | null;
}

export interface ConnectionChoice {
    /** The identity-provider kind (plugins/idp/providers/<kind>.ts); left out: the saved one, or authentik. */
    kind?: string;
    url: string;
    token?: string;
    outpostUrl?: string | null;
    outpost?: string;
    authorizationFlow?: string;
    invalidationFlow?: string;
    signingKey?: string;
}

export interface IdpHealth {
    status:
        'ok' | 'not-configured' | 'disconnected' | 'unreachable' | 'not-a-provider' | 'refused' | 'not-admin' | 'rejected' | 'not-found';
    message: string;
    checkedAt: string;
}

/** What the deploy manager needs to put an app behind the provider. */
export interface ActiveConnection {
    kind: string;
    url: string;
    token: string;
    outpostUrl: string;
    outpost: string;
    authorizationFlow: string;
    invalidationFlow: string;
    /** The keypair that signs OpenID tokens and SAML assertions; the provider's default when null. */
    signingKey: string | null;
}

function answering(title: string, version: string, url: string): IdpHealth {
    return { status: 'ok', message: `${title} ${version} at ${url} answers`, checkedAt: new Date().toISOString() };
}

function trimUrl(url: string): string {
    return url.replace(/\/+$/, '');
}

/** The kind of that name; one there is no file for is a ValidationError naming those there are. */
async function kindNamed(name: string): Promise<IdentityProviderKind> {
    const kind = await findIdpKind(name);
    if (!kind) {
        throw new ValidationError(`kind: there is no identity-provider kind ${name}; there are: ${idpKindNames().join(', ')}`);
    }

    return kind;
}

function pickNamed(
    options: NamedRef[],
    wanted: string | undefined,
    fallback: NamedRef | null | undefined,
    what: string,
    title: string,
): NamedRef | null {
    if (wanted !== undefined) {
        const found = options.find((option) => option.pk === wanted || option.name === wanted);
        if (!found) {
            throw new ValidationError(`${what}: ${title} has no ${what} ${wanted}`);
        }

        return { pk: found.pk, name: found.name };
    }

    const kept = fallback ? options.find((option) => option.pk === fallback.pk) : undefined;
    return kept ? { pk: kept.pk, name: kept.name } : null;
}

function pickFlow(
    options: FlowRef[],
    wanted: string | undefined,
    fallback: Omit<FlowRef, 'name'> | null | undefined,
    what: string,
    title: string,
) {
    if (wanted !== undefined) {
        const found = options.find((option) => option.pk === wanted || option.slug === wanted);
        if (!found) {
            throw new ValidationError(`${what}: ${title} has no such flow (${wanted})`);
        }

        return { pk: found.pk, slug: found.slug };
    }

    const kept = fallback ? options.find((option) => option.pk === fallback.pk) : undefined;
    return kept ? { pk: kept.pk, slug: kept.slug } : null;
}

export class IdpConnectionService extends Service {
    async stored(): Promise<StoredConnection | undefined> {
        return await settings(this.server).get<StoredConnection>(CONNECTION);
    }

    async #token(): Promise<string | undefined> {
        return await settings(this.server).getSecret(TOKEN);
    }

    /** The connection apps use, or undefined when no provider is connected. */
    async active(): Promise<ActiveConnection | undefined> {
        const [stored, token] = await Promise.all([this.stored(), this.#token()]);
        if (!stored || !token || !stored.outpost || !stored.authorizationFlow || !stored.invalidationFlow) {
            return undefined;
        }

        return {
            kind: stored.kind,
            url: stored.url,
            token,
            outpostUrl: stored.outpostUrl ?? stored.url,
            outpost: stored.outpost.pk,
            authorizationFlow: stored.authorizationFlow.pk,
            invalidationFlow: stored.invalidationFlow.pk,
            signingKey: stored.signingKey?.pk ?? null,
        };
    }

    /** The connected provider's client; a ValidationError when none is connected. */
    async client(): Promise<IdentityProvider> {
        const active = await this.active();
        if (!active) {
            throw new ValidationError('no identity provider is connected: an administrator connects one (Admin, Identity provider)');
        }

        return (await kindNamed(active.kind)).connect({ url: active.url, token: active.token });
    }

    /**
     * The connection as the API shows it, with the kinds there are to choose from; `health`, when the caller has just
     * heard from the provider, spares asking again.
     */
    async describe(health?: IdpHealth) {
        const [stored, token] = await Promise.all([this.stored(), this.#token()]);
        return {
            connected: Boolean(stored && token),
            kind: stored?.kind ?? DEFAULT_IDP_KIND,
            url: stored?.url ?? null,
            outpostUrl: stored ? (stored.outpostUrl ?? stored.url) : null,
            outpost: stored?.outpost ?? null,
            authorizationFlow: stored?.authorizationFlow ?? null,
            invalidationFlow: stored?.invalidationFlow ?? null,
            signingKey: stored?.signingKey ?? null,
            tokenSet: Boolean(token),
            version: stored?.version ?? null,
            health: health ?? (await this.health()),
            kinds: await Promise.all(idpKindNames().map(async (name) => ({ name, title: (await findIdpKind(name))?.title ?? name }))),
        };
    }

    async health(): Promise<IdpHealth> {
        const checkedAt = new Date().toISOString();
        const [stored, token] = await Promise.all([this.stored(), this.#token()]);
        if (!stored) {
            return { status: 'not-configured', message: 'no identity provider is connected', checkedAt };
        }

        if (!token) {
            return { status: 'disconnected', message: `the token for ${stored.url} was removed`, checkedAt };
        }

        try {
            const kind = await kindNamed(stored.kind);
            const { version } = await kind.connect({ url: stored.url, token }, { timeoutMs: HEALTH_TIMEOUT_MS }).checkAdmin();
            return answering(kind.title, version, stored.url);
        } catch (error) {
            const reason = error instanceof IdpError ? error.reason : 'rejected';
            return { status: reason, message: (error as Error).message, checkedAt };
        }
    }

    /** Tests a URL and token with a kind (left out: the saved one, or authentik); the provider's failures are 422s naming the cause. */
    async discover(kindName: string | undefined, url: string, token: string): Promise<Discovery> {
        const kind = await kindNamed(kindName ?? (await this.stored())?.kind ?? DEFAULT_IDP_KIND);
        return await asValidation(() => kind.connect({ url: trimUrl(url), token }).discover());
    }

    /** Connects and saves; choices left out keep their saved value, or take the provider's default (always, for a bootstrap). */
    async connect(choice: ConnectionChoice, bootstrapped?: { tokenIdentifier: string }) {
        const previous = bootstrapped ? undefined : await this.stored();
        const url = trimUrl(choice.url);
        const kindName = choice.kind ?? previous?.kind ?? DEFAULT_IDP_KIND;
        const kind = await kindNamed(kindName);
        const token = choice.token ?? (await this.#savedTokenFor(url, previous, kindName));
        const discovery = await this.discover(kindName, url, token);
        const defaults = kind.defaults(discovery);
        const outposts = discovery.outposts.filter((outpost) => outpost.type === 'proxy');
        const connection: StoredConnection = {
            kind: kindName,
            url,
            outpostUrl: choice.outpostUrl === undefined ? (previous?.outpostUrl ?? null) : choice.outpostUrl && trimUrl(choice.outpostUrl),
            outpost: pickNamed(outposts, choice.outpost, previous?.outpost ?? defaults.outpost, 'outpost', kind.title),
            authorizationFlow: pickFlow(
                discovery.flows.authorization,
                choice.authorizationFlow,
                previous?.authorizationFlow ?? defaults.authorizationFlow,
                'authorizationFlow',
                kind.title,
            ),
            invalidationFlow: pickFlow(
                discovery.flows.invalidation,
                choice.invalidationFlow,
                previous?.invalidationFlow ?? defaults.invalidationFlow,
                'invalidationFlow',
                kind.title,
            ),
            signingKey: pickNamed(
                discovery.signingKeys,
                choice.signingKey,
                previous?.signingKey ?? defaults.signingKey,
                'signingKey',
                kind.title,
            ),
            version: discovery.version,
            tokenIdentifier: bootstrapped ? bootstrapped.tokenIdentifier : choice.token ? null : (previous?.tokenIdentifier ?? null),
        };
        for (const [field, value] of Object.entries({
            outpost: connection.outpost,
            authorizationFlow: connection.authorizationFlow,
            invalidationFlow: connection.invalidationFlow,
        })) {
            if (!value) {
                throw new ValidationError(`${field}: ${kind.title} at ${url} offers none to choose by default; name one`);
            }
        }

        await settings(this.server).set(CONNECTION, connection);
        await settings(this.server).setSecret(TOKEN, token);
        return await this.describe(answering(kind.title, discovery.version, url));
    }

    /** The saved token, which is only ever sent to the URL it was saved with: a new URL needs its token. */
    async #savedTokenFor(url: string, previous: StoredConnection | undefined, kind: string): Promise<string> {
        const saved = await this.#token();
        if (saved && previous && previous.url !== url) {
            throw new ValidationError(`token: a new URL needs its token (the saved one is only sent to ${previous.url})`);
        }

        if (saved && previous && previous.kind !== kind) {
            throw new ValidationError(`token: another kind of provider needs its token (the saved one is ${previous.kind}'s)`);
        }

        if (!saved || !previous) {
            throw new ValidationError(`token: give the API token of an ${kind} administrator`);
        }

        return saved;
    }

    /** Makes a token of Gatehouse's own from a bootstrap token (which is not kept), then connects with the defaults. */
    async bootstrap(url: string, bootstrapToken: string, kindName: string = DEFAULT_IDP_KIND) {
        const kind = await kindNamed(kindName);
        const provider = kind.connect({ url: trimUrl(url), token: bootstrapToken });
        await asValidation(() => provider.checkAdmin());
        const token = await asValidation(() =>
            provider.createApiToken(GATEHOUSE_TOKEN, 'Gatehouse deploy manager (made by its bootstrap)'),
        );
        return await this.connect({ kind: kindName, url, token }, { tokenIdentifier: GATEHOUSE_TOKEN });
    }

    /** Forgets the token, and revokes it at the provider when Gatehouse made it and the provider answers. */
    async disconnect(): Promise<{ revoked: boolean; note: string | null }> {
        const [stored, token] = await Promise.all([this.stored(), this.#token()]);
        let revoked = false;
        let note: string | null = null;
        if (stored && token && stored.tokenIdentifier) {
            try {
                const kind = await kindNamed(stored.kind);
                await kind.connect({ url: stored.url, token }, { timeoutMs: HEALTH_TIMEOUT_MS }).revokeToken(stored.tokenIdentifier);
                revoked = true;
            } catch (error) {
                note = `the token could not be revoked at the provider: ${(error as Error).message}`;
            }
        } else if (token) {
            note = 'the token was not made by Gatehouse, so it stays valid at the provider';
        }

        await settings(this.server).remove(TOKEN);
        if (stored) {
            await settings(this.server).set(CONNECTION, { ...stored, tokenIdentifier: null });
        }

        return { revoked, note };
    }

    /** AUTHENTIK_URL with AUTHENTIK_BOOTSTRAP_TOKEN: connects at first start, when nothing is saved yet. */
    async bootstrapFromEnvironment(): Promise<string | undefined> {
        const { url, token } = this.server.app.config.idpBootstrap;
        if (!url || !token || (await this.stored())) {
            return undefined;
        }

        try {
            await this.bootstrap(url, token);
            return `connected to authentik at ${url} with a token of Gatehouse's own`;
        } catch (error) {
            return `could not connect to authentik at ${url}: ${(error as Error).message}`;
        }
    }
}

/** The provider's failures as 422s: a person fixes the URL or the token. */
async function asValidation<T>(work: () => Promise<T>): Promise<T> {
    try {
        return await work();
    } catch (error) {
        if (error instanceof IdpError) {
            throw new ValidationError(error.message);
        }

        throw error;
    }
}

export const idpConnection = defineService<IdpConnectionService>('idpConnection', (owner) => new IdpConnectionService(owner));
