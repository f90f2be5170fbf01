/**
 * An authentik stand-in for tests, since authentik itself cannot run here: its admin API (the operations Gatehouse
 * calls, checked both ways against the schema.yml of `@goauthentik/api`), its sign-in and authorization pages, the
 * embedded outpost's forward auth, a real OpenID Connect provider behind each OAuth2 provider and a real SAML IdP
 * behind each SAML provider, on one HTTP server on 127.0.0.1. It starts as a fresh install does: akadmin (in
 * authentik Admins) with the bootstrap token, the default flows, the self-signed keypair, the managed scope and
 * SAML mappings, the embedded outpost.
 */
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import { AdminApi, type ApiOperations } from './api.ts';
import { applicationOperations, showApplication } from './applications.ts';
import { AuthentikWeb } from './authorization.ts';
import { cryptoOperations, seedKeypairs, showKeypair } from './crypto.ts';
import {
    createGroup,
    createUser,
    describeUser,
    directoryOperations,
    findUserByName,
    isSuperuser,
    type NewUser,
    seedDirectory,
    showGroup,
    showUser,
    type StandInUser,
    versionDropsSessionUsers,
} from './directory.ts';
import { EmbeddedOutpost } from './embedded-outpost.ts';
import { FailureRules } from './failures.ts';
import { flowOperations, seedFlows, showFlow } from './flows.ts';
import type { Json, WebRequest } from './http.ts';
import { oauth2ProviderOperations, showOAuth2Provider } from './oauth2-providers.ts';
import { OpenIdEndpoints, type RawHandler } from './openid-endpoints.ts';
import { outpostOperations, seedEmbeddedOutpost, showOutpost } from './outposts.ts';
import { policyOperations, showBinding } from './policies.ts';
import { proxyProviderOperations, showProxyProvider } from './proxy-providers.ts';
import { SamlEndpoints } from './saml-endpoints.ts';
import { samlMappingOperations, seedSamlMappings, showSamlMapping } from './saml-mappings.ts';
import { samlProviderOperations, showSamlProvider, usesIssuerOverride } from './saml-providers.ts';
import { scopeMappingOperations, seedScopeMappings, showScopeMapping } from './scope-mappings.ts';
import { authentikDocument, type AuthentikDocument, Router } from './schema.ts';
import { SchemaValidator } from './schema-validation.ts';
import { type RecordedRequest, requestListener } from './server.ts';
import { generateId, type ProviderRecord, Store } from './store.ts';
import { systemOperations } from './system.ts';
import { BOOTSTRAP_TOKEN_IDENTIFIER, createToken, showToken, tokenOperations } from './tokens.ts';

export const DEFAULT_VERSION = '2026.8.3';

const OPERATIONS: ApiOperations = {
    ...systemOperations,
    ...directoryOperations,
    ...tokenOperations,
    ...flowOperations,
    ...cryptoOperations,
    ...outpostOperations,
    ...proxyProviderOperations,
    ...oauth2ProviderOperations,
    ...samlProviderOperations,
    ...scopeMappingOperations,
    ...samlMappingOperations,
    ...applicationOperations,
    ...policyOperations,
};

export interface StandInOptions {
    /** The version the server reports; before 2026.8 `/core/users/me/` leaves out `users`, as those servers do. */
    version?: string;
    port?: number;
}

export interface StandInState {
    providers: Json[];
    applications: Json[];
    bindings: Json[];
    outposts: Json[];
    tokens: Json[];
    groups: Json[];
    users: Json[];
    flows: Json[];
    keypairs: Json[];
    scopeMappings: Json[];
    samlMappings: Json[];
}

function showAnyProvider(store: Store, provider: ProviderRecord): Json {
    switch (provider.kind) {
        case 'proxy':
            return showProxyProvider(store, provider);
        case 'oauth2':
            return showOAuth2Provider(store, provider);
        case 'saml':
            return showSamlProvider(store, provider);
    }
}

/** server.ts offers every request to its `openid` part first: this one passes the SAML side's requests on too. */
class ProtocolEndpoints extends OpenIdEndpoints {
    constructor(
        store: Store,
        web: AuthentikWeb,
        violation: (text: string) => void,
        private readonly saml: SamlEndpoints,
    ) {
        super(store, web, violation);
    }

