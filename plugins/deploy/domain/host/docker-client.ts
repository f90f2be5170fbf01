/** The Docker engine, reached as dockerode reaches it by default: DOCKER_HOST, else the local socket. */
import Module, { createRequire } from 'node:module';
import Path from 'node:path';

import type Docker from 'dockerode';

import type { HostConfig } from '../../../../lib/config.ts';
import { LABEL } from './compose-labels.ts';

const require = createRequire(import.meta.url);

/**
 * dockerode is loaded on first use, not at start; and two of its modules that load at once with it are loaded only
 * when called: BuildKit's session (gRPC and protobuf, for builds, which Gatehouse never asks for) and the SSH agent
 * (for an `ssh://` DOCKER_HOST). Together they are about 21 MB of the resident memory of a server that reads its
 * containers' resources every few seconds. Both modules export a single function, so a stand-in function that loads
 * the real one when called keeps their behaviour; a dockerode whose files moved is loaded as it is.
 */
function deferModuleCalls(resolve: () => string): void {
    let filename: string;
    try {
        filename = resolve();
    } catch {
        return;
    }
    if (require.cache[filename]) return;

    let real: ((...args: unknown[]) => unknown) | undefined;
    const standIn = new Module(filename);
    standIn.filename = filename;
    standIn.loaded = true;
    standIn.exports = function loadedWhenCalled(this: unknown, ...args: unknown[]): unknown {
        if (!real) {
            delete require.cache[filename];
            real = require(filename) as (...args: unknown[]) => unknown;
        }
        return real.apply(this, args);
    };
    require.cache[filename] = standIn;
}

let Dockerode: typeof Docker | undefined;

export function dockerClient(): Docker {
    if (!Dockerode) {
        deferModuleCalls(() => require.resolve('dockerode/lib/session.js'));
        deferModuleCalls(() => require.resolve('docker-modem/lib/ssh.js', { paths: [Path.dirname(require.resolve('dockerode'))] }));
        Dockerode = require('dockerode') as typeof Docker;
    }

    return new Dockerode();
}

/** The gateway of a Docker network: the address its containers see the host's connections (nginx's) come from. */
export async function networkGateway(docker: Docker, network: string): Promise<string | undefined> {
    const info = (await docker.getNetwork(network).inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string }> } };
    return info.IPAM?.Config?.find((config) => config.Gateway)?.Gateway;
}

/**
 * The address nginx's requests reach a deployed app from: the gateway of the network its published container is on.
 * Undefined when no container of the app publishes a port, or the engine does not answer.
 */
export async function appGateway(docker: Docker, app: string): Promise<string | undefined> {
    try {
        const containers = await docker.listContainers({ filters: { label: [`${LABEL.project}=${app}`] } });
        const published = containers.find((container) => container.Ports.some((port) => port.PublicPort !== undefined));
        const networks = Object.values(published?.NetworkSettings.Networks ?? {});
        return networks.find((network) => network.Gateway)?.Gateway || undefined;
    } catch {
        return undefined;
    }
}

/** A health check that runs: declared with a test, and not turned off (`["NONE"]`, compose's `disable: true`). */
export function isActiveHealthcheck(healthcheck: Docker.HealthConfig | undefined): boolean {
    const test = healthcheck?.Test ?? [];
    return test.length > 0 && test[0] !== 'NONE';
}

/** Credentials for pulls from the configured registry, in the form the engine's API takes them. */
export function registryAuth(host: HostConfig, image: string): Docker.AuthConfig | undefined {
    const { url, username, password } = host.registry;
    if (!url || !username || password === undefined || !image.startsWith(`${url.replace(/\/+$/, '')}/`)) {
        return undefined;
    }

    return { username, password, serveraddress: url.split('/')[0] ?? url };
}
