/**
 * Outposts: the embedded one authentik creates (`/outposts/instances/`). Its `providers` list is replaced whole by a
 * PATCH. As in authentik's OutpostSerializer, the embedded outpost keeps its name and may have no providers; the
 * providers must match the outpost's type when the request names the type. The outpost's service account and API
 * token exist too, as authentik makes them.
 */
import type { ApiContext, ApiOperations } from './api.ts';
import { createUser } from './directory.ts';
import { fieldError, notFound, unknownPk } from './errors.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { findProvider, showProvider } from './providers.ts';
import { type OutpostRecord, type Store, uuid } from './store.ts';
import { createToken } from './tokens.ts';

export const EMBEDDED_OUTPOST_MANAGED = 'goauthentik.io/outposts/embedded';
export const EMBEDDED_OUTPOST_NAME = 'authentik Embedded Outpost';
const REFRESH_INTERVAL_S = 300;
/** The provider kind each outpost type serves. */
const OUTPOST_PROVIDER_KIND: Record<OutpostRecord['type'], string> = { proxy: 'proxy', ldap: 'ldap', radius: 'radius', rac: 'rac' };
const KIND_CLASS: Record<string, string> = { proxy: 'ProxyProvider', oauth2: 'OAuth2Provider' };

export function embeddedOutpost(store: Store): OutpostRecord | undefined {
    return store.outposts.find((outpost) => outpost.managed === EMBEDDED_OUTPOST_MANAGED);
}

export function seedEmbeddedOutpost(store: Store): OutpostRecord {
    const outpost: OutpostRecord = {
        pk: uuid(),
        name: EMBEDDED_OUTPOST_NAME,
        type: 'proxy',
        providers: [],
        service_connection: null,
        managed: EMBEDDED_OUTPOST_MANAGED,
        config: {
            authentik_host: store.url,
            authentik_host_insecure: false,
            authentik_host_browser: '',
            log_level: 'info',
            object_naming_template: 'ak-outpost-%(name)s',
            refresh_interval: 'minutes=5',
        },
    };
    store.outposts.push(outpost);
    const serviceAccount = createUser(store, {
        username: `ak-outpost-${outpost.pk.replaceAll('-', '')}`,
        password: '',
        name: `Outpost ${outpost.name} Service-Account`,
        type: 'internal_service_account',
        path: 'goauthentik.io/outposts',
    });
    createToken(store, {
        identifier: tokenIdentifier(outpost),
        user: serviceAccount,
        expiring: false,
        managed: `goauthentik.io/outpost/${tokenIdentifier(outpost)}`,
    });
    return outpost;
}

const tokenIdentifier = (outpost: OutpostRecord): string => `ak-outpost-${outpost.pk}-api`;

export function showOutpost(store: Store, outpost: OutpostRecord): Json {
    const providers = outpost.providers.map((pk) => findProvider(store, pk)).filter((provider) => provider !== undefined);
    return {
        ...outpost,
        providers_obj: providers.map((provider) => showProvider(store, provider)),
        service_connection_obj: null,
        refresh_interval_s: REFRESH_INTERVAL_S,
        token_identifier: tokenIdentifier(outpost),
    };
}

function checkRequest(store: Store, outpost: OutpostRecord, body: Json): void {
    if (body.name !== undefined && outpost.managed === EMBEDDED_OUTPOST_MANAGED && body.name !== EMBEDDED_OUTPOST_NAME) {
        throw fieldError('name', "Embedded outpost's name cannot be changed");
    }

    if (body.service_connection !== undefined && body.service_connection !== null) {
        throw unknownPk('service_connection', body.service_connection);
    }

    if (body.providers === undefined) {
        return;
    }

    const providers = body.providers as number[];
    for (const pk of providers) {
        const provider = findProvider(store, pk);
        if (!provider) throw unknownPk('providers', pk);
        const type = body.type as OutpostRecord['type'] | undefined;
        if (type && OUTPOST_PROVIDER_KIND[type] !== provider.kind) {
            throw fieldError(
                'providers',
                `Outpost type ${type} can't be used with ${KIND_CLASS[provider.kind] ?? provider.kind} providers.`,
            );
        }
    }

    if (outpost.managed !== EMBEDDED_OUTPOST_MANAGED && providers.length < 1) {
        throw fieldError('providers', 'This list may not be empty.');
    }
}

function outpost({ store, params }: ApiContext): OutpostRecord {
    const found = store.outposts.find((candidate) => candidate.pk === params.uuid);
    if (!found) throw notFound();
    return found;
}

function update(context: ApiContext): { status: number; body: Json } {
    const found = outpost(context);
    checkRequest(context.store, found, context.body);
    Object.assign(found, context.body);
    found.providers = [...new Set(found.providers)];
    return { status: 200, body: showOutpost(context.store, found) };
}

const matches = (value: string | null, wanted: unknown, how: 'iexact' | 'icontains'): boolean => {
    if (typeof wanted !== 'string') return true;
    const text = (value ?? '').toLowerCase();
    return how === 'iexact' ? text === wanted.toLowerCase() : text.includes(wanted.toLowerCase());
};

export const outpostOperations: ApiOperations = {
    outposts_instances_list: {
        access: 'objects',
        run({ store, query }) {
            const byProvider = Array.isArray(query.providers_by_pk) && query.providers_by_pk.length > 0 ? query.providers_by_pk : undefined;
            let outposts = store.outposts.filter(
                (candidate) =>
                    matches(candidate.managed, query.managed__iexact, 'iexact') &&
                    matches(candidate.managed, query.managed__icontains, 'icontains') &&
                    matches(candidate.name, query.name__iexact, 'iexact') &&
                    matches(candidate.name, query.name__icontains, 'icontains') &&
                    (query.providers__isnull === undefined || (candidate.providers.length === 0) === query.providers__isnull) &&
                    (!byProvider || candidate.providers.some((pk) => byProvider.includes(pk))),
            );
            outposts = searched(outposts, query.search, (candidate) => [
                candidate.name,
                ...candidate.providers.map((pk) => findProvider(store, pk)?.name),
            ]);
            return {
                status: 200,
                body: paginated(
                    outposts.map((candidate) => showOutpost(store, candidate)),
                    query,
                    'name',
                ),
            };
        },
    },

    outposts_instances_retrieve: {
        access: 'objects',
        run(context) {
            return { status: 200, body: showOutpost(context.store, outpost(context)) };
        },
    },

    outposts_instances_update: { access: 'objects', run: update },

    outposts_instances_partial_update: { access: 'objects', run: update },
};
