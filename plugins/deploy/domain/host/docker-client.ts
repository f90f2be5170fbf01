/** The Docker engine, reached as dockerode reaches it by default: DOCKER_HOST, else the local socket. */
import { createRequire } from 'node:module';

import type Docker from 'dockerode';

import type { HostConfig } from '../../../../lib/config.ts';
import { LABEL } from './compose-labels.ts';

/** dockerode is loaded on first use, not at start: with its gRPC and SSH dependencies, about 25 MB and half a second. */
export function dockerClient(): Docker {
    const Dockerode = createRequire(import.meta.url)('dockerode') as typeof Docker;
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
