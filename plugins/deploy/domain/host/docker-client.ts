/** The Docker engine, reached as dockerode reaches it by default: DOCKER_HOST, else the local socket. */
import Docker from 'dockerode';

import type { HostConfig } from '../../../../lib/config.ts';

export function dockerClient(): Docker {
    return new Docker();
}

/** Credentials for pulls from the configured registry, in the form the engine's API takes them. */
export function registryAuth(host: HostConfig, image: string): Docker.AuthConfig | undefined {
    const { url, username, password } = host.registry;
    if (!url || !username || password === undefined || !image.startsWith(`${url.replace(/\/+$/, '')}/`)) {
        return undefined;
    }

    return { username, password, serveraddress: url.split('/')[0] ?? url };
}
