/**
 * The nginx site model of an app: typed, rendered to text, read back from text (hand edits kept as
 * written), checked, and tested with the real `nginx -t` in an isolated prefix.
 */
import Path from 'node:path';

import { normalizeSite } from './site-render.ts';
import { DEFAULT_ACME_ROOT, DEFAULT_CERTIFICATE_DIR, type SiteSpec } from './site-types.ts';

export { checkSite } from './site-check.ts';
export { parseSite } from './site-parse.ts';
export { normalizeSite, renderSite } from './site-render.ts';
export type { Finding } from './site-values.ts';
export type { ForwardAuthSpec, LocationSpec, SiteSpec } from './site-types.ts';
export { NginxUnavailableError, type SiteTextValidation, validateSiteText } from './nginx-test.ts';

export interface DefaultSiteOptions {
    domain: string;
    upstreamPort: number;
    /** Where certbot keeps certificates; the site uses `<dir>/<domain>/fullchain.pem` and `privkey.pem`. */
    certificateDir?: string;
    forwardAuth?: SiteSpec['forwardAuth'];
    /** The ports nginx serves sites on (80 and 443 unless it runs on unprivileged ports). */
    httpPort?: number;
    httpsPort?: number;
    listenAddress?: string;
    acmeChallengeRoot?: string;
}

/** An app's usual site: HTTP for ACME and the redirect, HTTPS proxying everything to the app on loopback. */
export function defaultSite({
    domain,
    upstreamPort,
    certificateDir = DEFAULT_CERTIFICATE_DIR,
    forwardAuth = null,
    httpPort = 80,
    httpsPort = 443,
    acmeChallengeRoot = DEFAULT_ACME_ROOT,
    listenAddress,
}: DefaultSiteOptions): SiteSpec {
    const live = Path.posix.join(certificateDir, domain);
    return normalizeSite({
        serverNames: [domain],
        ...(listenAddress ? { listenAddress } : {}),
        http: { port: httpPort },
        https: { port: httpsPort, certificate: `${live}/fullchain.pem`, certificateKey: `${live}/privkey.pem` },
        locations: [{ path: '/', proxyPass: `http://127.0.0.1:${upstreamPort}`, websocket: true, ...(forwardAuth ? { auth: true } : {}) }],
        clientMaxBodySize: '100m',
        headers: { 'Strict-Transport-Security': 'max-age=31536000' },
        acmeChallengeRoot,
        forwardAuth,
    });
}
