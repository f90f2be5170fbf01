/**
 * authentik, through its official client (`@goauthentik/api`, pinned). Reads use the `...Raw()` calls and read the
 * JSON themselves: the client's generated models throw on fields that an older server does not send (the
 * reference's §9.1), while request bodies are safe either way. Forward auth follows authentik's documentation:
 * one `forward_single` proxy provider and one application per app, since only single-application mode keeps
 * per-app policies, and the provider added to the outpost's list.
 */
import {
    AdminApi,
    type ApiResponse,
    ClientTypeEnum,
    Configuration,
    CoreApi,
    CryptoApi,
    FetchError,
    FlowsApi,
    GrantTypeEnum,
    IntentEnum,
    MatchingModeEnum,
    OutpostsApi,
    PoliciesApi,
    PropertymappingsApi,
    ProvidersApi,
    ProxyMode,
    ResponseError,
    SAMLBindingsEnum,
} from '@goauthentik/api';

import {
    type Discovery,
    type DirectoryGroup,
    type DirectoryUser,
    type ForwardAuthApp,
    type ForwardAuthChanges,
    type IdentityProvider,
    type IdentityProviderKind,
    type IdpCredentials,
    IdpError,
    type OidcClient,
    type OidcClientChanges,
    type OidcEndpoints,
    type ProviderChanges,
    type SamlApp,
    type SamlChanges,
    type SamlEndpoints,
    type Serialise,
} from '../idp-types.ts';

const EMBEDDED_OUTPOST = 'goauthentik.io/outposts/embedded';
const DEFAULT_AUTHORIZATION_FLOW = 'default-provider-authorization-implicit-consent';
const DEFAULT_INVALIDATION_FLOW = 'default-provider-invalidation-flow';
const DEFAULT_SIGNING_KEY = 'authentik Self-signed Certificate';
const PAGE_SIZE = 100;
const OIDC_SCOPES = ['openid', 'email', 'profile'].map((scope) => `goauthentik.io/providers/oauth2/scope-${scope}`);
// Since 2026.5 a provider made through the API without grant types gets none, and refuses every authorization.
const OIDC_GRANT_TYPES = [GrantTypeEnum.AuthorizationCode, GrantTypeEnum.RefreshToken];
const SAML_MAPPING = 'goauthentik.io/providers/saml';
const SAML_NAME_ID = `${SAML_MAPPING}/username`;
const SAML_ATTRIBUTES = ['username', 'email', 'name', 'groups', 'uid'].map((name) => `${SAML_MAPPING}/${name}`);

type Json = Record<string, unknown>;

interface Page {
    pagination: { next: number };
    results: Json[];
}

function baseUrlOf(url: string): string {
    return `${url.replace(/\/+$/, '')}/api/v3`;
}

