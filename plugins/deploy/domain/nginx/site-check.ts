/** Checks a site model: unsafe or malformed values are errors; risky or odd choices are warnings and information. */
import Net from 'node:net';

import { ValidationError } from '../../../../lib/errors.ts';
import type { Finding } from '../findings/finding.ts';
import { directiveAccess, hostAccessFindings, type SitePlaces } from './site-access.ts';
import {
    checkExtra,
    checkFilePath,
    checkHeaderName,
    checkHeaderValue,
    checkLocationPath,
    checkOutpostUrl,
    checkPort,
    checkProxyPass,
    checkServerName,
    checkSignInPath,
    checkSize,
    FindingList,
} from './site-values.ts';
import { forwardAuthOf } from '../../../idp/forward-auth.ts';
import { ACME_PATH, DEFAULT_ACME_ROOT, outpostPaths, type SiteSpec } from './site-types.ts';
import { ConfSyntaxError, readConf } from './syntax.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkHeaders(findings: FindingList, path: string, headers: unknown): void {
    if (headers === undefined) {
        return;
    }

    if (!isRecord(headers)) {
        findings.add(path, 'error', 'must be an object of header names to values');
        return;
    }

    for (const [name, value] of Object.entries(headers)) {
        if (findings.check(`${path}`, name, checkHeaderName)) {
            findings.check(`${path}.${name}`, value, checkHeaderValue);
        }
    }
}

function checkServerNames(findings: FindingList, names: unknown): void {
    if (!Array.isArray(names) || names.length === 0) {
        findings.add('serverNames', 'error', 'must be a non-empty list of DNS names');
        return;
    }

    names.forEach((name, index) => findings.check(`serverNames[${index}]`, name, checkServerName));
    if (new Set(names).size !== names.length) {
        findings.add('serverNames', 'warning', 'lists a name twice');
    }
}

function checkListeners(findings: FindingList, spec: Record<string, unknown>): void {
    if (spec.listenAddress !== undefined && (typeof spec.listenAddress !== 'string' || Net.isIP(spec.listenAddress) === 0)) {
        findings.add('listenAddress', 'error', 'must be an IPv4 or IPv6 address');
    }

    const http = spec.http;
    if (!isRecord(http)) {
        findings.add('http', 'error', 'must be an object with a port');
    } else {
        findings.check('http.port', http.port, checkPort);
    }

    const https = spec.https;
    if (https === undefined || https === null) {
        findings.add('https', 'warning', 'the site is served over plain HTTP only; add a certificate');
        return;
    }

    if (!isRecord(https)) {
        findings.add('https', 'error', 'must be an object with port, certificate and certificateKey');
        return;
    }

    findings.check('https.port', https.port, checkPort);
    findings.check('https.certificate', https.certificate, checkFilePath);
    findings.check('https.certificateKey', https.certificateKey, checkFilePath);
    if (isRecord(http) && http.port === https.port) {
        findings.add('https.port', 'error', 'must differ from http.port');
    }
}

function checkLocation(findings: FindingList, path: string, location: unknown): void {
    if (!isRecord(location)) {
        findings.add(path, 'error', 'must be an object with path and proxyPass');
        return;
    }

    findings.check(`${path}.path`, location.path, checkLocationPath);
    findings.check(`${path}.proxyPass`, location.proxyPass, checkProxyPass);
    for (const flag of ['exact', 'websocket', 'auth'] as const) {
        if (location[flag] !== undefined && typeof location[flag] !== 'boolean') {
            findings.add(`${path}.${flag}`, 'error', 'must be true or false');
        }
    }

    checkHeaders(findings, `${path}.headers`, location.headers);
    const reserved = [ACME_PATH, ...outpostPaths()].find((prefix) => typeof location.path === 'string' && location.path.startsWith(prefix));
    if (reserved) {
        findings.add(`${path}.path`, 'error', `${reserved} is served by the site itself`);
    }
}

function checkLocations(findings: FindingList, spec: Record<string, unknown>): void {
    const locations = spec.locations;
    if (!Array.isArray(locations)) {
        findings.add('locations', 'error', 'must be a list of locations');
        return;
    }

    locations.forEach((location, index) => checkLocation(findings, `locations[${index}]`, location));
    const paths = locations.map((location) => (isRecord(location) ? location.path : undefined));
    // nginx takes `location = /x` and `location /x` side by side, but not either twice.
    const matches = locations.map(
        (location, index) => `${isRecord(location) && location.exact === true ? '= ' : ''}${String(paths[index])}`,
    );
    matches.forEach((match, index) => {
        if (matches.indexOf(match) !== index) {
            findings.add(`locations[${index}].path`, 'error', `duplicate location ${match}`);
        }
    });
    if (locations.length === 0) {
        findings.add('locations', 'warning', 'no location proxies to the app');
    } else if (!paths.includes('/')) {
        findings.add('locations', 'info', 'no location / : other paths answer 404');
    }
}

