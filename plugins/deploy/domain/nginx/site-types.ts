/** The nginx site model: one app's reverse-proxy site. */

export interface ForwardAuthSpec {
    /** The authentik outpost (or the authentik server with its embedded outpost): `http://127.0.0.1:9000`. */
    outpostUrl: string;
    /** Where an unauthenticated visitor is sent; default `/outpost.goauthentik.io/start`. */
    signInPath?: string;
    /** Outpost response headers passed on to the app; default the X-authentik-* identity headers. */
    headers?: string[];
    /** Request headers to the app carrying an outpost answer under another name: `{'Remote-User': 'X-authentik-username'}`. */
    identityHeaders?: Record<string, string>;
}

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

export const DEFAULT_ACME_ROOT = '/var/www/acme';
export const DEFAULT_CERTIFICATE_DIR = '/etc/letsencrypt/live';
export const DEFAULT_SIGN_IN_PATH = '/outpost.goauthentik.io/start';
export const DEFAULT_FORWARDED_HEADERS = [
    'X-authentik-username',
    'X-authentik-groups',
    'X-authentik-entitlements',
    'X-authentik-email',
    'X-authentik-name',
    'X-authentik-uid',
];
export const OUTPOST_PATH = '/outpost.goauthentik.io';
/** Paths on an app's domain that Gatehouse serves itself (`/__svc/autologin`): not the app, so never probed as it. */
export const SERVICE_PATH_PREFIX = '/__svc/';
export const SIGN_IN_LOCATION = '@goauthentik_proxy_signin';
export const ACME_PATH = '/.well-known/acme-challenge/';

/**
 * Names that apps, and the proxies in front of them, commonly take a visitor's identity from: oauth2-proxy's,
 * Grafana's and Gitea's (X-WEBAUTH-*), Apache's REMOTE_USER as a header.
 */
const COMMON_IDENTITY_HEADERS = [
    'X-Forwarded-User',
    'X-Forwarded-Email',
    'X-Forwarded-Preferred-Username',
    'X-Forwarded-Groups',
    'X-Forwarded-Access-Token',
    'X-Auth-Request-User',
    'X-Auth-Request-Email',
    'X-Auth-Request-Preferred-Username',
    'X-Auth-Request-Groups',
    'X-Auth-Request-Access-Token',
    'X-Remote-User',
    'X-Remote-Email',
    'X-Remote-Name',
    'X-Remote-Groups',
    'X-WEBAUTH-USER',
    'X-WEBAUTH-EMAIL',
    'X-WEBAUTH-NAME',
];

/**
 * Request headers an app may take as the visitor's identity. A visitor could send them, so every location that
 * proxies clears them toward its upstream, unless forward auth's answer (or the location's own headers) sets them.
 */
export const IDENTITY_HEADERS = [
    'Remote-User',
    'Remote-Email',
    'Remote-Name',
    'Remote-Groups',
    'X-idp-username',
    'X-idp-email',
    'X-idp-name',
    'X-idp-groups',
    ...DEFAULT_FORWARDED_HEADERS,
    'X-authentik-jwt',
    ...['jwks', 'outpost', 'provider', 'app', 'version'].map((name) => `X-authentik-meta-${name}`),
    ...COMMON_IDENTITY_HEADERS,
];
