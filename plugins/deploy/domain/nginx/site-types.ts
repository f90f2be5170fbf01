/** The nginx site model: one app's reverse-proxy site. */
import { ValidationError } from '../../../../lib/errors.ts';
import { DEFAULT_IDP_KIND, forwardAuthKinds, forwardAuthOf } from '../../../idp/forward-auth.ts';
import type { ForwardAuthContract } from '../../../idp/idp-types.ts';

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
/** Paths on an app's domain that Gatehouse serves itself (`/__svc/autologin`): not the app, so never probed as it. */
export const SERVICE_PATH_PREFIX = '/__svc/';
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
 * Request headers an app may take as the visitor's identity: the usual names, and each loaded identity-provider
 * kind's own (forward-auth contract's `clear`). A visitor could send them, so every location that proxies clears them
 * toward its upstream, unless forward auth's answer (or the location's own headers) sets them.
 */
export function identityHeaders(): string[] {
    return [
        'Remote-User',
        'Remote-Email',
        'Remote-Name',
        'Remote-Groups',
        'X-idp-username',
        'X-idp-email',
        'X-idp-name',
        'X-idp-groups',
        ...new Set(forwardAuthKinds().flatMap(({ contract }) => contract.clear)),
        ...COMMON_IDENTITY_HEADERS,
    ];
}

/** The paths on an app's domain the loaded kinds' outposts take: no location of the app may. */
export function outpostPaths(): string[] {
    return forwardAuthKinds().map(({ contract }) => contract.outpostPath);
}

/** The forward-auth contract of the site's kind; a kind this process has not loaded is a ValidationError. */
export function forwardAuthContract(forwardAuth: Pick<ForwardAuthSpec, 'kind'>): ForwardAuthContract {
    const contract = forwardAuthOf(forwardAuth.kind ?? DEFAULT_IDP_KIND);
    if (!contract) {
        throw new ValidationError(`forwardAuth.kind: there is no identity-provider kind ${forwardAuth.kind}`);
    }

    return contract;
}

/** The kind as the model keeps it: left out for the default kind, so that sites written before kinds read the same. */
export function modelKind(kind: string | undefined): { kind?: string } {
    return kind && kind !== DEFAULT_IDP_KIND ? { kind } : {};
}
