import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import { ROOT_DIR } from '../../server.ts';
import { freePorts, temporaryDirectory } from '../helpers/server.ts';

export type ServiceExports = Record<
    | 'DOCKER_HOST'
    | 'NGINX_BIN'
    | 'NGINX_CONF'
    | 'NGINX_SITES_DIR'
    | 'NGINX_HTTP_PORT'
    | 'NGINX_HTTPS_PORT'
    | 'NGINX_LISTEN_ADDRESS'
    | 'ACME_DIRECTORY_URL'
    | 'ACME_CA_FILE'
    | 'ACME_WEBROOT'
    | 'REGISTRY_URL',
    string
>;

export interface RunningServices {
    exports: ServiceExports;
    stop(): void;
}

const SCRIPT = Path.join(ROOT_DIR, 'scripts', 'services.sh');

export function runServicesScript(command: 'up' | 'down', environment: Record<string, string>) {
    return spawnSync('bash', [SCRIPT, command], { env: { ...process.env, ...environment }, encoding: 'utf8', timeout: 300_000 });
}

export function parseExports(text: string): Record<string, string> {
    return Object.fromEntries(
        text
            .split('\n')
            .filter((line) => line.startsWith('export '))
            .map((line) => {
                const [name = '', ...value] = line.slice('export '.length).split('=');
                return [name, value.join('=')];
            }),
    );
}

/** A state folder of its own and free ports, distinct from one another, for scripts/services.sh up. */
export async function servicesEnvironment(): Promise<Record<string, string> & { GATEHOUSE_SERVICES_DIR: string }> {
    const names = [
        'NGINX_HTTP_PORT',
        'NGINX_HTTPS_PORT',
        'PEBBLE_PORT',
        'PEBBLE_MANAGEMENT_PORT',
        'PEBBLE_DNS_PORT',
        'PEBBLE_DNS_MANAGEMENT_PORT',
        'REGISTRY_PORT',
    ];
    const ports = await freePorts(names.length);
    return {
        GATEHOUSE_SERVICES_DIR: temporaryDirectory('gatehouse-services-'),
        ...Object.fromEntries(names.map((name, index) => [name, String(ports[index])])),
    };
}

/** Tries with fresh ports when one was taken between being found free and being bound. */
const START_ATTEMPTS = 3;

/**
 * scripts/services.sh up on free ports in a state folder of its own; stop() brings it all down again. A port found
 * free may still be taken before the service binds it (by another file's server), so a start that failed on 'address
 * already in use' is tried again on other ports.
 */
export async function startServices(): Promise<RunningServices> {
    for (let attempt = 1; ; attempt += 1) {
        const environment = await servicesEnvironment();
        const up = runServicesScript('up', environment);
        if (up.status === 0) {
            return runningServices(environment, up.stdout);
        }

        runServicesScript('down', environment);
        Fs.rmSync(environment.GATEHOUSE_SERVICES_DIR, { recursive: true, force: true });
        if (attempt >= START_ATTEMPTS || !/address already in use/i.test(up.stderr)) {
            throw new Error(`scripts/services.sh up failed:\n${up.stderr}`);
        }
    }
}

function runningServices(environment: Awaited<ReturnType<typeof servicesEnvironment>>, stdout: string): RunningServices {
    return {
        exports: parseExports(stdout) as ServiceExports,
        stop: () => {
            runServicesScript('down', environment);
            Fs.rmSync(environment.GATEHOUSE_SERVICES_DIR, { recursive: true, force: true });
        },
    };
}
