/**
 * Does the app's nginx site reach what the compose file publishes? A deploy publishes ports on loopback only
 * (compose-plan.ts: 127.0.0.1, or ::1 when the file says so), and the site proxies to `http://127.0.0.1:<host port>`;
 * when no service publishes the port a location proxies to, nginx answers 502 there, and the deploy, which checks
 * `/` through nginx, fails and is rolled back.
 */
import type { Finding } from '../findings/finding.ts';
import { describePort, type PortDescription, publishedPorts } from './compose-entries.ts';
import { formatPath } from './compose-path.ts';
import type { ComposePort, ComposeSpec } from './compose-types.ts';

/** A location of the app's nginx site, as the site model has it. */
export interface SiteLocation {
    path: string;
    proxyPass: string;
}

type Family = 'ipv4' | 'ipv6';

const LOOPBACK: Record<Family, string> = { ipv4: '127.0.0.1', ipv6: '[::1]' };

/** Where a location proxies to on loopback; a name, a variable or another address is not judged. */
interface Upstream {
    location: string;
    families: Family[];
    port: number;
    address: string;
}

/** A port entry of a service, as the deploy binds it. */
interface Publication {
    service: string;
    path: string;
    family: Family;
    /** The host ports; empty when Docker picks one (only the container port is given). */
    ports: number[];
    target: string;
    shown: string;
}

/** The container port a service only exposes to the other containers. */
interface Exposure {
    service: string;
    path: string;
    target: string;
}

const MAX_PORT = 65_535;

function upstreamOf(location: SiteLocation): Upstream | undefined {
    let url: URL;
    try {
        url = new URL(location.proxyPass);
    } catch {
        return undefined;
    }

    const families: Record<string, Family[]> = { '127.0.0.1': ['ipv4'], '[::1]': ['ipv6'], localhost: ['ipv4', 'ipv6'] };
    const hostFamilies = families[url.hostname];
    if (!hostFamilies || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        return undefined;
    }

    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    return { location: location.path, families: hostFamilies, port, address: `${url.hostname}:${port}` };
}

/**
 * A host port that cannot be known: a `${VAR}` without a value, or no port at all (the variable check and the
 * schema report them). Without a variable, a port without a host port is one Docker picks.
 */
function isUnknown(port: ComposePort, description: PortDescription): boolean {
    const written = typeof port === 'object' ? String(port.published ?? '') : String(port);
    const unresolved = written.includes('$') && description.published === undefined;
    return unresolved || (description.published !== undefined && publishedPorts(description, MAX_PORT).length === 0);
}

/** The TCP ports the services publish, or undefined when what they publish cannot be known. */
function publicationsOf(spec: ComposeSpec, values: Record<string, string>): Publication[] | undefined {
    const publications: Publication[] = [];
    for (const [service, definition] of Object.entries(spec.services)) {
        for (const [index, port] of (definition.ports ?? []).entries()) {
            const description = describePort(port, values);
            if (isUnknown(port, description)) {
                return undefined;
            }

            if (description.protocol !== 'tcp') {
                continue;
            }

            const family: Family = description.hostIp === '::1' ? 'ipv6' : 'ipv4';
            const ports = publishedPorts(description, MAX_PORT);
            publications.push({
                service,
                path: formatPath(['services', service, 'ports', index]),
                family,
                ports,
                target: description.target,
                shown:
                    ports.length === 0
                        ? `container port ${description.target} on a port Docker picks`
                        : `${LOOPBACK[family]}:${description.published}`,
            });
        }
    }

    return publications;
}

function exposuresOf(spec: ComposeSpec): Exposure[] {
    return Object.entries(spec.services).flatMap(([service, definition]) =>
        (definition.expose ?? [])
            .map((port, index) => ({ service, path: formatPath(['services', service, 'expose', index]), target: String(port) }))
            .filter((exposure) => !exposure.target.includes('/') || exposure.target.endsWith('/tcp')),
    );
}

function serves(publication: Publication, upstream: Upstream): boolean {
    return upstream.families.includes(publication.family) && publication.ports.includes(upstream.port);
}

/**
 * A finding for each location of the site that proxies to a loopback port no service publishes. It points at the
 * port the file publishes instead (or the port a service only exposes): an error for `/`, which the deploy checks
 * through nginx, a warning for other locations. When the file publishes and exposes nothing, it is a warning:
 * something outside the app may answer there.
 */
export function sitePortFindings(spec: ComposeSpec, locations: SiteLocation[], values: Record<string, string>): Finding[] {
    const publications = publicationsOf(spec, values);
    const hostNetwork = Object.values(spec.services).some((service) => service.network_mode === 'host');
    if (publications === undefined || hostNetwork) {
        return [];
    }

    const upstreams = locations.map(upstreamOf).filter((upstream) => upstream !== undefined);
    const unproxied = publications.filter((publication) => !upstreams.some((upstream) => serves(publication, upstream)));
    return upstreams
        .filter((upstream) => !publications.some((publication) => serves(publication, upstream)))
        .map((upstream) => unservedFinding(upstream, unproxied[0], exposuresOf(spec)[0]));
}

function unservedFinding(upstream: Upstream, instead: Publication | undefined, exposed: Exposure | undefined): Finding {
    const address = LOOPBACK[upstream.families[0] ?? 'ipv4'];
    const proxied = `the app's nginx site proxies ${upstream.location} to ${upstream.address}, which no service publishes`;
    const outcome =
        upstream.location === '/'
            ? 'the deploy would fail when nginx answers 502 Bad Gateway'
            : `requests under ${upstream.location} would get 502 Bad Gateway`;
    const other = instead ?? exposed;
    if (other === undefined) {
        return {
            path: 'services',
            level: 'warning',
            message: `${proxied}: unless something outside the app answers there, ${outcome}`,
            fix: `publish the web service's port on it: ports: ["${address}:${upstream.port}:<container port>"]`,
        };
    }

    const what = instead ? `publishes ${instead.shown}` : `only exposes ${other.target} to the other containers`;
    const repoint =
        instead && instead.ports.length > 0
            ? `, or point the site's location ${upstream.location} at http://${LOOPBACK[instead.family]}:${instead.ports[0]}`
            : '';
    return {
        path: other.path,
        level: upstream.location === '/' ? 'error' : 'warning',
        message: `${proxied} (${other.service} ${what}): ${outcome}`,
        service: other.service,
        field: instead ? 'ports' : 'expose',
        fix: `publish "${address}:${upstream.port}:${other.target}"${repoint}`,
    };
}
