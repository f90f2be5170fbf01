/**
 * authentik, through its official client (`@goauthentik/api`, pinned). Reads use the `...Raw()` calls and read the
 * JSON themselves: the client's generated models throw on fields that an older server does not send (the
 * reference's §9.1), while request bodies are safe either way. Forward auth follows authentik's documentation:
 * one `forward_single` proxy provider and one application per app, since only single-application mode keeps
 * per-app policies, and the provider added to the outpost's list.
 */
import { createRequire } from 'node:module';

import type * as AuthentikApi from '@goauthentik/api';
import type {
    AdminApi,
    ApiResponse,
    CoreApi,
    CryptoApi,
    FlowsApi,
    OutpostsApi,
    PoliciesApi,
    PropertymappingsApi,
    ProvidersApi,
} from '@goauthentik/api';
import Joi from 'joi';

import { authentikForwardAuth } from './authentik/forward-auth.ts';
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

/** What an application's ensure has changed, for its undo. */
type ApplicationChanges = Pick<ProviderChanges, 'applicationCreated' | 'previousGroups' | 'previousApplication'>;
/**
 * The generated client, loaded when a connection is first made rather than with the kind: it is about 45 MB of
 * memory and most of a second of the server's start, which a server not talking to authentik need not pay.
 */
let api: typeof AuthentikApi | undefined;
function authentikApi(): typeof AuthentikApi {
    api ??= createRequire(import.meta.url)('@goauthentik/api') as typeof AuthentikApi;
    return api;
}

const EMBEDDED_OUTPOST = 'goauthentik.io/outposts/embedded';
const DEFAULT_AUTHORIZATION_FLOW = 'default-provider-authorization-implicit-consent';
const DEFAULT_INVALIDATION_FLOW = 'default-provider-invalidation-flow';
const DEFAULT_SIGNING_KEY = 'authentik Self-signed Certificate';
const PAGE_SIZE = 100;
const OIDC_SCOPES = ['openid', 'email', 'profile'].map((scope) => `goauthentik.io/providers/oauth2/scope-${scope}`);
// Since 2026.5 a provider made through the API without grant types gets none, and refuses every authorization.
const OIDC_GRANT_TYPES = (): AuthentikApi.GrantTypeEnum[] => [
    authentikApi().GrantTypeEnum.AuthorizationCode,
    authentikApi().GrantTypeEnum.RefreshToken,
];
const SAML_MAPPING = 'goauthentik.io/providers/saml';
const SAML_NAME_ID = `${SAML_MAPPING}/username`;
const SAML_ATTRIBUTES = ['username', 'email', 'name', 'groups', 'uid'].map((name) => `${SAML_MAPPING}/${name}`);

type Json = Record<string, unknown>;

interface Page {
    pagination: { next: number };
    results: Json[];
}

