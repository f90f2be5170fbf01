/**
 * The nginx site model: one app's reverse-proxy site. Its shape is the sign-in methods' contract too (a method's
 * `site` changes it), so it is declared with them, in plugins/sso/method-types.ts.
 */
import { DEFAULT_IDP_KIND, forwardAuthKinds } from '../../../idp/forward-auth.ts';

export type { ForwardAuthSpec, LocationSpec, SiteSpec } from '../../../sso/method-types.ts';
export { SERVICE_PATH_PREFIX } from '../../../sso/method-types.ts';
export { forwardAuthContract } from '../../../idp/forward-auth.ts';

export const DEFAULT_ACME_ROOT = '/var/www/acme';
export const DEFAULT_CERTIFICATE_DIR = '/etc/letsencrypt/live';
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

/** The kind as the model keeps it: left out for the default kind, so that sites written before kinds read the same. */
export function modelKind(kind: string | undefined): { kind?: string } {
    return kind && kind !== DEFAULT_IDP_KIND ? { kind } : {};
}
