import Dns from 'node:dns';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';

import { LABEL } from '../host/compose-labels.ts';
import { dockerClient } from '../host/docker-client.ts';
import { appNameProblem } from './app-names.ts';
import { apps } from './app-service.ts';
import { withFallbackAfter } from '../../../../lib/timeout.ts';

export interface Check {
    /** true: free; false: taken or wrong; null: could not be told (say, no Docker engine). */
    ok: boolean | null;
    reason: string;
}

export interface Availability {
    name: string;
    domain: string;
    available: boolean;
    checks: Record<'name' | 'dns' | 'folder' | 'site' | 'container' | 'certificate', Check>;
}

function localAddresses(): Set<string> {
    const addresses = new Set(['127.0.0.1', '::1']);
    for (const entries of Object.values(Os.networkInterfaces())) {
        for (const entry of entries ?? []) {
            addresses.add(entry.address);
        }
    }

    return addresses;
}

async function dnsCheck(domain: string): Promise<Check> {
    const lookup = Dns.promises.lookup(domain, { all: true }).then(
        (answers) => answers.map((answer) => answer.address),
        () => [] as string[],
    );
    const addresses = await withFallbackAfter(lookup, 2000, null);
    if (addresses === null) {
        return { ok: false, reason: `${domain}: the DNS lookup timed out` };
    }

    if (addresses.length === 0) {
        return { ok: false, reason: `${domain} does not resolve; add a DNS record pointing at this host` };
    }

    const local = localAddresses();
    const here = addresses.filter((address) => local.has(address));
    return here.length > 0
        ? { ok: true, reason: `${domain} resolves to this host (${here.join(', ')})` }
        : { ok: false, reason: `${domain} resolves to ${addresses.join(', ')}, not to this host` };
}

function pathCheck(path: string, what: string): Check {
    return Fs.existsSync(path) ? { ok: false, reason: `${what} ${path} already exists` } : { ok: true, reason: `no ${what} at ${path}` };
}

async function containerCheck(name: string): Promise<Check> {
    const docker = dockerClient();
    const listing = docker.listContainers({ all: true, filters: { label: [`${LABEL.project}=${name}`] } }).then(
        (containers) => containers.length,
        () => null,
    );
    const count = await withFallbackAfter(listing, 3000, null);
    if (count === null) {
        return { ok: null, reason: 'the Docker engine could not be reached, so containers were not checked' };
    }

    return count === 0
        ? { ok: true, reason: `no container of project ${name}` }
        : { ok: false, reason: `${count} container(s) of project ${name} exist` };
}

/** Whether a name is free everywhere an app would use it: record, DNS, folder, nginx site, containers, certificate. */
/**
 * `own`: the app is judged for itself (its preview): its own record is no conflict, nor, once it is deployed, its
 * own folder, site, containers and certificate.
 */
export async function checkAvailability(server: Server, name: string, own?: { state: string }): Promise<Availability> {
    const problem = appNameProblem(name);
    const service = apps(server);
    const domain = problem ? '' : service.domainOf(name);
    if (problem) {
        const skipped = { ok: null, reason: 'not checked: the name is not valid' };
        return {
            name,
            domain,
            available: false,
            checks: {
                name: { ok: false, reason: problem },
                dns: skipped,
                folder: skipped,
                site: skipped,
                container: skipped,
                certificate: skipped,
            },
        };
    }

    const { certificatesDir } = server.app.config.apps;
    const existing = await service.find(name);
    const deployed = own !== undefined && own.state !== 'draft';
    const ownIfDeployed = (check: Check, what: string): Check =>
        deployed && check.ok === false ? { ok: true, reason: `the app's own ${what}, from its deploy` } : check;
    const checks: Availability['checks'] = {
        name: own
            ? { ok: true, reason: `the name is this app's` }
            : existing
              ? { ok: false, reason: `an app named ${name} exists` }
              : { ok: true, reason: 'the name is free' },
        dns: await dnsCheck(domain),
        folder: ownIfDeployed(pathCheck(service.appDir(name), 'folder'), 'folder'),
        site: ownIfDeployed(pathCheck(service.sitePath(name), 'nginx site'), 'nginx site'),
        container: ownIfDeployed(await containerCheck(name), 'containers'),
        certificate: ownIfDeployed(pathCheck(Path.join(certificatesDir, domain), 'certificate folder'), 'certificate'),
    };
    // DNS is advice: a record can be added after the draft is made.
    const blocking = (['name', 'folder', 'site', 'container', 'certificate'] as const).some((key) => checks[key].ok === false);
    return { name, domain, available: !blocking, checks };
}
