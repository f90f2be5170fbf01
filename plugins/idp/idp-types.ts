/**
 * What the deploy manager needs from an identity provider, whichever one it is. An adapter is a file in
 * `plugins/idp/providers/` whose default export is an `IdentityProviderKind`; the file's name is its kind.
 */

/** Why talking to the provider failed, in words a person can act on. */
export type IdpFailure = 'unreachable' | 'not-a-provider' | 'refused' | 'not-admin' | 'rejected' | 'not-found';

export class IdpError extends Error {
    readonly reason: IdpFailure;

    constructor(reason: IdpFailure, message: string) {
        super(message);
        this.reason = reason;
    }
}

export interface IdpCredentials {
    url: string;
    token: string;
}

export interface NamedRef {
    pk: string;
    name: string;
}

export interface FlowRef {
    pk: string;
    slug: string;
    name: string;
}

export interface Discovery {
    version: string;
    outposts: Array<{ pk: string; name: string; type: string; managed: string | null }>;
    flows: { authorization: FlowRef[]; invalidation: FlowRef[] };
    signingKeys: NamedRef[];
}

export interface DirectoryUser {
    pk: number;
    username: string;
    name: string;
    email: string;
    active: boolean;
}

export interface DirectoryGroup {
    pk: string;
    name: string;
    isSuperuser: boolean;
    members: Array<Omit<DirectoryUser, 'active'>>;
}

/** The objects that put one app behind forward auth. */
export interface ForwardAuthApp {
    /** `dp-<app>`: the provider's name and the application's slug. */
    objectName: string;
    title: string;
    /** The app's URL as visitors reach it, with its port when not the default. */
    externalHost: string;
    launchUrl: string;
    authorizationFlow: string;
    invalidationFlow: string;
    outpost: string;
    /** Group pks; none means every signed-in user of the provider passes. */
    groups: string[];
}

/**
 * What ensureForwardAuthApp has changed so far. The caller makes it (noForwardAuthChanges) and keeps it; the adapter
 * fills it in the moment each change is made, so that the undo knows even when the call throws half-way.
 */
export interface ForwardAuthChanges {
    /** The provider's id once it was found or made; null while nothing was made or changed. */
    providerId: number | null;
    applicationSlug: string;
    providerCreated: boolean;
    applicationCreated: boolean;
    /** The group pks bound before, when the application existed. */
    previousGroups: string[] | null;
    /** The application's fields before an update, when it existed. */
    previousApplication?: PreviousApplication | null;
    /** The provider's fields before an update, when it existed. */
    previousProvider: { externalHost: string; authorizationFlow: string; invalidationFlow: string } | null;
    addedToOutpost: boolean;
}

export function noForwardAuthChanges(applicationSlug: string): ForwardAuthChanges {
    return {
        providerId: null,
        applicationSlug,
        providerCreated: false,
        applicationCreated: false,
        previousGroups: null,
        previousProvider: null,
        addedToOutpost: false,
    };
}

/** Where an app's OpenID Connect client finds its issuer: what the `{{OIDC_*}}` placeholders and the app's values show. */
export interface OidcEndpoints {
    issuer: string;
    configUrl: string;
    logoutUrl: string;
}

/** A confidential OAuth2/OpenID client for one app, with its application bound to the app's groups. */
export interface OidcClient {
    /** `dp-<app>-sso`: the provider's name and the application's slug. */
    objectName: string;
    title: string;
    launchUrl: string;
    clientId: string;
    clientSecret: string;
    /** A regular expression every redirect URI must match whole. */
    redirectPattern: string;
    authorizationFlow: string;
    invalidationFlow: string;
    /** The keypair that signs the tokens; the provider's default when null. */
    signingKey: string | null;
    groups: string[];
    /** A `svc_groups` claim: [admin] for this user, [user] for everyone else. */
    adminClaimFor?: string;
}

/** What making a provider and its application has changed so far: filled in as each change is made, as ForwardAuthChanges. */
export interface ProviderChanges {
    /** The provider's id once it was found or made; null while nothing was made or changed. */
    providerId: number | null;
    providerCreated: boolean;
    applicationCreated: boolean;
    /** The provider's fields before an update, in the client's request shape. */
    previousProvider: Record<string, unknown> | null;
    previousGroups: string[] | null;
    previousApplication?: PreviousApplication | null;
}

/** An application's own fields, as they were before a run updated them. */
export interface PreviousApplication {
    name: string;
    provider: number | null;
    metaLaunchUrl: string;
}

/** What ensureOidcClient has changed so far. */
export interface OidcClientChanges extends ProviderChanges {
    /** The claim mapping made for this client, removed on undo. */
    createdMapping: string | null;
    /** The claim mapping's fields before an update, when it existed. */
    previousMapping?: { pk: string; fields: { name: string; scopeName: string; expression: string } } | null;
}

export function noProviderChanges(): OidcClientChanges {
    return {
        providerId: null,
        providerCreated: false,
        applicationCreated: false,
        previousProvider: null,
        previousGroups: null,
        createdMapping: null,
    };
}

/** Where a SAML service provider finds the app's identity provider. */
export interface SamlEndpoints {
    entityId: string;
    ssoRedirectUrl: string;
    ssoPostUrl: string;
    sloRedirectUrl: string;
    metadataUrl: string;
}

/** A SAML provider for one app: signed assertions, the username as NameID, its application bound to the app's groups. */
export interface SamlApp {
    /** `dp-<app>-saml`: the provider's name and the application's slug. */
    objectName: string;
    title: string;
    launchUrl: string;
    /** Where the identity provider posts its answer: the app's assertion consumer service. */
    acsUrl: string;
    /** The service provider's entity ID the assertion is for; empty: the one the request names. */
    audience: string;
    authorizationFlow: string;
    invalidationFlow: string;
    signingKey: string | null;
    groups: string[];
}

