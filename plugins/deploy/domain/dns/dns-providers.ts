/**
 * DNS provider plugins, found by name: `providers/<name>.ts`, or `<name>.ts` in a folder of DNS_PROVIDERS_DIRS, is
 * provider `<name>` (the DNS_PROVIDER value); its default export builds the provider from the DNS configuration.
 */
import Path from 'node:path';

import type { DnsConfig } from '../../../../lib/config.ts';
import { namedPlugins } from '../../../../lib/named-plugins.ts';

export interface DnsProvider {
    readonly name: string;
    /**
     * Points fqdn at the address, or at each of the addresses (A for IPv4, AAAA for IPv6), replacing the name's
     * earlier address records (a list puts back what lookupAddress answered before a change).
     */
    setAddress(fqdn: string, address: string | readonly string[], ttl: number): Promise<void>;
    /** Removes every A and AAAA record of fqdn; no error if there are none. */
    removeAddress(fqdn: string): Promise<void>;
    /** The A/AAAA addresses the server answers for fqdn now (asked directly of config.server). */
    lookupAddress(fqdn: string): Promise<string[]>;
}

export type DnsProviderFactory = (config: DnsConfig) => DnsProvider;

export const DNS_PROVIDERS_DIR = Path.join(import.meta.dirname, 'providers');

function isFactory(value: unknown): value is DnsProviderFactory {
    return typeof value === 'function';
}

/** The providers of `providers/` and of the configuration's own folders (DNS_PROVIDERS_DIRS). */
function providers(config: Pick<DnsConfig, 'providerDirs'>) {
    return namedPlugins<DnsProviderFactory>([DNS_PROVIDERS_DIR, ...config.providerDirs], {
        what: 'a function building the DnsProvider',
        isPlugin: isFactory,
    });
}

export function availableDnsProviders(config: Pick<DnsConfig, 'providerDirs'> = { providerDirs: [] }): string[] {
    return providers(config).names();
}

/**
 * The provider config.provider names, or null when DNS records are not managed. An unknown name, a file that builds
 * no provider and a provider that refuses the configuration each throw, naming what is wrong: the deploy manager's
 * start does this first (dns/setup.ts), so a run never meets it.
 */
export async function loadDnsProvider(config: DnsConfig): Promise<DnsProvider | null> {
    if (!config.provider) {
        return null;
    }

    const factory = await providers(config).load(config.provider);
    if (!factory) {
        const available = availableDnsProviders(config);
        throw new Error(
            `Unknown DNS provider "${config.provider}" (DNS_PROVIDER); available: ${available.length > 0 ? available.join(', ') : 'none'}`,
        );
    }

    const provider = factory(config);
    if (provider.name !== config.provider) {
        throw new Error(
            `DNS provider ${config.provider} (DNS_PROVIDER) built a provider named "${provider.name}": a provider is named after its file`,
        );
    }
    return provider;
}