function checkForwardAuth(findings: FindingList, spec: Record<string, unknown>): void {
    const forwardAuth = spec.forwardAuth;
    const locations = Array.isArray(spec.locations) ? spec.locations : [];
    const guarded = locations.some((location) => isRecord(location) && location.auth === true);
    if (forwardAuth === undefined || forwardAuth === null) {
        if (guarded) {
            findings.add('forwardAuth', 'error', 'a location asks for forward auth, but no outpost is set');
        }

        return;
    }

    if (!isRecord(forwardAuth)) {
        findings.add('forwardAuth', 'error', 'must be an object with outpostUrl, or null');
        return;
    }

    if (forwardAuth.kind !== undefined && (typeof forwardAuth.kind !== 'string' || !forwardAuthOf(forwardAuth.kind))) {
        findings.add('forwardAuth.kind', 'error', 'must name an identity-provider kind there is (plugins/idp/providers/<kind>.ts)');
        return;
    }

    if (findings.check('forwardAuth.outpostUrl', forwardAuth.outpostUrl, checkOutpostUrl)) {
        const host = new URL(forwardAuth.outpostUrl as string).hostname;
        if (!/^[0-9.]+$|^\[/.test(host)) {
            findings.add('forwardAuth.outpostUrl', 'info', `nginx looks ${host} up when it loads the site: it must resolve on this host`);
        }
    }

    if (forwardAuth.signInPath !== undefined) {
        findings.check('forwardAuth.signInPath', forwardAuth.signInPath, checkSignInPath);
    }

    checkForwardedHeaders(findings, forwardAuth.headers);
    if (!guarded) {
        findings.add('forwardAuth', 'warning', 'forward auth is set up but no location uses it (auth: true)');
    }
}

function checkForwardedHeaders(findings: FindingList, headers: unknown): void {
    if (headers === undefined) {
        return;
    }

    if (!Array.isArray(headers)) {
        findings.add('forwardAuth.headers', 'error', 'must be a list of header names');
        return;
    }

    headers.forEach((name, index) => findings.check(`forwardAuth.headers[${index}]`, name, checkHeaderName));
}

/** What the hand-written directives would make nginx read, write or run: refusals are errors, the rest risks. */
function checkExtraAccess(findings: FindingList, extra: string, places: SitePlaces | undefined): void {
    let directives;
    try {
        directives = readConf(extra).directives;
    } catch (error) {
        if (error instanceof ConfSyntaxError) {
            return;
        }

        throw error;
    }

    for (const { level, line, message } of hostAccessFindings(directives, places)) {
        findings.add('extra', level, `line ${line}: ${message}`);
    }
}

/** The model's own paths against the places: certificates nginx reads as root, the ACME root it serves. */
function checkModelPaths(findings: FindingList, spec: Record<string, unknown>, places: SitePlaces): void {
    const https = isRecord(spec.https) ? spec.https : {};
    const paths: Array<[string, string, unknown]> = [
        ['https.certificate', 'ssl_certificate', https.certificate],
        ['https.certificateKey', 'ssl_certificate_key', https.certificateKey],
        ['acmeChallengeRoot', 'root', spec.acmeChallengeRoot ?? DEFAULT_ACME_ROOT],
    ];
    for (const [path, directive, value] of paths) {
        const problem =
            typeof value === 'string' && checkFilePath(value) === undefined ? directiveAccess(directive, [value], places) : undefined;
        if (problem) {
            findings.add(path, problem.level, problem.message);
        }
    }
}

function checkOptionalValues(findings: FindingList, spec: Record<string, unknown>, places: SitePlaces | undefined): void {
    if (spec.clientMaxBodySize !== undefined) {
        findings.check('clientMaxBodySize', spec.clientMaxBodySize, checkSize);
    }

    if (spec.acmeChallengeRoot !== undefined) {
        findings.check('acmeChallengeRoot', spec.acmeChallengeRoot, checkFilePath);
    }

    if (spec.extra !== undefined && findings.check('extra', spec.extra, checkExtra)) {
        checkExtraAccess(findings, spec.extra as string, places);
    }

    checkHeaders(findings, 'headers', spec.headers);
    const headers = isRecord(spec.headers) ? Object.keys(spec.headers).map((name) => name.toLowerCase()) : [];
    if (isRecord(spec.https) && !headers.includes('strict-transport-security')) {
        findings.add('headers', 'info', 'no Strict-Transport-Security header: browsers may still try plain HTTP first');
    }
}

/**
 * Every finding about a site model, errors first. With the places of the site (site-access.ts), the
 * certificate paths and the ACME root are checked against them too; the extra directives always are.
 */
export function checkSite(spec: SiteSpec, places?: SitePlaces): Finding[] {
    const findings = new FindingList();
    if (!isRecord(spec)) {
        return [{ path: '', level: 'error', message: 'the site must be an object' }];
    }

    checkServerNames(findings, spec.serverNames);
    checkListeners(findings, spec);
    checkLocations(findings, spec);
    checkForwardAuth(findings, spec);
    checkOptionalValues(findings, spec, places);
    if (places) {
        checkModelPaths(findings, spec, places);
    }

    const order = { error: 0, risk: 1, warning: 2, info: 3 };
    return findings.items.sort((a, b) => order[a.level] - order[b.level]);
}

/** Refuses a model that cannot be rendered safely, naming the first field at fault. */
export function assertRenderable(spec: SiteSpec): void {
    const error = checkSite(spec).find((finding) => finding.level === 'error');
    if (error) {
        throw new ValidationError(error.path ? `${error.path}: ${error.message}` : error.message);
    }
}
