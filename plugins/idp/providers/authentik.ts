/**
 * authentik, through its official client (`@goauthentik/api`, pinned). The kind's file: what Gatehouse derives from
 * an authentik's URL and discovery, and the adapter, whose work is done by the parts in `authentik/` (a folder, which
 * the kinds' loader passes over). How Gatehouse talks to it is in authentik/client.ts.
 */
import {
    type DirectoryGroup,
    type DirectoryUser,
    type Discovery,
    type ForwardAuthApp,
    type ForwardAuthChanges,
    type IdentityProvider,
    type IdentityProviderKind,
    type IdpCredentials,
    type OidcClient,
    type OidcClientChanges,
    type OidcEndpoints,
    type SamlApp,
    type SamlChanges,
    type SamlEndpoints,
    type Serialise,
} from '../idp-types.ts';
import * as Applications from './authentik/applications.ts';
import { AuthentikClient, text } from './authentik/client.ts';
import * as Connection from './authentik/connection.ts';
import * as Directory from './authentik/directory.ts';
import { authentikForwardAuth } from './authentik/forward-auth.ts';
import * as ForwardAuthApps from './authentik/forward-auth-apps.ts';
import * as Oidc from './authentik/oidc.ts';
import * as Saml from './authentik/saml.ts';

const EMBEDDED_OUTPOST = 'goauthentik.io/outposts/embedded';
const DEFAULT_AUTHORIZATION_FLOW = 'default-provider-authorization-implicit-consent';
const DEFAULT_INVALIDATION_FLOW = 'default-provider-invalidation-flow';
const DEFAULT_SIGNING_KEY = 'authentik Self-signed Certificate';

const nothingRecorded = (): Promise<void> => Promise.resolve();

class Authentik implements IdentityProvider {
    readonly #client: AuthentikClient;

    constructor(credentials: IdpCredentials, timeoutMs: number) {
        this.#client = new AuthentikClient(credentials, timeoutMs);
    }

    checkAdmin(): Promise<{ version: string; username: string }> {
        return Connection.checkAdmin(this.#client);
    }

    discover(): Promise<Discovery> {
        return Connection.discover(this.#client);
    }

    createApiToken(identifier: string, description: string): Promise<string> {
        return Connection.createApiToken(this.#client, identifier, description);
    }

    revokeToken(identifier: string): Promise<void> {
        return Connection.revokeToken(this.#client, identifier);
    }

    groups(): Promise<DirectoryGroup[]> {
        return Directory.groups(this.#client);
    }

    users(query: string): Promise<DirectoryUser[]> {
        return Directory.users(this.#client, query);
    }

    ensureForwardAuthApp(
        app: ForwardAuthApp,
        serialise: Serialise,
        changes: ForwardAuthChanges,
        recorded: () => Promise<void> = nothingRecorded,
    ): Promise<void> {
        return ForwardAuthApps.ensureForwardAuthApp(this.#client, app, serialise, changes, recorded);
    }

    undoForwardAuthApp(app: ForwardAuthApp, changes: ForwardAuthChanges): Promise<void> {
        return ForwardAuthApps.undoForwardAuthApp(this.#client, app, changes);
    }

    replaceGroups(objectName: string, groups: string[]): Promise<string[]> {
        return Applications.replaceGroups(this.#client, objectName, groups);
    }

    ensureSamlProvider(app: SamlApp, changes: SamlChanges, recorded: () => Promise<void> = nothingRecorded): Promise<void> {
        return Saml.ensureSamlProvider(this.#client, app, changes, recorded);
    }

    undoSamlProvider(app: SamlApp, changes: SamlChanges): Promise<void> {
        return Saml.undoSamlProvider(this.#client, app, changes);
    }

    samlCertificate(objectName: string): Promise<string | null> {
        return Saml.samlCertificate(this.#client, objectName);
    }

    ensureOidcClient(client: OidcClient, changes: OidcClientChanges, recorded: () => Promise<void> = nothingRecorded): Promise<void> {
        return Oidc.ensureOidcClient(this.#client, client, changes, recorded);
    }

    undoOidcClient(client: OidcClient, changes: OidcClientChanges): Promise<void> {
        return Oidc.undoOidcClient(this.#client, client, changes);
    }

    /** Whatever Gatehouse may have made under `objectName`, of every kind. */
    async removeApplication(objectName: string): Promise<string[]> {
        const client = this.#client;
        return await client.call(`removing ${objectName}`, async () => {
            const removed: string[] = [];
            if (await Applications.findApplication(client, objectName)) {
                await client.core.coreApplicationsDestroyRaw({ slug: objectName });
                removed.push(`application ${objectName}`);
            }

            const proxy = await ForwardAuthApps.findProxyProvider(client, objectName);
            if (proxy) {
                await client.providers.providersProxyDestroyRaw({ id: Number(proxy.pk) });
                removed.push(`proxy provider ${objectName}`);
            }

            const oauth2 = await Oidc.findOAuth2Provider(client, objectName);
            if (oauth2) {
                await client.providers.providersOauth2DestroyRaw({ id: Number(oauth2.pk) });
                removed.push(`OAuth2/OpenID provider ${objectName}`);
            }

            const saml = await Saml.findSamlProvider(client, objectName);
            if (saml) {
                await client.providers.providersSamlDestroyRaw({ id: Number(saml.pk) });
                removed.push(`SAML provider ${objectName}`);
            }

            const mapping = await Oidc.findClaimMapping(client, objectName);
            if (mapping) {
                await client.mappings.propertymappingsProviderScopeDestroyRaw({ pmUuid: text(mapping.pk) });
                removed.push(`scope mapping ${text(mapping.name)}`);
            }

            return removed;
        });
    }
}

const authentik: IdentityProviderKind = {
    title: 'authentik',
    forwardAuth: () => authentikForwardAuth,
    connect: (credentials, options = {}) => new Authentik(credentials, options.timeoutMs ?? 10_000),
    oidcEndpoints: (url: string, objectName: string): OidcEndpoints => {
        const root = `${url.replace(/\/+$/, '')}/application/o/${objectName}`;
        return { issuer: `${root}/`, configUrl: `${root}/.well-known/openid-configuration`, logoutUrl: `${root}/end-session/` };
    },
    // Since 2026.5 the entity ID is the metadata URL unless issuer_override says otherwise (reference §5).
    samlEndpoints: (url: string, objectName: string): SamlEndpoints => {
        const root = `${url.replace(/\/+$/, '')}/application/saml/${objectName}`;
        return {
            entityId: `${root}/metadata/`,
            ssoRedirectUrl: `${root}/sso/binding/redirect/`,
            ssoPostUrl: `${root}/sso/binding/post/`,
            sloRedirectUrl: `${root}/slo/binding/redirect/`,
            metadataUrl: `${root}/metadata/`,
        };
    },
    defaults: (discovery) => ({
        outpost: discovery.outposts.find((outpost) => outpost.managed === EMBEDDED_OUTPOST),
        authorizationFlow: discovery.flows.authorization.find((flow) => flow.slug === DEFAULT_AUTHORIZATION_FLOW),
        invalidationFlow: discovery.flows.invalidation.find((flow) => flow.slug === DEFAULT_INVALIDATION_FLOW),
        signingKey: discovery.signingKeys.find((key) => key.name === DEFAULT_SIGNING_KEY),
    }),
};

export default authentik;
