/** The Docker engine, reached as dockerode reaches it by default: DOCKER_HOST, else the local socket. */
import Docker from 'dockerode';

import type { HostConfig } from '../../../../lib/config.ts';

export function dockerClient(): Docker {
    return new Docker();
}

/** The gateway of a Docker network: the address its containers see the host's connections (nginx's) come from. */
export async function networkGateway(docker: Docker, network: string): Promise<string | undefined> {
    const info = (await docker.getNetwork(network).inspect()) as { IPAM?: { Config?: Array<{ Gateway?: string }> } };
    return info.IPAM?.Config?.find((config) => config.Gateway)?.Gateway;
}

/** Credentials for pulls from the configured registry, in the form the engine's API takes them. */
export function registryAuth(host: HostConfig, image: string): Docker.AuthConfig | undefined {
    const { url, username, password } = host.registry;
    if (!url || !username || password === undefined || !image.startsWith(`${url.replace(/\/+$/, '')}/`)) {
        return undefined;
    }

    return { username, password, serveraddress: url.split('/')[0] ?? url };
}
