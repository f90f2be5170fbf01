/**
 * How a visitor is known inside an app: the sign-in methods (the draft's `account`). A method is a file in
 * `plugins/sso/methods/` whose default export is a `SignInMethod`; the file's name is the method's name. A method imports
 * this module and nothing of the deploy manager: the site it changes is described here, and what its check may use
 * (reading the site, asking the app over HTTP) comes in its context, filled by the run.
 */
import type { HostConfig } from '../../lib/config.ts';
import type {
    IdentityProvider,
    OidcClient,
    OidcClientChanges,
    OidcEndpoints,
    SamlApp,
    SamlChanges,
    SamlEndpoints,
} from '../idp/idp-types.ts';

/** The nginx site of one app, as the deploy manager models it (its nginx/site-model.ts) and a method's `site` changes it. */
export interface SiteSpec {
    serverNames: string[];
    /** The one address nginx listens on for this site; unset: every IPv4 and IPv6 address. */
    listenAddress?: string;
    http: { port: number };
    https?: { port: number; certificate: string; certificateKey: string };
    locations: LocationSpec[];
    clientMaxBodySize?: string;
    /** Response headers (`add_header ... always`), repeated in every location that adds its own. */
    headers?: Record<string, string>;
    acmeChallengeRoot?: string;
    forwardAuth?: ForwardAuthSpec | null;
    /** Hand-written directives for the proxying server block, kept verbatim. */
    extra?: string;
}

export interface ForwardAuthSpec {
    /** The identity-provider kind whose outpost answers (plugins/idp/providers/<kind>.ts); unset: the default kind, authentik. */
    kind?: string;
    /** The provider's outpost (or the provider itself with its embedded outpost): `http://127.0.0.1:9000`. */
    outpostUrl: string;
    /** Where an unauthenticated visitor is sent; default the kind's sign-in page (`/outpost.goauthentik.io/start`). */
    signInPath?: string;
    /** Outpost response headers passed on to the app; default the kind's identity headers (X-authentik-*). */
    headers?: string[];
    /** Request headers to the app carrying an outpost answer under another name: `{'Remote-User': 'X-authentik-username'}`. */
    identityHeaders?: Record<string, string>;
}

export interface LocationSpec {
    /** A prefix location: `/`, `/api/`; with `exact`, that one path alone. */
    path: string;
    /** An exact-match location (`location = /saml/acs`): the path alone, nothing that merely starts with it. */
    exact?: boolean;
    /** http://127.0.0.1:<port> or http://[::1]:<port>, optionally with a path. */
    proxyPass: string;
    websocket?: boolean;
    /** Extra request headers to the app (`proxy_set_header`). */
    headers?: Record<string, string>;
    /** Forward auth applies to this location. */
    auth?: boolean;
}

/** Paths on an app's domain that Gatehouse serves itself (`/__svc/autologin`): not the app, so never probed as it. */
export const SERVICE_PATH_PREFIX = '/__svc/';

/** The variables of the app's secrets file that hold its OpenID client (`${OIDC_CLIENT_SECRET}` in its compose file). */
export const CLIENT_ID_VARIABLE = 'OIDC_CLIENT_ID';
export const CLIENT_SECRET_VARIABLE = 'OIDC_CLIENT_SECRET';

/** Segments of letters, digits and `. _ ~ -`, at least one, none `.` or `..`: also a valid proxy_pass path. */
const ACS_PATH = /^(\/[A-Za-z0-9._~-]{1,255}){1,32}\/?$/;

/**
 * What the `samlAcs` need may hold: a SAML assertion consumer path, which the site serves without forward auth, so
 * one path of the app, never `/` nor anything that needs decoding or normalising to tell where it leads. Answers
 * what is wrong, or undefined.
 */
export function checkAcsPath(value: unknown): string | undefined {
    return typeof value === 'string' && value.length <= 1024 && ACS_PATH.test(value) && !/\/\.{1,2}(\/|$)/.test(value)
        ? undefined
        : "must be the path of the app's assertion consumer service alone, such as /saml/acs: not /, and only letters, digits, . _ ~ - between slashes (no . or .. segments)";
}

export type MethodNeed = 'adminUser' | 'samlAcs' | 'sharedUser' | 'sharedPassword';

/** What a method works with: the app and the draft's fields it needs (the shared password opened, in runs only). */
export interface MethodSettings {
    app: string;
    domain: string;
    /** The app's URL as visitors reach it, with its port when not the default. */
    origin: string;
    /** Where nginx's requests reach the deployed app from (its network's gateway); unknown before a deploy. */
    gateway?: string;
    adminUser?: string;
    /** The admin account's e-mail at the identity provider, looked up when a run fills `{{ADMIN_EMAIL}}`. */
    adminEmail?: string;
    samlAcs?: string;
    /** The service provider's entity ID the assertions are for; the one its requests name when unset. */
    samlAudience?: string;
    sharedUser?: string;
    sharedPassword?: string;
    /** The connected identity provider's URL. */
    idpUrl?: string;
    /** The auto-login adapter and the app's login page (found by the adapter when not given). */
    login?: { adapter: string; path?: string };
    /**
     * Where nginx reaches Gatehouse's auto-login, the app's token for it (opened in runs only), and the folders of
     * auto-login adapters besides plugins/sso/autologin/adapters/ (AUTOLOGIN_ADAPTERS_DIRS).
     */
    autologin?: { gatehouseUrl: string; token?: string; adapterDirs?: string[] };
    /** The app's OpenID client, when the provider is connected; the secret only where it may be shown or used. */
    oidc?: { endpoints: OidcEndpoints; clientId: string; clientSecret?: string };
    /** The app's recipe, when it says how to set this method up in the app: what it changes and what it asks to do by hand. */
    recipe?: { id: string; title: string; env: Record<string, string>; remove: string[]; steps: string[]; redirect?: string };
    /** The app's SAML provider, when the provider is connected; its certificate when the caller asked for it. */
    saml?: { endpoints: SamlEndpoints; certificate?: string };
}

