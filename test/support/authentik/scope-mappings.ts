/**
 * Scope mappings (`/propertymappings/provider/scope/`): the managed ones authentik's system blueprints create, and
 * custom ones. authentik runs a mapping's Python expression to get the claims its scope adds; the stand-in runs no
 * Python, so it knows the managed expressions by heart and understands one custom shape, the one Gatehouse writes:
 * `return {"<claim>": [...] if request.user.username == "<name>" else [...]}`. Any other expression is refused with
 * 400 and recorded as a violation (a limit of the stand-in, not of authentik).
 */
import type { ApiContext, ApiOperations } from './api.ts';
import { isSuperuser, groupsOf, userUid } from './directory.ts';
import { ApiError, fieldError, notFound } from './errors.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import type { ScopeMappingRecord, Store, UserRecord } from './store.ts';
import { uuid } from './store.ts';

export const OAUTH2_SCOPE = 'goauthentik.io/providers/oauth2/scope-';
export const PROXY_SCOPE = 'goauthentik.io/providers/proxy/scope-proxy';

interface ManagedMapping {
    managed: string;
    name: string;
    scope_name: string;
    description: string;
    expression: string;
    claims(store: Store, user: UserRecord): Json;
}

/** The mappings of authentik's blueprints `system/providers-oauth2.yaml` and `system/providers-proxy.yaml`. */
const MANAGED: ManagedMapping[] = [
    {
        managed: `${OAUTH2_SCOPE}openid`,
        name: "authentik default OAuth Mapping: OpenID 'openid'",
        scope_name: 'openid',
        description: '',
        expression: [
            '# This scope is required by the OpenID-spec, and must as such exist in authentik.',
            '# The scope by itself does not grant any information',
            'return {}',
        ].join('\n'),
        claims: () => ({}),
    },
    {
        managed: `${OAUTH2_SCOPE}email`,
        name: "authentik default OAuth Mapping: OpenID 'email'",
        scope_name: 'email',
        description: 'Email address',
        expression: ['return {', '    "email": request.user.email,', '    "email_verified": False', '}'].join('\n'),
        claims: (_store, user) => ({ email: user.email, email_verified: false }),
    },
    {
        managed: `${OAUTH2_SCOPE}profile`,
        name: "authentik default OAuth Mapping: OpenID 'profile'",
        scope_name: 'profile',
        description: 'General Profile Information',
        expression: [
            'return {',
            "    # Because authentik only saves the user's full name, and has no concept of first and last names,",
            '    # the full name is used as given name.',
            '    # You can override this behaviour in custom mappings, i.e. `request.user.name.split(" ")`',
            '    "name": request.user.name,',
            '    "given_name": request.user.name,',
            '    "preferred_username": request.user.username,',
            '    "nickname": request.user.username,',
            '    "groups": [group.name for group in request.user.groups.all()],',
            '}',
        ].join('\n'),
        claims: (store, user) => ({
            name: user.name,
            given_name: user.name,
            preferred_username: user.username,
            nickname: user.username,
            groups: groupsOf(store, user).map((group) => group.name),
        }),
    },
    {
        managed: `${OAUTH2_SCOPE}entitlements`,
        name: 'authentik default OAuth Mapping: Application Entitlements',
        scope_name: 'entitlements',
        description: 'Application entitlements',
        expression: [
            'entitlements = [entitlement.name for entitlement in request.user.app_entitlements(provider.application)]',
            'return {',
            '    "entitlements": entitlements,',
            '    "roles": entitlements,',
            '}',
        ].join('\n'),
        // The stand-in has no entitlements.
        claims: () => ({ entitlements: [], roles: [] }),
    },
    {
        managed: `${OAUTH2_SCOPE}offline_access`,
        name: "authentik default OAuth Mapping: OpenID 'offline_access'",
        scope_name: 'offline_access',
        description: 'Access to request new tokens without interaction',
        expression: [
            '# This scope grants the application a refresh token that can be used to refresh user data',
            '# and let the application access authentik without the users interaction',
            'return {}',
        ].join('\n'),
        claims: () => ({}),
    },
    {
        managed: `${OAUTH2_SCOPE}authentik_api`,
        name: 'authentik default OAuth Mapping: authentik API access',
        scope_name: 'goauthentik.io/api',
        description: 'authentik API Access on behalf of your user',
        expression: [
            '# This scope grants the application the ability to access the authentik API',
            '# on behalf of the authorizing user',
            'return {}',
        ].join('\n'),
        claims: () => ({}),
    },
    {
        managed: PROXY_SCOPE,
        name: 'authentik default OAuth Mapping: Proxy outpost',
        scope_name: 'ak_proxy',
        description: 'authentik Proxy - User information',
        expression: [
            '# This mapping is used by the authentik proxy. It passes extra user attributes,',
            '# which are used for example for the HTTP-Basic Authentication mapping.',
            'return {',
            '    "ak_proxy": {',
            '        "user_attributes": request.user.group_attributes(request),',
            '        "is_superuser": request.user.is_superuser,',
            '    }',
            '}',
        ].join('\n'),
        claims: (store, user) => ({ ak_proxy: { user_attributes: {}, is_superuser: isSuperuser(store, user) } }),
    },
];

