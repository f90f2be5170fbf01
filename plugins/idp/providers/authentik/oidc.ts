/**
 * An app's OIDC client: an OAuth2 provider with the standard scope mappings and its application, plus, for a client
 * with an administrator, a `svc_groups` scope mapping of its own.
 */
import type * as AuthentikApi from '@goauthentik/api';

import { IdpError, type OidcClient, type OidcClientChanges } from '../../idp-types.ts';
import { ensureWithApplication, undoApplication } from './applications.ts';
import { type AuthentikClient, authentikApi, type Json, json, PAGE_SIZE, text } from './client.ts';

const OIDC_SCOPES = ['openid', 'email', 'profile'].map((scope) => `goauthentik.io/providers/oauth2/scope-${scope}`);
// Since 2026.5 a provider made through the API without grant types gets none, and refuses every authorization.
const OIDC_GRANT_TYPES = (): AuthentikApi.GrantTypeEnum[] => [
    authentikApi().GrantTypeEnum.AuthorizationCode,
    authentikApi().GrantTypeEnum.RefreshToken,
];

export async function findOAuth2Provider(client: AuthentikClient, name: string): Promise<Json | undefined> {
    const found = await client.all((page) => client.providers.providersOauth2ListRaw({ name, page, pageSize: PAGE_SIZE }));
    return found.find((provider) => provider.name === name);
}

function claimMappingName(objectName: string): string {
    return `${objectName} svc_groups`;
}

/** The `svc_groups` mapping Gatehouse makes for a client is named after it. */
export async function findClaimMapping(client: AuthentikClient, objectName: string): Promise<Json | undefined> {
    const name = claimMappingName(objectName);
    const found = await client.all((page) => client.mappings.propertymappingsProviderScopeListRaw({ name, page, pageSize: PAGE_SIZE }));
    return found.find((mapping) => mapping.name === name);
}

/** A Python string literal of `value` (authentik evaluates the mapping's expression as Python). */
function pythonString(value: string): string {
    return JSON.stringify(value);
}

function adminClaimExpression(adminUser: string): string {
    return `return {"svc_groups": ["admin"] if request.user.username == ${pythonString(adminUser)} else ["user"]}`;
}

async function ensureClaimMapping(
    client: AuthentikClient,
    objectName: string,
    adminUser: string,
    changes: OidcClientChanges,
    recorded: () => Promise<void>,
): Promise<string> {
    const fields = { name: claimMappingName(objectName), scopeName: 'profile', expression: adminClaimExpression(adminUser) };
    const existing = await findClaimMapping(client, objectName);
    if (existing) {
        changes.previousMapping = {
            pk: text(existing.pk),
            fields: { name: text(existing.name), scopeName: text(existing.scope_name), expression: text(existing.expression) },
        };
        await recorded();
        await client.mappings.propertymappingsProviderScopePartialUpdateRaw({
            pmUuid: text(existing.pk),
            patchedScopeMappingRequest: fields,
        });
        return text(existing.pk);
    }

    const created = await json(client.mappings.propertymappingsProviderScopeCreateRaw({ scopeMappingRequest: fields }));
    changes.createdMapping = text(created.pk);
    await recorded();
    return changes.createdMapping;
}

async function scopeMappings(
    client: AuthentikClient,
    oidcClient: OidcClient,
    changes: OidcClientChanges,
    recorded: () => Promise<void>,
): Promise<string[]> {
    const managed = await client.all((page) =>
        client.mappings.propertymappingsProviderScopeListRaw({ managed: OIDC_SCOPES, page, pageSize: PAGE_SIZE }),
    );
    const pks = OIDC_SCOPES.map((scope) => {
        const found = managed.find((mapping) => mapping.managed === scope);
        if (!found) {
            throw new IdpError('not-found', `authentik has no scope mapping ${scope}: its system blueprints have not run`);
        }

        return text(found.pk);
    });
    if (!oidcClient.adminClaimFor) {
        return pks;
    }

    return [...pks, await ensureClaimMapping(client, oidcClient.objectName, oidcClient.adminClaimFor, changes, recorded)];
}

/** The fields ensureOidcClient sets, as the provider had them, in the client's request shape. */
function previousOAuth2Fields(provider: Json): Record<string, unknown> {
    const redirects = (provider.redirect_uris as Json[] | undefined) ?? [];
    return {
        authorizationFlow: text(provider.authorization_flow),
        invalidationFlow: text(provider.invalidation_flow),
        clientType: provider.client_type,
        grantTypes: provider.grant_types,
        clientId: text(provider.client_id),
        clientSecret: text(provider.client_secret),
        redirectUris: redirects.map((entry) => ({
            matchingMode: entry.matching_mode,
            url: text(entry.url),
            redirectUriType: entry.redirect_uri_type,
        })),
        signingKey: provider.signing_key ?? null,
        propertyMappings: provider.property_mappings,
    };
}

export async function ensureOidcClient(
    client: AuthentikClient,
    oidcClient: OidcClient,
    changes: OidcClientChanges,
    recorded: () => Promise<void>,
): Promise<void> {
    await client.call(`setting up ${oidcClient.objectName}`, async () => {
        const mappings = await scopeMappings(client, oidcClient, changes, recorded);
        const fields = {
            authorizationFlow: oidcClient.authorizationFlow,
            invalidationFlow: oidcClient.invalidationFlow,
            clientType: authentikApi().ClientTypeEnum.Confidential,
            grantTypes: OIDC_GRANT_TYPES(),
            clientId: oidcClient.clientId,
            clientSecret: oidcClient.clientSecret,
            redirectUris: [{ matchingMode: authentikApi().MatchingModeEnum.Regex, url: oidcClient.redirectPattern }],
            signingKey: oidcClient.signingKey,
            propertyMappings: mappings,
        };
        await ensureWithApplication(client, oidcClient, changes, await findOAuth2Provider(client, oidcClient.objectName), {
            create: () =>
                json(client.providers.providersOauth2CreateRaw({ oAuth2ProviderRequest: { name: oidcClient.objectName, ...fields } })),
            update: (id) => client.providers.providersOauth2PartialUpdateRaw({ id, patchedOAuth2ProviderRequest: fields }),
            previous: previousOAuth2Fields,
            recorded,
        });
    });
}

export async function undoOidcClient(client: AuthentikClient, oidcClient: OidcClient, changes: OidcClientChanges): Promise<void> {
    await client.call(`undoing the changes to ${oidcClient.objectName}`, async () => {
        await undoApplication(client, oidcClient.objectName, changes);
        if (changes.providerCreated && changes.providerId !== null) {
            await client.providers.providersOauth2DestroyRaw({ id: changes.providerId });
        } else if (changes.previousProvider && changes.providerId !== null) {
            await client.providers.providersOauth2PartialUpdateRaw({
                id: changes.providerId,
                patchedOAuth2ProviderRequest: changes.previousProvider,
            });
        }

        if (changes.createdMapping) {
            await client.mappings.propertymappingsProviderScopeDestroyRaw({ pmUuid: changes.createdMapping });
        } else if (changes.previousMapping) {
            await client.mappings.propertymappingsProviderScopePartialUpdateRaw({
                pmUuid: changes.previousMapping.pk,
                patchedScopeMappingRequest: changes.previousMapping.fields,
            });
        }
    });
}