export interface MethodCheck {
    ok: boolean;
    text: string;
    fix: string | null;
}

/** One HTTP(S) GET a check sends to the app. */
export interface MethodHttpRequest {
    url: URL;
    /** Sent as Host (and as the TLS server name) instead of the URL's host, to reach a virtual host by address. */
    host?: string;
    timeoutMs?: number;
    headers?: Record<string, string>;
    /** Read at most this many bytes of the body. */
    readBody?: number;
}

/** What came back: the status (null when nothing did), a redirect's Location, the body when asked for, or the error. */
export interface MethodHttpAnswer {
    statusCode: number | null;
    location: string | null;
    body?: string;
    error: string | null;
}

/** What the run lends a method's check, as bell lends its providers `get`: the deploy manager's own helpers. */
export interface MethodCheckHelpers {
    /** The site's text read into the model (hand edits kept as extra); a text the model cannot read throws. */
    readSite(site: string): SiteSpec;
    /** The upstreams the site's modelled locations proxy to, each once; Gatehouse's own service paths are not the app's. */
    siteUpstreams(site: string): string[];
    /** One GET with a short deadline (3 s unless asked otherwise); never throws. */
    checkHttp(request: MethodHttpRequest): Promise<MethodHttpAnswer>;
}

/** What a method's check may use, inside the run's worker. */
export interface MethodCheckContext extends MethodCheckHelpers {
    settings: MethodSettings;
    host: HostConfig;
    https: boolean;
    /** The site as written. */
    site: string;
}

/** The identity provider's side of a run, for a method that makes objects there. */
export interface MethodProviderContext {
    provider: IdentityProvider;
    settings: MethodSettings;
    /** The app's title, its groups and the flows and key the connection chose. */
    access: { title: string; groups: string[]; authorizationFlow: string; invalidationFlow: string; signingKey: string | null };
    log(text: string, level?: 'info' | 'warning'): void;
}

/**
 * What a method makes at the provider. The run registers `undo` before it calls `apply`, and `undo` puts back what
 * `apply` changed, also when `apply` threw half-way; the run records `objectName` as the app's.
 */
export interface MethodProviderWork {
    objectName: string;
    /** `recorded` is awaited each time the work has learnt what it is about to change (as the adapter's ensure calls). */
    apply(recorded?: () => Promise<void>): Promise<void>;
    /** Puts the provider back as it was; answers what it did, in words. */
    undo(): Promise<string>;
    /** What the undo needs, kept current by apply: the run journals it, so that a killed run is put back from it. */
    journal?: MethodWorkJournal;
}

/** A sign-in method's objects at the identity provider, as the run's journal keeps them (never with a secret). */
export type MethodWorkJournal =
    { kind: 'oidc'; client: OidcClient; changes: OidcClientChanges } | { kind: 'saml'; app: SamlApp; changes: SamlChanges };

export interface SignInMethod {
    title: string;
    /** Whether the visitor is known inside the app through the identity provider (own login is not). */
    singleSignOn: boolean;
    /**
     * The last resort (auto-login's one shared account for everyone): offered among the first choices only when no
     * other single sign-on method is known for the app.
     */
    lastResort?: boolean;
    /** Draft fields the method cannot work without. */
    needs: MethodNeed[];
    /** The method works only with a recipe for it: the recipe holds the app's own setting (turning its login off). */
    needsRecipe?: boolean;
    /** The site as the run writes it, forward auth in place. The file is root's alone (0600), so credentials may go in. */
    site?(spec: SiteSpec, settings: MethodSettings): SiteSpec;
    /** Variables the method keeps in the app's secrets file, made when the app has none yet (a client's id and secret). */
    secrets?(existing: Record<string, string>): Record<string, string>;
    /** The making or updating of the method's objects at the identity provider, in the run, after forward auth's. */
    atProvider?(context: MethodProviderContext): MethodProviderWork;
    /** The objects `atProvider` makes, as the deploy's preview names them: their name for an app, and what they are. */
    providerObjects?: { name(app: string): string; detail: string };
    /** The values shown on the app (`identity.values`); a secret only when `settings` carries it opened. */
    values(settings: MethodSettings): Record<string, string>;
    /** Checking the sign-in for this method, after the forward-auth check. */
    check?(context: MethodCheckContext): Promise<MethodCheck>;
}