/** The claim names of each managed mapping: what `claims` answers for any user. */
const MANAGED_CLAIMS: Record<string, string[]> = {
    [`${OAUTH2_SCOPE}openid`]: [],
    [`${OAUTH2_SCOPE}email`]: ['email', 'email_verified'],
    [`${OAUTH2_SCOPE}profile`]: ['name', 'given_name', 'preferred_username', 'nickname', 'groups'],
    [`${OAUTH2_SCOPE}entitlements`]: ['entitlements', 'roles'],
    [`${OAUTH2_SCOPE}offline_access`]: [],
    [`${OAUTH2_SCOPE}authentik_api`]: [],
    [PROXY_SCOPE]: ['ak_proxy'],
};

/** What `set_oauth_defaults` attaches to every proxy provider. */
const PROXY_DEFAULTS = ['openid', 'email', 'profile', 'entitlements'].map((scope) => `${OAUTH2_SCOPE}${scope}`).concat(PROXY_SCOPE);

export function seedScopeMappings(store: Store): void {
    for (const { managed, name, scope_name, description, expression } of MANAGED) {
        store.scopeMappings.push({ pk: uuid(), managed, name, scope_name, description, expression });
    }
}

export function findScopeMapping(store: Store, pk: unknown): ScopeMappingRecord | undefined {
    return store.scopeMappings.find((mapping) => mapping.pk === pk);
}

/** The pks of the managed mappings a proxy provider always has (openid, email, profile, entitlements, proxy). */
export function proxyScopeMappingPks(store: Store): string[] {
    return store.scopeMappings
        .filter((mapping) => mapping.managed && PROXY_DEFAULTS.includes(mapping.managed))
        .map((mapping) => mapping.pk);
}

// The one custom expression the stand-in understands, with Python string literals in either quote.
const STRING = String.raw`(?:"[^"\\\n]*"|'[^'\\\n]*')`;
const LIST = String.raw`\[\s*(?:${STRING}(?:\s*,\s*${STRING})*\s*,?\s*)?\]`;
const BY_USERNAME = new RegExp(
    String.raw`^\s*return\s*\{\s*(${STRING})\s*:\s*(${LIST})\s+if\s+request\.user\.username\s*==\s*(${STRING})\s+else\s+(${LIST})\s*,?\s*\}\s*$`,
);

const unquote = (literal: string): string => literal.slice(1, -1);
const listOf = (literal: string): string[] => (literal.match(new RegExp(STRING, 'g')) ?? []).map(unquote);

interface ByUsername {
    claim: string;
    username: string;
    then: string[];
    otherwise: string[];
}

function parseByUsername(expression: string): ByUsername | undefined {
    const [, claim, then, username, otherwise] = BY_USERNAME.exec(expression) ?? [];
    if (claim === undefined || then === undefined || username === undefined || otherwise === undefined) {
        return undefined;
    }

    return { claim: unquote(claim), username: unquote(username), then: listOf(then), otherwise: listOf(otherwise) };
}

function managedOf(mapping: ScopeMappingRecord): ManagedMapping | undefined {
    const managed = MANAGED.find((candidate) => candidate.managed === mapping.managed);
    return managed && managed.expression === mapping.expression ? managed : undefined;
}

/** The claims the mapping adds for the user, as authentik's evaluation of its expression would. */
export function mappingClaims(store: Store, mapping: ScopeMappingRecord, user: UserRecord): Json {
    const managed = managedOf(mapping);
    if (managed) {
        return managed.claims(store, user);
    }

    const parsed = parseByUsername(mapping.expression);
    return parsed ? { [parsed.claim]: user.username === parsed.username ? parsed.then : parsed.otherwise } : {};
}

/** The names of the claims the mapping can add. */
export function mappingClaimNames(mapping: ScopeMappingRecord): string[] {
    const managed = managedOf(mapping);
    if (managed) {
        return MANAGED_CLAIMS[managed.managed] ?? [];
    }

    const parsed = parseByUsername(mapping.expression);
    return parsed ? [parsed.claim] : [];
}

