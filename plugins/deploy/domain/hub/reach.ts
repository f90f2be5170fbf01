/**
 * What image look-ups may reach: the hosts HUB_ALLOWED_HOST_LIST allows (Gitea's ALLOWED_HOST_LIST; `external` by
 * default), and the places the configuration itself names (HUB_URL, HUB_REGISTRY_URL, REGISTRY_URL), each at its
 * own port only. Anyone signed in may name a registry, so without this a viewer could make the server ask its own
 * ports and network.
 */
import type { HostConfig } from '../../../../lib/config.ts';
import { parseAllowList } from '../../../../lib/host-allow-list.ts';
import { registryBaseUrl } from './image-reference.ts';
import { hostOf, portOf, type ReachPolicy } from './upstream.ts';

const originKey = (hostName: string, port: number) => `${hostName.toLowerCase()} ${port}`;

function configuredUrls(host: HostConfig): string[] {
    const registry = host.registry.url?.split('/')[0];
    return [host.hubUrl, host.hubRegistryUrl, ...(registry ? [registryBaseUrl(registry)] : [])];
}

export function hubReachPolicy(host: HostConfig): ReachPolicy {
    const list = parseAllowList(host.hubAllowedHostList);
    const configured = new Set(
        configuredUrls(host).map((text) => {
            const url = new URL(text);
            return originKey(hostOf(url), portOf(url));
        }),
    );
    return (hostName, port, address) => configured.has(originKey(hostName, port)) || list.allows(hostName, address);
}
