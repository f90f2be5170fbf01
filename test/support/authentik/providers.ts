/**
 * What every kind of provider shares: the `Provider` shape (in `provider_obj` and `providers_obj`), the flows they
 * refer to, unique names across kinds, and what deleting one does. A kind of provider (proxy-providers.ts,
 * oauth2-providers.ts, saml-providers.ts) adds its own fields, rules and operations, and an entry in PROVIDER_KINDS.
 */
import type { ApiContext, ApiOperations } from './api.ts';
import { notFound, notUnique, unknownPk } from './errors.ts';
import { findFlow } from './flows.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import type { ApplicationRecord, OAuth2ProviderRecord, ProviderRecord, Store } from './store.ts';

export interface ProviderKind {
    verboseName: string;
    verboseNamePlural: string;
    /** The web component of authentik's admin UI that edits this kind. */
    component: string;
    metaModelName: string;
    /** Where an application of this provider is opened, when the application names no launch URL. */
    launchUrl(store: Store, provider: ProviderRecord): string | null;
}

/** `OAuth2Provider.launch_url`: the first authorization redirect URI without its path, as `urlparse(...)._replace(path="")`. */
function oauth2LaunchUrl(provider: OAuth2ProviderRecord): string | null {
    const first = provider.redirect_uris.find((entry) => entry.redirect_uri_type === 'authorization');
    const parts = first && /^([^:/?#]+:)?(\/\/[^/?#]*)?[^?#]*(.*)$/.exec(first.url);
    return parts ? `${parts[1] ?? ''}${parts[2] ?? ''}${parts[3] ?? ''}` : null;
}

export const PROVIDER_KINDS: Record<ProviderRecord['kind'], ProviderKind> = {
    proxy: {
        verboseName: 'Proxy Provider',
        verboseNamePlural: 'Proxy Providers',
        component: 'ak-provider-proxy-form',
        metaModelName: 'authentik_providers_proxy.proxyprovider',
        launchUrl: (_store, provider) => (provider.kind === 'proxy' ? provider.external_host : null),
    },
    oauth2: {
        verboseName: 'OAuth2/OpenID Provider',
        verboseNamePlural: 'OAuth2/OpenID Providers',
        component: 'ak-provider-oauth2-form',
        metaModelName: 'authentik_providers_oauth2.oauth2provider',
        launchUrl: (_store, provider) => (provider.kind === 'oauth2' ? oauth2LaunchUrl(provider) : null),
    },
    saml: {
        verboseName: 'SAML Provider',
        verboseNamePlural: 'SAML Providers',
        component: 'ak-provider-saml-form',
        metaModelName: 'authentik_providers_saml.samlprovider',
        // `SAMLProvider.launch_url`: the IdP-initiated URL, a path (Django's `reverse`).
        launchUrl: (store, provider) => {
            const application = applicationOf(store, provider);
            return application ? `/application/saml/${application.slug}/sso/binding/init/` : null;
        },
    },
};

export function findProvider(store: Store, pk: unknown): ProviderRecord | undefined {
    return store.providers.find((provider) => provider.pk === pk);
}

/** The application the provider is the (main) provider of: one at most, as `Application.provider` is one-to-one. */
export function applicationOf(store: Store, provider: ProviderRecord): ApplicationRecord | undefined {
    return store.applications.find((application) => application.provider === provider.pk);
}

function backchannelApplicationOf(store: Store, provider: ProviderRecord): ApplicationRecord | undefined {
    return store.applications.find((application) => application.backchannel_providers.includes(provider.pk));
}

/** The `Provider` schema: the fields all kinds share, with their read-only companions. */
export function showProvider(store: Store, provider: ProviderRecord): Json {
    const kind = PROVIDER_KINDS[provider.kind];
    const application = applicationOf(store, provider);
    const backchannel = backchannelApplicationOf(store, provider);
    return {
        pk: provider.pk,
        name: provider.name,
        authentication_flow: provider.authentication_flow,
        authorization_flow: provider.authorization_flow,
        invalidation_flow: provider.invalidation_flow,
        property_mappings: provider.property_mappings,
        component: kind.component,
        assigned_application_slug: application?.slug ?? null,
        assigned_application_name: application?.name ?? null,
        assigned_backchannel_application_slug: backchannel?.slug ?? null,
        assigned_backchannel_application_name: backchannel?.name ?? null,
        verbose_name: kind.verboseName,
        verbose_name_plural: kind.verboseNamePlural,
        meta_model_name: kind.metaModelName,
    };
}

/** The flows a provider request names must exist; the field-level check DRF makes first. */
export function checkFlows(store: Store, body: Json): void {
    for (const field of ['authorization_flow', 'invalidation_flow', 'authentication_flow']) {
        const value = body[field];
        if (value !== undefined && value !== null && !findFlow(store, value)) {
            throw unknownPk(field, value);
        }
    }
}

/** `Provider.name` is unique across every kind of provider. */
export function checkUniqueName(store: Store, name: unknown, except?: ProviderRecord): void {
    if (name !== undefined && store.providers.some((provider) => provider !== except && provider.name === name)) {
        throw notUnique('name', 'provider');
    }
}

/** Deleting a provider takes it off every outpost and leaves its application without a provider. */
export function deleteProvider(store: Store, provider: ProviderRecord): void {
    store.providers.splice(store.providers.indexOf(provider), 1);
    for (const other of store.providers) {
        if (other.kind !== 'saml') other.jwt_federation_providers = other.jwt_federation_providers.filter((pk) => pk !== provider.pk);
    }

    for (const outpost of store.outposts) {
        outpost.providers = outpost.providers.filter((pk) => pk !== provider.pk);
    }

    for (const application of store.applications) {
        if (application.provider === provider.pk) application.provider = null;
        application.backchannel_providers = application.backchannel_providers.filter((pk) => pk !== provider.pk);
    }
}

/** One kind of provider as its operations need it: its records listed, shown, made and changed. */
export interface ProviderFamily<R extends ProviderRecord> {
    kind: R['kind'];
    /** The records the list's filters keep (search and paging come after). */
    filtered(store: Store, query: Record<string, unknown>): R[];
    show(store: Store, provider: R): Json;
    create(store: Store, body: Json): R;
    /** Checks and applies a PUT or PATCH body: DRF writes only the fields a request sends. */
    change(store: Store, provider: R, body: Json): void;
}

/** The provider of the path's `id`, of the family's kind; any other is a 404, as authentik's per-kind views answer. */
export function providerOfKind<R extends ProviderRecord>(kind: R['kind'], { store, params }: ApiContext): R {
    const provider = findProvider(store, params.id);
    if (provider?.kind !== kind) throw notFound();
    return provider as R;
}

/** `<prefix>_list`, `_create`, `_retrieve`, `_update`, `_partial_update` and `_destroy` of one kind of provider. */
export function providerOperations<R extends ProviderRecord>(prefix: string, family: ProviderFamily<R>): ApiOperations {
    const one = (context: ApiContext) => providerOfKind<R>(family.kind, context);
    const update = (context: ApiContext) => {
        const provider = one(context);
        family.change(context.store, provider, context.body);
        return { status: 200, body: family.show(context.store, provider) };
    };
    return {
        [`${prefix}_list`]: {
            access: 'objects',
            run({ store, query }) {
                const providers = searched(family.filtered(store, query), query.search, (provider) => [provider.name]);
                const shown = providers.map((provider) => family.show(store, provider));
                return { status: 200, body: paginated(shown, query, 'name') };
            },
        },
        [`${prefix}_create`]: {
            access: 'objects',
            run: ({ store, body }) => ({ status: 201, body: family.show(store, family.create(store, body)) }),
        },
        [`${prefix}_retrieve`]: {
            access: 'objects',
            run: (context) => ({ status: 200, body: family.show(context.store, one(context)) }),
        },
        [`${prefix}_update`]: { access: 'objects', run: update },
        [`${prefix}_partial_update`]: { access: 'objects', run: update },
        [`${prefix}_destroy`]: {
            access: 'objects',
            run(context) {
                deleteProvider(context.store, one(context));
                return { status: 204 };
            },
        },
    };
}