/** A managed expression as the blueprint wrote it, or the one custom shape; anything else the stand-in cannot run. */
function checkExpression(expression: unknown): void {
    if (typeof expression !== 'string' || MANAGED.some((managed) => managed.expression === expression) || parseByUsername(expression)) {
        return;
    }

    const message =
        'the authentik stand-in does not run Python: the only expression it understands is ' +
        'return {"<claim>": ["..."] if request.user.username == "<name>" else ["..."]}';
    throw new ApiError(400, { expression: [message] }, `expression the stand-in cannot run: ${JSON.stringify(expression)}`);
}

/** `ScopeMappingSerializer`: name unique (PropertyMapping.name), scope_name without spaces, an expression it can run. */
function checkRequest(store: Store, body: Json, existing?: ScopeMappingRecord): void {
    if (body.name !== undefined && store.scopeMappings.some((mapping) => mapping !== existing && mapping.name === body.name)) {
        throw fieldError('name', 'Property Mapping with this name already exists.');
    }

    if (typeof body.scope_name === 'string' && body.scope_name.includes(' ')) {
        throw fieldError('scope_name', 'Value must not contain spaces.');
    }

    if (body.expression !== undefined) {
        checkExpression(body.expression);
    }
}

export function showScopeMapping(mapping: ScopeMappingRecord): Json {
    return {
        ...mapping,
        component: 'ak-property-mapping-provider-scope-form',
        verbose_name: 'Scope Mapping',
        verbose_name_plural: 'Scope Mappings',
        meta_model_name: 'authentik_providers_oauth2.scopemapping',
    };
}

function scopeMapping({ store, params }: ApiContext): ScopeMappingRecord {
    const found = findScopeMapping(store, params.pm_uuid);
    if (!found) throw notFound();
    return found;
}

/** `managed` is read-only (ManagedSerializer), so a request's value is dropped. */
function writable(body: Json): Partial<ScopeMappingRecord> {
    const { managed: _managed, ...fields } = body;
    return fields as Partial<ScopeMappingRecord>;
}

function update(context: ApiContext): { status: number; body: Json } {
    const found = scopeMapping(context);
    checkRequest(context.store, context.body, found);
    Object.assign(found, writable(context.body));
    return { status: 200, body: showScopeMapping(found) };
}

export const scopeMappingOperations: ApiOperations = {
    propertymappings_provider_scope_list: {
        access: 'objects',
        run({ store, query }) {
            const managed = Array.isArray(query.managed) && query.managed.length > 0 ? (query.managed as unknown[]) : undefined;
            let mappings = store.scopeMappings.filter(
                (mapping) =>
                    (!managed || managed.includes(mapping.managed)) &&
                    (query.managed__isnull === undefined || (mapping.managed === null) === query.managed__isnull) &&
                    (query.name === undefined || mapping.name === query.name) &&
                    (query.scope_name === undefined || mapping.scope_name === query.scope_name),
            );
            mappings = searched(mappings, query.search, (mapping) => [mapping.name, mapping.scope_name]);
            return { status: 200, body: paginated(mappings.map(showScopeMapping), query, 'scope_name,name') };
        },
    },

    propertymappings_provider_scope_create: {
        access: 'objects',
        run({ store, body }) {
            checkRequest(store, body);
            // The schema required name, scope_name and expression.
            const created = { description: '', ...writable(body), pk: uuid(), managed: null } as ScopeMappingRecord;
            store.scopeMappings.push(created);
            return { status: 201, body: showScopeMapping(created) };
        },
    },

    propertymappings_provider_scope_retrieve: {
        access: 'objects',
        run(context) {
            return { status: 200, body: showScopeMapping(scopeMapping(context)) };
        },
    },

    propertymappings_provider_scope_update: { access: 'objects', run: update },

    propertymappings_provider_scope_partial_update: { access: 'objects', run: update },

    propertymappings_provider_scope_destroy: {
        access: 'objects',
        run(context) {
            const { store } = context;
            const found = scopeMapping(context);
            store.scopeMappings.splice(store.scopeMappings.indexOf(found), 1);
            for (const provider of store.providers) {
                provider.property_mappings = provider.property_mappings.filter((pk) => pk !== found.pk);
            }

            return { status: 204 };
        },
    },
};

/** The subject authentik puts in `sub` for the user, per the provider's `sub_mode`. */
export function subjectOf(store: Store, subMode: string, user: UserRecord): string {
    switch (subMode) {
        case 'user_id':
            return String(user.pk);
        case 'user_uuid':
            return user.uuid;
        case 'user_username':
            return user.username;
        case 'user_email':
            return user.email;
        case 'user_upn':
            return typeof user.attributes.upn === 'string' ? user.attributes.upn : userUid(store, user);
        default:
            return userUid(store, user);
    }
}