/** What ensureSamlProvider has changed so far. */
export type SamlChanges = ProviderChanges;

/** Runs the work alone among everyone who serialises with the same key (an outpost's provider list). */
export type Serialise = <T>(key: string, work: () => Promise<T>) => Promise<T>;

export interface IdentityProvider {
    /** The provider's version; throws an IdpError unless the token is valid and has administrator rights. */
    checkAdmin(): Promise<{ version: string; username: string }>;
    discover(): Promise<Discovery>;
    /** A new non-expiring API token of the token's own user; answers its key. */
    createApiToken(identifier: string, description: string): Promise<string>;
    revokeToken(identifier: string): Promise<void>;
    groups(): Promise<DirectoryGroup[]>;
    users(query: string): Promise<DirectoryUser[]>;
    /**
     * The ensure calls make or update an app's objects and write each change into `changes` the moment it is made; the
     * matching undo puts back what `changes` holds, also after an ensure that threw half-way.
     */
    /** `recorded` (when given) is awaited each time `changes` has learnt something, before the change it announces is made. */
    ensureForwardAuthApp(
        app: ForwardAuthApp,
        serialise: Serialise,
        changes: ForwardAuthChanges,
        recorded?: () => Promise<void>,
    ): Promise<void>;
    undoForwardAuthApp(app: ForwardAuthApp, changes: ForwardAuthChanges): Promise<void>;
    /** Replaces the group bindings of the app's application; answers the group pks bound before. */
    replaceGroups(objectName: string, groups: string[]): Promise<string[]>;
    /** `recorded`, as for ensureForwardAuthApp. */
    ensureOidcClient(client: OidcClient, changes: OidcClientChanges, recorded?: () => Promise<void>): Promise<void>;
    undoOidcClient(client: OidcClient, changes: OidcClientChanges): Promise<void>;
    ensureSamlProvider(app: SamlApp, changes: SamlChanges, recorded?: () => Promise<void>): Promise<void>;
    undoSamlProvider(app: SamlApp, changes: SamlChanges): Promise<void>;
    /** The PEM certificate the SAML provider `objectName` signs with; null when it has none or does not exist. */
    samlCertificate(objectName: string): Promise<string | null>;
    /** Removes the application named `objectName` and the provider of that name, whatever its kind; answers what it removed. */
    removeApplication(objectName: string): Promise<string[]>;
}

/**
 * How nginx asks the provider's outpost whether a visitor may pass (forward auth), as the kind's outpost expects it.
 * The site renderer writes these blocks and reads them back; nothing else in the deploy manager knows them.
 */
export interface ForwardAuthContract {
    /** The outpost's path on each app's own domain, which nginx proxies to `<outpostUrl><outpostPath>`; no app location may take it. */
    outpostPath: string;
    /** The subrequest nginx's `auth_request` makes for each protected request: 2xx lets it through, 401 sends the visitor to sign in. */
    authPath: string;
    /** The named nginx location a 401 goes to: it sends the visitor to `signInPath`. */
    signInLocation: string;
    /** Where a visitor who is not signed in is sent (nginx adds `?rd=` and the URL asked for). */
    signInPath: string;
    /** The outpost's answer headers passed on to the app, as the answer names them. */
    headers: string[];
    /** The answer headers that carry the visitor's username, e-mail address and name (a method passes them under other names). */
    identity: { username: string; email: string; name: string };
    /** Headers of the provider's own an app may take as the visitor's identity: cleared from every visitor's request. */
    clear: string[];
    /** The nginx lines for a site whose outpost nginx reaches at `outpostUrl`, sending visitors to `signInPath`. */
    nginx(outpostUrl: string, signInPath: string): ForwardAuthNginx;
}

/**
 * The lines nginx gets, each one directive ending in `;` (or a `#` comment), without indentation. The site model
 * reads them back from the text: keep to what is said here, and keep values unquoted where it says so.
 */
export interface ForwardAuthNginx {
    /** At the proxying server's level, before the outpost's location: a comment, buffer sizes for the answer's headers. */
    server: string[];
    /** Inside `location <outpostPath>`, first `proxy_pass <outpostUrl><outpostPath>;`; the identity clears are written after them. */
    outpost: string[];
    /** Inside `location <signInLocation>`: among them `return 302 <signInPath>?rd=...;`. */
    signIn: string[];
    /**
     * Inside each protected location, before the answer's headers are passed on: `auth_request <authPath>;`,
     * `error_page 401 = <signInLocation>;`, and any other directive without quotes whose arguments do not depend
     * on the outpost URL.
     */
    check: string[];
}

export interface IdentityProviderKind {
    /** The kind's name as people read it: `authentik`. */
    title: string;
    /** How nginx puts an app behind this provider; see ForwardAuthContract. */
    forwardAuth(): ForwardAuthContract;
    connect(credentials: IdpCredentials, options?: { timeoutMs?: number }): IdentityProvider;
    /** The issuer, discovery and logout URLs of the OpenID client named `objectName`, without asking the provider. */
    oidcEndpoints(url: string, objectName: string): OidcEndpoints;
    /** The SAML URLs of the provider named `objectName`, without asking the provider. */
    samlEndpoints(url: string, objectName: string): SamlEndpoints;
    /** The defaults a bootstrap picks from a discovery. */
    defaults(discovery: Discovery): { outpost?: NamedRef; authorizationFlow?: FlowRef; invalidationFlow?: FlowRef; signingKey?: NamedRef };
}