async function describeResponse(response: Response): Promise<string> {
    const text = await response.text().catch(() => '');
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The client's errors, as the reasons a person can act on. */
async function asIdpError(error: unknown, url: string, what: string): Promise<IdpError> {
    if (error instanceof IdpError) {
        return error;
    }

    if (error instanceof FetchError || (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') {
        const cause = (error as FetchError).cause as (Error & { cause?: { code?: string } }) | undefined;
        const detail = cause?.cause?.code ?? cause?.message ?? (error as Error).message;
        return new IdpError('unreachable', `authentik at ${url} could not be reached (${detail})`);
    }

    if (error instanceof ResponseError) {
        const status = error.response.status;
        const body = await describeResponse(error.response);
        if (status === 403 || status === 401) {
            return new IdpError('refused', `authentik refused the token (${status}) while ${what}`);
        }

        if (status === 404) {
            return new IdpError('not-found', `authentik answered 404 while ${what}${body ? `: ${body}` : ''}`);
        }

        return new IdpError('rejected', `authentik answered ${status} while ${what}${body ? `: ${body}` : ''}`);
    }

    return new IdpError('rejected', `authentik: ${(error as Error).message} while ${what}`);
}

async function json<T = Json>(call: Promise<ApiResponse<unknown>>): Promise<T> {
    const response = await call;
    return (await response.raw.json()) as T;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value));

class Authentik implements IdentityProvider {
    readonly #url: string;
    readonly #core: CoreApi;
    readonly #admin: AdminApi;
    readonly #flows: FlowsApi;
    readonly #outposts: OutpostsApi;
    readonly #crypto: CryptoApi;
    readonly #providers: ProvidersApi;
    readonly #policies: PoliciesApi;
    readonly #mappings: PropertymappingsApi;

    constructor(credentials: IdpCredentials, timeoutMs: number) {
        this.#url = credentials.url;
        const configuration = new Configuration({
            basePath: baseUrlOf(credentials.url),
            accessToken: credentials.token,
            fetchApi: (input, init) => fetch(input, { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) }),
        });
        this.#core = new CoreApi(configuration);
        this.#admin = new AdminApi(configuration);
        this.#flows = new FlowsApi(configuration);
        this.#outposts = new OutpostsApi(configuration);
        this.#crypto = new CryptoApi(configuration);
        this.#providers = new ProvidersApi(configuration);
        this.#policies = new PoliciesApi(configuration);
        this.#mappings = new PropertymappingsApi(configuration);
    }

    async #call<T>(what: string, work: () => Promise<T>): Promise<T> {
        try {
            return await work();
        } catch (error) {
            throw await asIdpError(error, this.#url, what);
        }
    }

    async #all(fetchPage: (page: number) => Promise<ApiResponse<unknown>>): Promise<Json[]> {
        const results: Json[] = [];
        for (let page = 1; page > 0 && page < 1000;) {
            const body = await json<Page>(fetchPage(page));
            results.push(...body.results);
            page = Number(body.pagination?.next ?? 0);
        }

        return results;
    }

    async checkAdmin(): Promise<{ version: string; username: string }> {
        const me = await this.#call("reading the token's user", async () => {
            const response = await this.#core.coreUsersMeRetrieveRaw();
            const type = response.raw.headers.get('content-type') ?? '';
            if (!type.includes('json')) {
                throw new IdpError('not-a-provider', `${this.#url} does not answer as authentik: /api/v3/core/users/me/ is not JSON`);
            }

            return (await response.raw.json()) as { user?: { username?: string; is_superuser?: boolean } };
        });
        if (me.user?.is_superuser !== true) {
            throw new IdpError('not-admin', `the token's user ${text(me.user?.username)} is not an authentik administrator (superuser)`);
        }

        const version = await this.#call('reading the version', () =>
            json<{ version_current: string }>(this.#admin.adminVersionRetrieveRaw()),
        );
        return { version: version.version_current, username: text(me.user.username) };
    }

    async discover(): Promise<Discovery> {
        const { version } = await this.checkAdmin();
        return await this.#call('discovering outposts, flows and keys', async () => {
            const outposts = await this.#all((page) => this.#outposts.outpostsInstancesListRaw({ page, pageSize: PAGE_SIZE }));
            const flows = async (designation: 'authorization' | 'invalidation') =>
                (await this.#all((page) => this.#flows.flowsInstancesListRaw({ designation, page, pageSize: PAGE_SIZE }))).map((flow) => ({
                    pk: text(flow.pk),
                    slug: text(flow.slug),
                    name: text(flow.name),
                }));
            const keys = await this.#all((page) =>
                this.#crypto.cryptoCertificatekeypairsListRaw({ hasKey: true, page, pageSize: PAGE_SIZE }),
            );
            return {
                version,
                outposts: outposts.map((outpost) => ({
                    pk: text(outpost.pk),
                    name: text(outpost.name),
                    type: text(outpost.type),
                    managed: outpost.managed === null || outpost.managed === undefined ? null : text(outpost.managed),
                })),
                flows: { authorization: await flows('authorization'), invalidation: await flows('invalidation') },
                signingKeys: keys.map((key) => ({ pk: text(key.pk), name: text(key.name) })),
            };
        });
    }

    async createApiToken(identifier: string, description: string): Promise<string> {
        return await this.#call('creating an API token', async () => {
            const existing = await this.#all((page) => this.#core.coreTokensListRaw({ identifier, page, pageSize: PAGE_SIZE }));
            if (existing.some((token) => token.identifier === identifier)) {
                await this.#core.coreTokensDestroyRaw({ identifier });
            }

            await this.#core.coreTokensCreateRaw({ tokenRequest: { identifier, intent: IntentEnum.Api, expiring: false, description } });
            const view = await json<{ key: string }>(this.#core.coreTokensViewKeyRetrieveRaw({ identifier }));
            return view.key;
        });
    }

    async revokeToken(identifier: string): Promise<void> {
        await this.#call('revoking the token', async () => {
            await this.#core.coreTokensDestroyRaw({ identifier });
        });
    }

    async groups(): Promise<DirectoryGroup[]> {
        const groups = await this.#call('listing groups', () =>
            this.#all((page) => this.#core.coreGroupsListRaw({ includeUsers: true, page, pageSize: PAGE_SIZE })),
        );
        return groups.map((group) => ({
            pk: text(group.pk),
            name: text(group.name),
            isSuperuser: group.is_superuser === true,
            members: ((group.users_obj as Json[] | undefined) ?? []).map((user) => ({
                pk: Number(user.pk),
                username: text(user.username),
                name: text(user.name),
                email: text(user.email),
            })),
        }));
    }

    async users(query: string): Promise<DirectoryUser[]> {
        const users = await this.#call('listing users', () =>
            this.#all((page) =>
                this.#core.coreUsersListRaw({ includeGroups: false, ...(query ? { search: query } : {}), page, pageSize: PAGE_SIZE }),
            ),
        );
        return users.map((user) => ({
            pk: Number(user.pk),
            username: text(user.username),
            name: text(user.name),
            email: text(user.email),
            active: user.is_active === true,
        }));
    }

    async #findProvider(name: string): Promise<Json | undefined> {
        const found = await this.#all((page) => this.#providers.providersProxyListRaw({ nameIexact: name, page, pageSize: PAGE_SIZE }));
        return found.find((provider) => provider.name === name);
    }

    async #findApplication(slug: string): Promise<Json | undefined> {
        try {
            return await json(this.#core.coreApplicationsRetrieveRaw({ slug }));
        } catch (error) {
            if (error instanceof ResponseError && error.response.status === 404) {
                return undefined;
            }

            throw error;
        }
    }

    async #ensureProvider(
        app: ForwardAuthApp,
    ): Promise<{ id: number; created: boolean; previous: ForwardAuthChanges['previousProvider'] }> {
        const fields = {
            mode: ProxyMode.ForwardSingle,
            externalHost: app.externalHost,
            authorizationFlow: app.authorizationFlow,
            invalidationFlow: app.invalidationFlow,
        };
        const existing = await this.#findProvider(app.objectName);
        if (!existing) {
            const created = await json(
                this.#providers.providersProxyCreateRaw({ proxyProviderRequest: { name: app.objectName, ...fields } }),
            );
            return { id: Number(created.pk), created: true, previous: null };
        }

        const id = Number(existing.pk);
        await this.#providers.providersProxyPartialUpdateRaw({ id, patchedProxyProviderRequest: fields });
        const previous = {
            externalHost: text(existing.external_host),
            authorizationFlow: text(existing.authorization_flow),
            invalidationFlow: text(existing.invalidation_flow),
        };
        return { id, created: false, previous };
    }

    async #ensureApplication(
        app: Pick<ForwardAuthApp, 'objectName' | 'title' | 'launchUrl'>,
        providerId: number,
    ): Promise<{ pk: string; created: boolean }> {
        const fields = { name: app.title, provider: providerId, metaLaunchUrl: app.launchUrl };
        const existing = await this.#findApplication(app.objectName);
        if (!existing) {
            const created = await json(this.#core.coreApplicationsCreateRaw({ applicationRequest: { slug: app.objectName, ...fields } }));
            return { pk: text(created.pk), created: true };
        }

        await this.#core.coreApplicationsPartialUpdateRaw({ slug: app.objectName, patchedApplicationRequest: fields });
        return { pk: text(existing.pk), created: false };
    }

    async #groupBindings(target: string): Promise<Json[]> {
        const bindings = await this.#all((page) => this.#policies.policiesBindingsListRaw({ target, page, pageSize: PAGE_SIZE }));
        return bindings.filter((binding) => binding.group !== null && binding.group !== undefined);
    }

    /** Binds exactly `groups` to the application (other kinds of binding are left alone); answers the groups bound before. */
    async #bindGroups(target: string, groups: string[]): Promise<string[]> {
        const bindings = await this.#groupBindings(target);
        const before = bindings.map((binding) => text(binding.group));
        for (const binding of bindings) {
            if (!groups.includes(text(binding.group))) {
                await this.#policies.policiesBindingsDestroyRaw({ policyBindingUuid: text(binding.pk) });
            }
        }

        for (const [order, group] of groups.entries()) {
            if (!before.includes(group)) {
                await this.#policies.policiesBindingsCreateRaw({ policyBindingRequest: { target, group, order, enabled: true } });
            }
        }

        return before;
    }

    async #addToOutpost(outpost: string, providerId: number, serialise: Serialise): Promise<boolean> {
        return await serialise(`authentik-outpost:${outpost}`, async () => {
            const current = await json(this.#outposts.outpostsInstancesRetrieveRaw({ uuid: outpost }));
            const providers = ((current.providers as number[] | undefined) ?? []).map(Number);
            if (providers.includes(providerId)) {
                return false;
            }

            await this.#outposts.outpostsInstancesPartialUpdateRaw({
                uuid: outpost,
                patchedOutpostRequest: { providers: [...providers, providerId] },
            });
            return true;
        });
    }

    async #removeFromOutpost(outpost: string, providerId: number): Promise<void> {
        const current = await json(this.#outposts.outpostsInstancesRetrieveRaw({ uuid: outpost }));
        const providers = ((current.providers as number[] | undefined) ?? []).map(Number);
        await this.#outposts.outpostsInstancesPartialUpdateRaw({
            uuid: outpost,
            patchedOutpostRequest: { providers: providers.filter((id) => id !== providerId) },
        });
    }

    async ensureForwardAuthApp(app: ForwardAuthApp, serialise: Serialise): Promise<ForwardAuthChanges> {
        return await this.#call(`setting up ${app.objectName}`, async () => {
            const provider = await this.#ensureProvider(app);
            const application = await this.#ensureApplication(app, provider.id);
            const before = await this.#bindGroups(application.pk, app.groups);
            const addedToOutpost = await this.#addToOutpost(app.outpost, provider.id, serialise);
            return {
                providerId: provider.id,
                applicationSlug: app.objectName,
                providerCreated: provider.created,
                applicationCreated: application.created,
                previousGroups: application.created ? null : before,
                previousProvider: provider.previous,
                addedToOutpost,
            };
        });
    }

    async undoForwardAuthApp(app: ForwardAuthApp, changes: ForwardAuthChanges): Promise<void> {
        await this.#call(`undoing the changes to ${app.objectName}`, async () => {
            if (changes.applicationCreated) {
                await this.#core.coreApplicationsDestroyRaw({ slug: changes.applicationSlug });
            } else if (changes.previousGroups) {
                const application = await json(this.#core.coreApplicationsRetrieveRaw({ slug: changes.applicationSlug }));
                await this.#bindGroups(text(application.pk), changes.previousGroups);
            }

            if (changes.providerCreated) {
                // Deleting a provider takes it off every outpost.
                await this.#providers.providersProxyDestroyRaw({ id: changes.providerId });
                return;
            }

            if (changes.addedToOutpost) {
                await this.#removeFromOutpost(app.outpost, changes.providerId);
            }

            if (changes.previousProvider) {
                await this.#providers.providersProxyPartialUpdateRaw({
                    id: changes.providerId,
                    patchedProxyProviderRequest: { mode: ProxyMode.ForwardSingle, ...changes.previousProvider },
                });
            }
        });
    }

    async replaceGroups(objectName: string, groups: string[]): Promise<string[]> {
        return await this.#call(`binding groups to ${objectName}`, async () => {
            const application = await this.#findApplication(objectName);
            if (!application) {
                throw new IdpError('not-found', `authentik has no application ${objectName}: deploy the app first`);
            }

            return await this.#bindGroups(text(application.pk), groups);
        });
    }

    async removeApplication(objectName: string): Promise<string[]> {
        return await this.#call(`removing ${objectName}`, async () => {
            const removed: string[] = [];
            if (await this.#findApplication(objectName)) {
                await this.#core.coreApplicationsDestroyRaw({ slug: objectName });
                removed.push(`application ${objectName}`);
            }

            const proxy = await this.#findProvider(objectName);
            if (proxy) {
                await this.#providers.providersProxyDestroyRaw({ id: Number(proxy.pk) });
                removed.push(`proxy provider ${objectName}`);
            }

            const oauth2 = await this.#findOAuth2Provider(objectName);
            if (oauth2) {
                await this.#providers.providersOauth2DestroyRaw({ id: Number(oauth2.pk) });
                removed.push(`OAuth2/OpenID provider ${objectName}`);
            }

            const saml = await this.#findSamlProvider(objectName);
            if (saml) {
                await this.#providers.providersSamlDestroyRaw({ id: Number(saml.pk) });
                removed.push(`SAML provider ${objectName}`);
            }

            const mapping = await this.#findClaimMapping(objectName);
            if (mapping) {
                await this.#mappings.propertymappingsProviderScopeDestroyRaw({ pmUuid: text(mapping.pk) });
                removed.push(`scope mapping ${text(mapping.name)}`);
            }

            return removed;
        });
    }

    async #findSamlProvider(name: string): Promise<Json | undefined> {
        const found = await this.#all((page) => this.#providers.providersSamlListRaw({ name, page, pageSize: PAGE_SIZE }));
        return found.find((provider) => provider.name === name);
    }

    async #samlMappings(): Promise<{ nameId: string; attributes: string[] }> {
        const managed = await this.#all((page) =>
            this.#mappings.propertymappingsProviderSamlListRaw({ managed: [SAML_NAME_ID, ...SAML_ATTRIBUTES], page, pageSize: PAGE_SIZE }),
        );
        const pkOf = (name: string) => managed.find((mapping) => mapping.managed === name)?.pk;
        const nameId = pkOf(SAML_NAME_ID);
        if (nameId === undefined) {
            throw new IdpError('not-found', `authentik has no SAML mapping ${SAML_NAME_ID}: its system blueprints have not run`);
        }

        const attributes = SAML_ATTRIBUTES.map(pkOf).filter((pk) => pk !== undefined);
        return { nameId: text(nameId), attributes: attributes.map(text) };
    }

    async ensureSamlProvider(app: SamlApp): Promise<SamlChanges> {
        return await this.#call(`setting up ${app.objectName}`, async () => {
            const mappings = await this.#samlMappings();
            const fields = {
                authorizationFlow: app.authorizationFlow,
                invalidationFlow: app.invalidationFlow,
                acsUrl: app.acsUrl,
                audience: app.audience,
                signingKp: app.signingKey,
                signAssertion: true,
                signResponse: true,
                nameIdMapping: mappings.nameId,
                propertyMappings: mappings.attributes,
                // Service providers such as mod_auth_mellon take the answer only by POST at their ACS.
                spBinding: SAMLBindingsEnum.Post,
            };
            return await this.#ensureWithApplication(app, await this.#findSamlProvider(app.objectName), {
                create: () => json(this.#providers.providersSamlCreateRaw({ sAMLProviderRequest: { name: app.objectName, ...fields } })),
                update: (id) => this.#providers.providersSamlPartialUpdateRaw({ id, patchedSAMLProviderRequest: fields }),
                previous: previousSamlFields,
            });
        });
    }

    async undoSamlProvider(app: SamlApp, changes: SamlChanges): Promise<void> {
        await this.#call(`undoing the changes to ${app.objectName}`, async () => {
            await this.#undoApplication(app.objectName, changes);
            if (changes.providerCreated) {
                await this.#providers.providersSamlDestroyRaw({ id: changes.providerId });
            } else if (changes.previousProvider) {
                await this.#providers.providersSamlPartialUpdateRaw({
                    id: changes.providerId,
                    patchedSAMLProviderRequest: changes.previousProvider,
                });
            }
        });
    }

    async samlCertificate(objectName: string): Promise<string | null> {
        return await this.#call(`reading the certificate of ${objectName}`, async () => {
            const provider = await this.#findSamlProvider(objectName);
            const keypair = provider?.signing_kp;
            if (keypair === null || keypair === undefined) {
                return null;
            }

            const view = await json<{ data: string }>(
                this.#crypto.cryptoCertificatekeypairsViewCertificateRetrieveRaw({ kpUuid: text(keypair) }),
            );
            return view.data;
        });
    }

    /** Makes the provider (or updates the one there), then its application, bound to the groups; answers what changed. */
    async #ensureWithApplication(
        app: { objectName: string; title: string; launchUrl: string; groups: string[] },
        existing: Json | undefined,
        provider: {
            create: () => Promise<Json>;
            update: (id: number) => Promise<unknown>;
            previous: (existing: Json) => Record<string, unknown>;
        },
    ): Promise<ProviderChanges> {
        const providerId = existing ? Number(existing.pk) : Number((await provider.create()).pk);
        if (existing) {
            await provider.update(providerId);
        }

        const application = await this.#ensureApplication(app, providerId);
        const before = await this.#bindGroups(application.pk, app.groups);
        return {
            providerId,
            providerCreated: !existing,
            applicationCreated: application.created,
            previousProvider: existing ? provider.previous(existing) : null,
            previousGroups: application.created ? null : before,
        };
    }

    /** Deletes an application the run made, or binds the groups it had before. */
    async #undoApplication(slug: string, changes: { applicationCreated: boolean; previousGroups: string[] | null }): Promise<void> {
        if (changes.applicationCreated) {
            await this.#core.coreApplicationsDestroyRaw({ slug });
        } else if (changes.previousGroups) {
            const application = await json(this.#core.coreApplicationsRetrieveRaw({ slug }));
            await this.#bindGroups(text(application.pk), changes.previousGroups);
        }
    }

    async #findOAuth2Provider(name: string): Promise<Json | undefined> {
        const found = await this.#all((page) => this.#providers.providersOauth2ListRaw({ name, page, pageSize: PAGE_SIZE }));
        return found.find((provider) => provider.name === name);
    }

    /** The `svc_groups` mapping Gatehouse makes for a client is named after it. */
    async #findClaimMapping(objectName: string): Promise<Json | undefined> {
        const name = claimMappingName(objectName);
        const found = await this.#all((page) => this.#mappings.propertymappingsProviderScopeListRaw({ name, page, pageSize: PAGE_SIZE }));
        return found.find((mapping) => mapping.name === name);
    }

    async #scopeMappings(client: OidcClient): Promise<{ pks: string[]; created: string | null }> {
        const managed = await this.#all((page) =>
            this.#mappings.propertymappingsProviderScopeListRaw({ managed: OIDC_SCOPES, page, pageSize: PAGE_SIZE }),
        );
        const pks = OIDC_SCOPES.map((scope) => {
            const found = managed.find((mapping) => mapping.managed === scope);
            if (!found) {
                throw new IdpError('not-found', `authentik has no scope mapping ${scope}: its system blueprints have not run`);
            }

            return text(found.pk);
        });
        if (!client.adminClaimFor) {
            return { pks, created: null };
        }

        const claim = await this.#ensureClaimMapping(client.objectName, client.adminClaimFor);
        return { pks: [...pks, claim.pk], created: claim.created ? claim.pk : null };
    }

    async #ensureClaimMapping(objectName: string, adminUser: string): Promise<{ pk: string; created: boolean }> {
        const fields = { name: claimMappingName(objectName), scopeName: 'profile', expression: adminClaimExpression(adminUser) };
        const existing = await this.#findClaimMapping(objectName);
        if (existing) {
            await this.#mappings.propertymappingsProviderScopePartialUpdateRaw({
                pmUuid: text(existing.pk),
                patchedScopeMappingRequest: fields,
            });
            return { pk: text(existing.pk), created: false };
        }

        const created = await json(this.#mappings.propertymappingsProviderScopeCreateRaw({ scopeMappingRequest: fields }));
        return { pk: text(created.pk), created: true };
    }

    async ensureOidcClient(client: OidcClient): Promise<OidcClientChanges> {
        return await this.#call(`setting up ${client.objectName}`, async () => {
            const mappings = await this.#scopeMappings(client);
            const fields = {
                authorizationFlow: client.authorizationFlow,
                invalidationFlow: client.invalidationFlow,
                clientType: ClientTypeEnum.Confidential,
                grantTypes: OIDC_GRANT_TYPES,
                clientId: client.clientId,
                clientSecret: client.clientSecret,
                redirectUris: [{ matchingMode: MatchingModeEnum.Regex, url: client.redirectPattern }],
                signingKey: client.signingKey,
                propertyMappings: mappings.pks,
            };
            const changes = await this.#ensureWithApplication(client, await this.#findOAuth2Provider(client.objectName), {
                create: () =>
                    json(this.#providers.providersOauth2CreateRaw({ oAuth2ProviderRequest: { name: client.objectName, ...fields } })),
                update: (id) => this.#providers.providersOauth2PartialUpdateRaw({ id, patchedOAuth2ProviderRequest: fields }),
                previous: previousOAuth2Fields,
            });
            return { ...changes, createdMapping: mappings.created };
        });
    }

    async undoOidcClient(client: OidcClient, changes: OidcClientChanges): Promise<void> {
        await this.#call(`undoing the changes to ${client.objectName}`, async () => {
            await this.#undoApplication(client.objectName, changes);
            if (changes.providerCreated) {
                await this.#providers.providersOauth2DestroyRaw({ id: changes.providerId });
            } else if (changes.previousProvider) {
                await this.#providers.providersOauth2PartialUpdateRaw({
                    id: changes.providerId,
                    patchedOAuth2ProviderRequest: changes.previousProvider,
                });
            }

            if (changes.createdMapping) {
                await this.#mappings.propertymappingsProviderScopeDestroyRaw({ pmUuid: changes.createdMapping });
            }
        });
    }
}

function claimMappingName(objectName: string): string {
    return `${objectName} svc_groups`;
}

/** A Python string literal of `value` (authentik evaluates the mapping's expression as Python). */
function pythonString(value: string): string {
    return JSON.stringify(value);
}

function adminClaimExpression(adminUser: string): string {
    return `return {"svc_groups": ["admin"] if request.user.username == ${pythonString(adminUser)} else ["user"]}`;
}

/** The fields ensureSamlProvider sets, as the provider had them, in the client's request shape. */
function previousSamlFields(provider: Json): Record<string, unknown> {
    return {
        authorizationFlow: text(provider.authorization_flow),
        invalidationFlow: text(provider.invalidation_flow),
        acsUrl: text(provider.acs_url),
        audience: text(provider.audience),
        signingKp: provider.signing_kp ?? null,
        signAssertion: provider.sign_assertion,
        signResponse: provider.sign_response,
        nameIdMapping: provider.name_id_mapping ?? null,
        propertyMappings: provider.property_mappings,
        spBinding: provider.sp_binding,
    };
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

const authentik: IdentityProviderKind = {
    title: 'authentik',
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