    override route(request: WebRequest): RawHandler | undefined {
        return this.saml.route(request) ?? super.route(request);
    }
}

const schemas = new Map<string, { router: Router; validator: SchemaValidator }>();

/** Without `SessionUser.users`, which servers before 2026.8 do not send. */
function withoutSessionUsers(document: AuthentikDocument): AuthentikDocument {
    const sessionUser = document.schemas.SessionUser ?? {};
    const required = (sessionUser.required as string[] | undefined) ?? [];
    const adapted = { ...sessionUser, required: required.filter((field) => field !== 'users') };
    return { ...document, schemas: { ...document.schemas, SessionUser: adapted } };
}

const ISSUER_OVERRIDE_FIELDS = ['issuer_override', 'url_issuer', 'url_unified', 'url_unified_init'];

/** The SAML provider's entity ID as `issuer` (a string), as before 2026.5, without what came with `issuer_override`. */
function withSamlIssuer(document: AuthentikDocument): AuthentikDocument {
    const schemas = { ...document.schemas };
    for (const name of ['SAMLProvider', 'SAMLProviderRequest', 'PatchedSAMLProviderRequest']) {
        const schema = schemas[name] ?? {};
        const properties = Object.fromEntries(
            Object.entries((schema.properties ?? {}) as Record<string, unknown>).filter(
                ([field]) => !ISSUER_OVERRIDE_FIELDS.includes(field),
            ),
        );
        const required = ((schema.required as string[] | undefined) ?? []).filter((field) => !ISSUER_OVERRIDE_FIELDS.includes(field));
        schemas[name] = { ...schema, properties: { ...properties, issuer: { type: 'string' } }, required };
    }

    return { ...document, schemas };
}

/** The schema as a server of that version answers: the installed document, less what older servers do not have. */
function schemaFor(version: string): { router: Router; validator: SchemaValidator } {
    const dropsSessionUsers = versionDropsSessionUsers(version);
    const samlIssuer = !usesIssuerOverride(version);
    const key = `${dropsSessionUsers ? 'without' : 'with'} SessionUser.users, SAML ${samlIssuer ? 'issuer' : 'issuer_override'}`;
    let found = schemas.get(key);
    if (!found) {
        let document: AuthentikDocument = authentikDocument();
        if (dropsSessionUsers) document = withoutSessionUsers(document);
        if (samlIssuer) document = withSamlIssuer(document);
        found = { router: new Router(document), validator: new SchemaValidator(document) };
        schemas.set(key, found);
    }

    return found;
}

function checkOperationsExist(): void {
    const known = new Set(authentikDocument().operations.map((operation) => operation.id));
    const unknown = Object.keys(OPERATIONS).filter((id) => !known.has(id));
    if (unknown.length > 0) {
        throw new Error(`the authentik stand-in serves operations its schema does not have: ${unknown.join(', ')}`);
    }
}

export class AuthentikStandIn {
    /** http://127.0.0.1:<port>, without a trailing slash. */
    readonly url: string;
    /** A non-expiring API token of akadmin, identifier authentik-bootstrap-token, as AUTHENTIK_BOOTSTRAP_TOKEN makes. */
    readonly bootstrapToken: string;
    /** akadmin's password, as AUTHENTIK_BOOTSTRAP_PASSWORD sets it. */
    readonly bootstrapPassword = generateId(24);
    /** Every request the schema refused and every answer of the stand-in that does not match it. */
    readonly violations: string[] = [];
    readonly requests: RecordedRequest[] = [];
    /** While true, every /api/v3 request has its connection reset. */
    down = false;
    /** Requests a test wants refused: `failures.add({ method: 'PATCH', path: /^\/outposts\//, nth: 1, status: 500 })`. */
    readonly failures = new FailureRules();
    readonly #server: Http.Server;
    readonly #store: Store;

