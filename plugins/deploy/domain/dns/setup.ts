import type { Server } from '@hapi/hapi';

import { loadDnsProvider } from './dns-providers.ts';

/**
 * The DNS provider DNS_PROVIDER names is built at start: an unknown name, a file that builds no provider, or a
 * configuration the provider refuses stops the start naming it, rather than failing the first deploy's DNS step.
 */
export default async function checkDnsProvider(server: Server): Promise<void> {
    await loadDnsProvider(server.app.config.host.dns);
}
