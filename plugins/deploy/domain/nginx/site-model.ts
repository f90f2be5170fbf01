/**
 * The nginx site model of an app: typed, rendered to text, read back from text (hand edits kept as
 * written), checked, and tested with the real `nginx -t` in an isolated prefix.
 */
import Path from 'node:path';

import { ValidationError } from '../../../../lib/errors.ts';
import type { Finding } from '../findings/finding.ts';
import { assertHostAccess, type SitePlaces } from './site-access.ts';
import { checkSite } from './site-check.ts';
import { checkProxyPass } from './site-values.ts';
import { parseSite, readSite } from './site-parse.ts';
import { normalizeSite, renderSite } from './site-render.ts';
import { DEFAULT_ACME_ROOT, DEFAULT_CERTIFICATE_DIR, modelKind, SERVICE_PATH_PREFIX, type SiteSpec } from './site-types.ts';
import { type ConfFile, ConfSyntaxError, ConfTooDeepError, readConf } from './syntax.ts';

export { checkSite } from './site-check.ts';
export { parseSite, readSite } from './site-parse.ts';
export { normalizeSite, renderSite } from './site-render.ts';
export type { ForwardAuthSpec, LocationSpec, SiteSpec } from './site-types.ts';
export { type SitePlaces, sitePlaces } from './site-access.ts';
export { NginxBusyError, NginxUnavailableError, type SiteTextValidation, validateSiteText } from './nginx-test.ts';

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

/** The text's directives, or undefined for a syntax error (left to nginx -t's check); too deep a nesting is refused. */
function readOrLeave(text: string): ConfFile | undefined {
    try {
        return readConf(text);
    } catch (error) {
        if (error instanceof ConfTooDeepError) {
            throw new ValidationError(`text: ${error.message}`);
        }

        if (error instanceof ConfSyntaxError) {
            return undefined;
        }

        throw error;
    }
}

/** The model's findings on what could be read of the text, as warnings: for text, nginx is the judge. */
function modelFindings(text: string, places: SitePlaces | undefined): Finding[] {
    try {
        // The whole text's host access is checked apart, with its lines: not again through `extra`.
        const { extra: _extra, ...spec } = parseSite(text, places).spec;
        return checkSite(spec).map((finding) => ({ ...finding, level: finding.level === 'error' ? 'warning' : finding.level }));
    } catch (error) {
        if (error instanceof ValidationError) {
            return [];
        }

        throw error;
    }
}

/**
 * Lint for site text: what it would make nginx's workers reach on the host (risks, with their lines) and
 * the model's findings. What site-access.ts refuses, and too deep a nesting, is a ValidationError; a
 * syntax error gives no findings here (validateSiteText names its line).
 */
export function checkSiteText(text: string, places?: SitePlaces): Finding[] {
    const tree = readOrLeave(text);
    if (!tree) {
        return [];
    }

    const risks = assertHostAccess(tree.directives, places).map(({ level, line, message }) => ({
        path: 'text',
        level,
        message: `line ${line}: ${message}`,
    }));
    return [...risks, ...modelFindings(text, places)];
}

/**
 * The site with the identity provider's forward-auth check in front of every location it models: the kind's outpost
 * locations, the sign-in redirect and the auth check; `then` adds what the app's sign-in method needs. Hand-written
 * locations kept as extra text are not changed; they are named, so the run can warn that they stay open.
 */
export function protectSite(
    text: string,
    provider: { kind: string; outpostUrl: string },
    places?: SitePlaces,
    then: (spec: SiteSpec) => SiteSpec = (spec) => spec,
): { text: string; unprotected: string[] } {
    const { spec } = parseSite(text, places);
    const kind = modelKind(provider.kind);
    // What the site had for the same kind is kept (a sign-in page, headers chosen by hand); another kind's is not.
    const kept = spec.forwardAuth && modelKind(spec.forwardAuth.kind).kind === kind.kind ? spec.forwardAuth : {};
    const protectedSpec: SiteSpec = {
        ...spec,
        forwardAuth: { ...kept, ...kind, outpostUrl: provider.outpostUrl.replace(/\/+$/, '') },
        locations: spec.locations.map((location) => ({ ...location, auth: true })),
    };
    const unprotected = [...(spec.extra ?? '').matchAll(/^\s*location\s+([^{\s]+[^{]*?)\s*\{/gm)].map((match) => match[1] ?? '');
    return { text: renderSite(then(protectedSpec)), unprotected };
}

export function siteHasTls(site: string): boolean {
    return /\blisten\s+[^;]*\bssl\b/.test(site);
}

/** The upstreams the site's modelled locations proxy to, each once; Gatehouse's own service paths are not the app's. */
export function siteUpstreams(site: string): string[] {
    const locations = readSite(site).spec.locations.filter((location) => !location.path.startsWith(SERVICE_PATH_PREFIX));
    return [...new Set(locations.map((location) => location.proxyPass))];
}

/**
 * The upstreams Gatehouse may ask directly for the app (its checks behind forward auth): the site's loopback ones
 * only, as the model allows them. A hand-written site may proxy elsewhere; nginx does that for visitors, but
 * Gatehouse itself never sends a request to a host the site's text names. None for a text that cannot be read.
 */
export function loopbackUpstreams(site: string | undefined): string[] {
    if (site === undefined) {
        return [];
    }

    try {
        return siteUpstreams(site).filter((upstream) => checkProxyPass(upstream) === undefined);
    } catch {
        return [];
    }
}
