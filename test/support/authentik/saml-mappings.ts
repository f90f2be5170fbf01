/**
 * SAML property mappings (`/propertymappings/provider/saml/`): the managed ones authentik's system blueprint
 * `system/providers-saml.yaml` creates, listed and read. authentik runs a mapping's Python expression to get the
 * attribute's values; the stand-in runs no Python, so it knows the managed expressions by heart.
 */
import type { ApiContext, ApiOperations } from './api.ts';
import { groupsOf } from './directory.ts';
import { notFound } from './errors.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { type SamlMappingRecord, type Store, type UserRecord, uuid } from './store.ts';

export const SAML_MAPPING = 'goauthentik.io/providers/saml/';

interface ManagedSamlMapping {
    managed: string;
    name: string;
    saml_name: string;
    expression: string;
    /** The attribute's values for the user, as the expression answers them (a generator gives several). */
    values(store: Store, user: UserRecord): string[];
}

/** The entries of `system/providers-saml.yaml`, in its order. */
const MANAGED: ManagedSamlMapping[] = [
    {
        managed: `${SAML_MAPPING}upn`,
        name: 'authentik default SAML Mapping: UPN',
        saml_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn',
        expression: "return request.user.attributes.get('upn', request.user.email)\n",
        values: (_store, user) => [typeof user.attributes.upn === 'string' ? user.attributes.upn : user.email],
    },
    {
        managed: `${SAML_MAPPING}name`,
        name: 'authentik default SAML Mapping: Name',
        saml_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name',
        expression: 'return request.user.name\n',
        values: (_store, user) => [user.name],
    },
    {
        managed: `${SAML_MAPPING}email`,
        name: 'authentik default SAML Mapping: Email',
        saml_name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
        expression: 'return request.user.email\n',
        values: (_store, user) => [user.email],
    },
    {
        managed: `${SAML_MAPPING}username`,
        name: 'authentik default SAML Mapping: Username',
        saml_name: 'http://schemas.goauthentik.io/2021/02/saml/username',
        expression: 'return request.user.username\n',
        values: (_store, user) => [user.username],
    },
    {
        managed: `${SAML_MAPPING}uid`,
        name: 'authentik default SAML Mapping: User ID',
        saml_name: 'http://schemas.goauthentik.io/2021/02/saml/uid',
        expression: 'return request.user.pk\n',
        values: (_store, user) => [String(user.pk)],
    },
    {
        managed: `${SAML_MAPPING}groups`,
        name: 'authentik default SAML Mapping: Groups',
        saml_name: 'http://schemas.xmlsoap.org/claims/Group',
        expression: 'for group in request.user.ak_groups.all():\n    yield group.name\n',
        values: (store, user) => groupsOf(store, user).map((group) => group.name),
    },
    {
        managed: `${SAML_MAPPING}ms-windowsaccountname`,
        name: 'authentik default SAML Mapping: WindowsAccountname (Username)',
        saml_name: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/windowsaccountname',
        expression: 'return request.user.username\n',
        values: (_store, user) => [user.username],
    },
];

export function seedSamlMappings(store: Store): void {
    for (const { managed, name, saml_name, expression } of MANAGED) {
        store.samlMappings.push({ pk: uuid(), managed, name, saml_name, expression, friendly_name: null });
    }
}

export function findSamlMapping(store: Store, pk: unknown): SamlMappingRecord | undefined {
    return store.samlMappings.find((mapping) => mapping.pk === pk);
}

/** The values the mapping gives the user; undefined for an expression the stand-in cannot run. */
export function samlMappingValues(store: Store, mapping: SamlMappingRecord, user: UserRecord): string[] | undefined {
    const managed = MANAGED.find((candidate) => candidate.managed === mapping.managed && candidate.expression === mapping.expression);
    return managed?.values(store, user);
}

export function showSamlMapping(mapping: SamlMappingRecord): Json {
    return {
        ...mapping,
        component: 'ak-property-mapping-provider-saml-form',
        verbose_name: 'SAML Provider Property Mapping',
        verbose_name_plural: 'SAML Provider Property Mappings',
        meta_model_name: 'authentik_providers_saml.samlpropertymapping',
    };
}

function samlMapping({ store, params }: ApiContext): SamlMappingRecord {
    const found = findSamlMapping(store, params.pm_uuid);
    if (!found) throw notFound();
    return found;
}

export const samlMappingOperations: ApiOperations = {
    propertymappings_provider_saml_list: {
        access: 'objects',
        run({ store, query }) {
            const managed = Array.isArray(query.managed) && query.managed.length > 0 ? (query.managed as unknown[]) : undefined;
            let mappings = store.samlMappings.filter(
                (mapping) =>
                    (!managed || managed.includes(mapping.managed)) &&
                    (query.managed__isnull === undefined || (mapping.managed === null) === query.managed__isnull) &&
                    (query.name === undefined || mapping.name === query.name) &&
                    (query.saml_name === undefined || mapping.saml_name === query.saml_name) &&
                    (query.friendly_name === undefined || mapping.friendly_name === query.friendly_name),
            );
            mappings = searched(mappings, query.search, (mapping) => [mapping.name]);
            return { status: 200, body: paginated(mappings.map(showSamlMapping), query, 'name') };
        },
    },

    propertymappings_provider_saml_retrieve: {
        access: 'objects',
        run: (context) => ({ status: 200, body: showSamlMapping(samlMapping(context)) }),
    },
};