    constructor(server: Http.Server, url: string, version: string) {
        checkOperationsExist();
        this.#server = server;
        this.url = url;
        this.#store = new Store(url, version);
        seedFlows(this.#store);
        seedKeypairs(this.#store);
        seedScopeMappings(this.#store);
        seedSamlMappings(this.#store);
        const admin = seedDirectory(this.#store, this.bootstrapPassword);
        seedEmbeddedOutpost(this.#store);
        this.bootstrapToken = createToken(this.#store, { identifier: BOOTSTRAP_TOKEN_IDENTIFIER, user: admin, expiring: false }).key;
        const { router, validator } = schemaFor(version);
        const violation = (text: string) => this.violations.push(text);
        const api = new AdminApi(this.#store, router, validator, OPERATIONS, violation);
        const web = new AuthentikWeb(this.#store);
        const outpost = new EmbeddedOutpost(this.#store, web);
        const openid = new ProtocolEndpoints(this.#store, web, violation, new SamlEndpoints(this.#store, web, violation));
        const record = (request: RecordedRequest) => this.requests.push(request);
        server.on(
            'request',
            requestListener({
                api,
                web,
                outpost,
                openid,
                isDown: () => this.down,
                failure: (method, path) => this.failures.failure(method, path),
                record,
                violation,
            }),
        );
    }

    /** Adds a group; answers its pk (a uuid). */
    addGroup(name: string): string {
        return createGroup(this.#store, name).pk;
    }

    /** Adds a user (groups by name, created when missing; `isSuperuser` puts them in authentik Admins); answers the pk. */
    addUser(user: Omit<NewUser, 'type' | 'path'>): number {
        return createUser(this.#store, user).pk;
    }

    /** Removes a user and their group memberships, as deleting them in authentik's admin interface does. */
    removeUser(username: string): void {
        const user = findUserByName(this.#store, username);
        if (!user) {
            throw new Error(`the authentik stand-in has no user ${username}`);
        }

        this.#store.users.splice(this.#store.users.indexOf(user), 1);
        for (const group of this.#store.groups) {
            group.users = group.users.filter((pk) => pk !== user.pk);
        }
    }

    /** An API token of the user, for tests of a token without admin rights; answers its key. */
    addToken(options: { username: string; identifier?: string; intent?: 'api' }): string {
        const user = findUserByName(this.#store, options.username);
        if (!user) {
            throw new Error(`the authentik stand-in has no user ${options.username}`);
        }

        const identifier = options.identifier ?? `${options.username}-token-${generateId(6)}`;
        return createToken(this.#store, { identifier, user, intent: options.intent ?? 'api', expiring: !isSuperuser(this.#store, user) })
            .key;
    }

    /** The user as a test describes it, or undefined. */
    user(username: string): StandInUser | undefined {
        const found = findUserByName(this.#store, username);
        return found && describeUser(this.#store, found);
    }

    /** What the stand-in holds, as the API shows it (fresh copies: changing them changes nothing). */
    get state(): StandInState {
        const store = this.#store;
        return {
            providers: store.providers.map((provider) => showAnyProvider(store, provider)),
            applications: store.applications.map((application) => showApplication(store, application)),
            bindings: store.bindings.map((binding) => showBinding(store, binding)),
            outposts: store.outposts.map((outpost) => showOutpost(store, outpost)),
            tokens: store.tokens.map((token) => showToken(store, token)),
            groups: store.groups.map((group) => showGroup(store, group, { include_users: true })),
            users: store.users.map((user) => showUser(store, user)),
            flows: store.flows.map(showFlow),
            keypairs: store.keypairs.map(showKeypair),
            scopeMappings: store.scopeMappings.map(showScopeMapping),
            samlMappings: store.samlMappings.map(showSamlMapping),
        };
    }

    async close(): Promise<void> {
        this.#server.closeAllConnections();
        await new Promise((resolve) => this.#server.close(resolve));
    }
}

export async function startAuthentikStandIn(options: StandInOptions = {}): Promise<AuthentikStandIn> {
    const server = Http.createServer();
    await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port ?? 0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    return new AuthentikStandIn(server, `http://127.0.0.1:${port}`, options.version ?? DEFAULT_VERSION);
}