// The shapes of the answers Gatehouse reads, as authentik's schema gives them (unknown fields allowed): an answer that
// does not fit did not come from a working authentik.
const anyObject = Joi.object().unknown();
const named = (fields: Record<string, Joi.Schema>) => Joi.object(fields).unknown();
const key = Joi.string().required();
const words = Joi.string().allow('').required();
const PAGE = named({
    pagination: named({ next: Joi.number().integer().min(0).required() }).required(),
    results: Joi.array().required(),
});
const ME = named({ user: named({ username: words, is_superuser: Joi.boolean().required() }).required() });
const VERSION = named({ version_current: words });
const OUTPOST = named({ pk: key, name: words, type: words, managed: Joi.string().allow('', null) });
const FLOW = named({ pk: key, slug: key, name: words });
const KEYPAIR = named({ pk: key, name: words });
const TOKEN_KEY = named({ key });

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

    if (error instanceof authentikApi().FetchError || (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') {
        const cause = (error as AuthentikApi.FetchError).cause as (Error & { cause?: { code?: string } }) | undefined;
        const detail = cause?.cause?.code ?? cause?.message ?? (error as Error).message;
        return new IdpError('unreachable', `authentik at ${url} could not be reached (${detail})`);
    }

    if (error instanceof authentikApi().ResponseError) {
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

/** `body` when it fits `schema`; otherwise a not-a-provider error naming the provider and what did not fit. */
function fitting<T>(body: unknown, schema: Joi.Schema, url: string, what: string): T {
    const { error } = schema.validate(body);
    if (error) {
        throw new IdpError(
            'not-a-provider',
            `authentik at ${url} answered ${what} with something that does not fit authentik's schema (${error.message})`,
        );
    }

    return body as T;
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
        const { AdminApi, Configuration, CoreApi, CryptoApi, FlowsApi, OutpostsApi, PoliciesApi, PropertymappingsApi, ProvidersApi } =
            authentikApi();
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

    async #read<T>(call: Promise<ApiResponse<unknown>>, schema: Joi.Schema, what: string): Promise<T> {
        return fitting<T>(await json<unknown>(call), schema, this.#url, what);
    }

    /** Every page of a list, each item fitting `item`. */
    async #all(fetchPage: (page: number) => Promise<ApiResponse<unknown>>, item: Joi.Schema = anyObject): Promise<Json[]> {
        const results: Json[] = [];
        const pageSchema = PAGE.keys({ results: Joi.array().items(item).required() });
        for (let page = 1; page > 0 && page < 1000;) {
            const body = await this.#read<Page>(fetchPage(page), pageSchema, 'a list');
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

            return fitting<{ user: { username: string; is_superuser: boolean } }>(
                await response.raw.json(),
                ME,
                this.#url,
                "its token's user",
            );
        });
        if (!me.user.is_superuser) {
            throw new IdpError('not-admin', `the token's user ${me.user.username} is not an authentik administrator (superuser)`);
        }

        const version = await this.#call('reading the version', () =>
            this.#read<{ version_current: string }>(this.#admin.adminVersionRetrieveRaw(), VERSION, 'its version'),
        );
        return { version: version.version_current, username: text(me.user.username) };
    }

    async discover(): Promise<Discovery> {
        const { version } = await this.checkAdmin();
        return await this.#call('discovering outposts, flows and keys', async () => {
            const outposts = await this.#all((page) => this.#outposts.outpostsInstancesListRaw({ page, pageSize: PAGE_SIZE }), OUTPOST);
            const flows = async (designation: 'authorization' | 'invalidation') =>
                (await this.#all((page) => this.#flows.flowsInstancesListRaw({ designation, page, pageSize: PAGE_SIZE }), FLOW)).map(
                    (flow) => ({
                        pk: text(flow.pk),
                        slug: text(flow.slug),
                        name: text(flow.name),
                    }),
                );
            const keys = await this.#all(
                (page) => this.#crypto.cryptoCertificatekeypairsListRaw({ hasKey: true, page, pageSize: PAGE_SIZE }),
                KEYPAIR,
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

            await this.#core.coreTokensCreateRaw({
                tokenRequest: { identifier, intent: authentikApi().IntentEnum.Api, expiring: false, description },
            });
            const view = await this.#read<{ key: string }>(
                this.#core.coreTokensViewKeyRetrieveRaw({ identifier }),
                TOKEN_KEY,
                'the new token',
            );
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
            if (error instanceof authentikApi().ResponseError && error.response.status === 404) {
                return undefined;
            }

            throw error;
        }
    }

    /** Makes the proxy provider or updates the one there; answers its id. */
    async #ensureProvider(app: ForwardAuthApp, changes: ForwardAuthChanges, recorded: () => Promise<void>): Promise<number> {
        const fields = {
            mode: authentikApi().ProxyMode.ForwardSingle,
            externalHost: app.externalHost,
            authorizationFlow: app.authorizationFlow,
            invalidationFlow: app.invalidationFlow,
        };
        const existing = await this.#findProvider(app.objectName);
        if (!existing) {
            const created = await json(
                this.#providers.providersProxyCreateRaw({ proxyProviderRequest: { name: app.objectName, ...fields } }),
            );
            return recordCreatedProvider(changes, created);
        }

        const id = Number(existing.pk);
        changes.providerId = id;
        changes.previousProvider = {
            externalHost: text(existing.external_host),
            authorizationFlow: text(existing.authorization_flow),
            invalidationFlow: text(existing.invalidation_flow),
        };
        await recorded();
        await this.#providers.providersProxyPartialUpdateRaw({ id, patchedProxyProviderRequest: fields });
        return id;
    }

    /** Makes the application or updates the one there, then binds exactly the app's groups to it. */
    async #ensureApplication(
        app: Pick<ForwardAuthApp, 'objectName' | 'title' | 'launchUrl' | 'groups'>,
        providerId: number,
        changes: ApplicationChanges,
        recorded: () => Promise<void> = () => Promise.resolve(),
    ): Promise<void> {
        const fields = { name: app.title, provider: providerId, metaLaunchUrl: app.launchUrl };
        const existing = await this.#findApplication(app.objectName);
        if (!existing) {
            const created = await json(this.#core.coreApplicationsCreateRaw({ applicationRequest: { slug: app.objectName, ...fields } }));
            changes.applicationCreated = true;
            // Its bindings go with it when the undo deletes it.
            await this.#bindGroups(text(created.pk), app.groups);
            return;
        }

        changes.previousApplication = {
            name: text(existing.name),
            provider: existing.provider === null || existing.provider === undefined ? null : Number(existing.provider),
            metaLaunchUrl: text(existing.meta_launch_url),
        };
        await recorded();
        await this.#core.coreApplicationsPartialUpdateRaw({ slug: app.objectName, patchedApplicationRequest: fields });
        await this.#bindGroups(text(existing.pk), app.groups, async (before) => {
            changes.previousGroups = before;
            await recorded();
        });
    }

    async #groupBindings(target: string): Promise<Json[]> {
        const bindings = await this.#all((page) => this.#policies.policiesBindingsListRaw({ target, page, pageSize: PAGE_SIZE }));
        return bindings.filter((binding) => binding.group !== null && binding.group !== undefined);
    }

    /**
     * Binds exactly `groups` to the application (other kinds of binding are left alone); answers the groups bound
     * before, also to `found` before the first change.
     */
    async #bindGroups(target: string, groups: string[], found?: (before: string[]) => void | Promise<void>): Promise<string[]> {
        const bindings = await this.#groupBindings(target);
        const before = bindings.map((binding) => text(binding.group));
        await found?.(before);
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

    /** Adds the provider to the outpost unless it is there; `adding` is awaited just before it is added. */
    async #addToOutpost(outpost: string, providerId: number, serialise: Serialise, adding: () => Promise<void>): Promise<void> {
        await serialise(`authentik-outpost:${outpost}`, async () => {
            const current = await json(this.#outposts.outpostsInstancesRetrieveRaw({ uuid: outpost }));
            const providers = ((current.providers as number[] | undefined) ?? []).map(Number);
            if (providers.includes(providerId)) {
                return;
            }

            await adding();
            await this.#outposts.outpostsInstancesPartialUpdateRaw({
                uuid: outpost,
                patchedOutpostRequest: { providers: [...providers, providerId] },
            });
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

    async ensureForwardAuthApp(
        app: ForwardAuthApp,
        serialise: Serialise,
        changes: ForwardAuthChanges,
        recorded: () => Promise<void> = () => Promise.resolve(),
    ): Promise<void> {
        await this.#call(`setting up ${app.objectName}`, async () => {
            const providerId = await this.#ensureProvider(app, changes, recorded);
            await this.#ensureApplication(app, providerId, changes, recorded);
            await this.#addToOutpost(app.outpost, providerId, serialise, async () => {
                changes.addedToOutpost = true;
                await recorded();
            });
        });
    }

    async undoForwardAuthApp(app: ForwardAuthApp, changes: ForwardAuthChanges): Promise<void> {
        await this.#call(`undoing the changes to ${app.objectName}`, async () => {
            await this.#undoApplication(changes.applicationSlug, changes);
            if (changes.providerId === null) {
                return;
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
                    patchedProxyProviderRequest: { mode: authentikApi().ProxyMode.ForwardSingle, ...changes.previousProvider },
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

            const target = text(application.pk);
            const seen: { before?: string[] } = {};
            try {
                return await this.#bindGroups(target, groups, (before) => {
                    seen.before = before;
                });
            } catch (error) {
                const failure = await asIdpError(error, this.#url, `binding groups to ${objectName}`);
                if (seen.before) {
                    // What the call had changed before it failed is put back; should that fail too, both are told.
                    await this.#bindGroups(target, seen.before).catch(async (undoError: unknown) => {
                        const undo = await asIdpError(undoError, this.#url, `putting back the groups of ${objectName}`);
                        throw new IdpError(failure.reason, `${failure.message}; ${undo.message}`);
                    });
                }

                throw failure;
            }
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

    async ensureSamlProvider(app: SamlApp, changes: SamlChanges, recorded: () => Promise<void> = () => Promise.resolve()): Promise<void> {
        await this.#call(`setting up ${app.objectName}`, async () => {
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
                spBinding: authentikApi().SAMLBindingsEnum.Post,
            };
            await this.#ensureWithApplication(app, changes, await this.#findSamlProvider(app.objectName), {
                create: () => json(this.#providers.providersSamlCreateRaw({ sAMLProviderRequest: { name: app.objectName, ...fields } })),
                update: (id) => this.#providers.providersSamlPartialUpdateRaw({ id, patchedSAMLProviderRequest: fields }),
                previous: previousSamlFields,
                recorded,
            });
        });
    }

    async undoSamlProvider(app: SamlApp, changes: SamlChanges): Promise<void> {
        await this.#call(`undoing the changes to ${app.objectName}`, async () => {
            await this.#undoApplication(app.objectName, changes);
            if (changes.providerId === null) {
                return;
            }

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

    /** Makes the provider (or updates the one there), then its application, bound to the groups, recording each change. */
    async #ensureWithApplication(
        app: { objectName: string; title: string; launchUrl: string; groups: string[] },
        changes: ProviderChanges,
        existing: Json | undefined,
        provider: {
            create: () => Promise<Json>;
            update: (id: number) => Promise<unknown>;
            previous: (existing: Json) => Record<string, unknown>;
            recorded: () => Promise<void>;
        },
    ): Promise<void> {
        let providerId: number;
        if (existing) {
            providerId = Number(existing.pk);
            changes.providerId = providerId;
            changes.previousProvider = provider.previous(existing);
            await provider.recorded();
            await provider.update(providerId);
        } else {
            providerId = recordCreatedProvider(changes, await provider.create());
            await provider.recorded();
        }

        await this.#ensureApplication(app, providerId, changes, provider.recorded);
    }

    /** Deletes an application the run made, or puts back the fields and groups it had before. */
    async #undoApplication(slug: string, changes: ApplicationChanges): Promise<void> {
        if (changes.applicationCreated) {
            await this.#core.coreApplicationsDestroyRaw({ slug });
            return;
        }

        const previous = changes.previousApplication;
        if (previous) {
            await this.#core.coreApplicationsPartialUpdateRaw({ slug, patchedApplicationRequest: previous });
        }

        if (changes.previousGroups) {
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

    async #scopeMappings(client: OidcClient, changes: OidcClientChanges, recorded: () => Promise<void>): Promise<string[]> {
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
            return pks;
        }

        return [...pks, await this.#ensureClaimMapping(client.objectName, client.adminClaimFor, changes, recorded)];
    }

    async #ensureClaimMapping(
        objectName: string,
        adminUser: string,
        changes: OidcClientChanges,
        recorded: () => Promise<void>,
    ): Promise<string> {
        const fields = { name: claimMappingName(objectName), scopeName: 'profile', expression: adminClaimExpression(adminUser) };
        const existing = await this.#findClaimMapping(objectName);
        if (existing) {
            changes.previousMapping = {
                pk: text(existing.pk),
                fields: { name: text(existing.name), scopeName: text(existing.scope_name), expression: text(existing.expression) },
            };
            await recorded();
            await this.#mappings.propertymappingsProviderScopePartialUpdateRaw({
                pmUuid: text(existing.pk),
                patchedScopeMappingRequest: fields,
            });
            return text(existing.pk);
        }

        const created = await json(this.#mappings.propertymappingsProviderScopeCreateRaw({ scopeMappingRequest: fields }));
        changes.createdMapping = text(created.pk);
        await recorded();
        return changes.createdMapping;
    }

    async ensureOidcClient(
        client: OidcClient,
        changes: OidcClientChanges,
        recorded: () => Promise<void> = () => Promise.resolve(),
    ): Promise<void> {
        await this.#call(`setting up ${client.objectName}`, async () => {
            const mappings = await this.#scopeMappings(client, changes, recorded);
            const fields = {
                authorizationFlow: client.authorizationFlow,
                invalidationFlow: client.invalidationFlow,
                clientType: authentikApi().ClientTypeEnum.Confidential,
                grantTypes: OIDC_GRANT_TYPES(),
                clientId: client.clientId,
                clientSecret: client.clientSecret,
                redirectUris: [{ matchingMode: authentikApi().MatchingModeEnum.Regex, url: client.redirectPattern }],
                signingKey: client.signingKey,
                propertyMappings: mappings,
            };
            await this.#ensureWithApplication(client, changes, await this.#findOAuth2Provider(client.objectName), {
                create: () =>
                    json(this.#providers.providersOauth2CreateRaw({ oAuth2ProviderRequest: { name: client.objectName, ...fields } })),
                update: (id) => this.#providers.providersOauth2PartialUpdateRaw({ id, patchedOAuth2ProviderRequest: fields }),
                previous: previousOAuth2Fields,
                recorded,
            });
        });
    }

    async undoOidcClient(client: OidcClient, changes: OidcClientChanges): Promise<void> {
        await this.#call(`undoing the changes to ${client.objectName}`, async () => {
            await this.#undoApplication(client.objectName, changes);
            if (changes.providerCreated && changes.providerId !== null) {
                await this.#providers.providersOauth2DestroyRaw({ id: changes.providerId });
            } else if (changes.previousProvider && changes.providerId !== null) {
                await this.#providers.providersOauth2PartialUpdateRaw({
                    id: changes.providerId,
                    patchedOAuth2ProviderRequest: changes.previousProvider,
                });
            }

            if (changes.createdMapping) {
                await this.#mappings.propertymappingsProviderScopeDestroyRaw({ pmUuid: changes.createdMapping });
            } else if (changes.previousMapping) {
                await this.#mappings.propertymappingsProviderScopePartialUpdateRaw({
                    pmUuid: changes.previousMapping.pk,
                    patchedScopeMappingRequest: changes.previousMapping.fields,
                });
            }
        });
    }
}

/** Notes a provider the adapter has just made; answers its id. */
function recordCreatedProvider(changes: { providerId: number | null; providerCreated: boolean }, created: Json): number {
    const id = Number(created.pk);
    changes.providerId = id;
    changes.providerCreated = true;
    return id;
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
