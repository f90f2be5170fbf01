/**
 * DNS provider plugins, found by name: `providers/<name>.ts` is provider `<name>` (the DNS_PROVIDER value);
 * its default export builds the provider from the DNS configuration.
 */
import Fs from 'node:fs';
import Path from 'node:path';
import { pathToFileURL } from 'node:url';

import type { DnsConfig } from '../../../../lib/config.ts';

export interface DnsProvider {
    readonly name: string;
    /** Points fqdn at the address (A for IPv4, AAAA for IPv6), replacing the name's earlier address records. */
    setAddress(fqdn: string, address: string, ttl: number): Promise<void>;
    /** Removes every A and AAAA record of fqdn; no error if there are none. */
    removeAddress(fqdn: string): Promise<void>;
    /** The A/AAAA addresses the server answers for fqdn now (asked directly of config.server). */
    lookupAddress(fqdn: string): Promise<string[]>;
}

export type DnsProviderFactory = (config: DnsConfig) => DnsProvider;

export const DNS_PROVIDERS_DIR = Path.join(import.meta.dirname, 'providers');

const PROVIDER_FILE = /^([a-z0-9-]+)\.ts$/;

export function availableDnsProviders(): string[] {
    return Fs.readdirSync(DNS_PROVIDERS_DIR)
        .map((file) => PROVIDER_FILE.exec(file)?.[1])
        .filter((name) => name !== undefined)
        .sort();
}

function isFactory(value: unknown): value is DnsProviderFactory {
    return typeof value === 'function';
}

/** The provider config.provider names, or null when DNS records are not managed. */
export async function loadDnsProvider(config: DnsConfig): Promise<DnsProvider | null> {
    if (!config.provider) {
        return null;
    }

    const available = availableDnsProviders();
    if (!available.includes(config.provider)) {
        const known = available.length > 0 ? available.join(', ') : 'none';
        throw new Error(`Unknown DNS provider "${config.provider}" (DNS_PROVIDER); available: ${known}`);
    }

    const file = Path.join(DNS_PROVIDERS_DIR, `${config.provider}.ts`);
    const module = (await import(pathToFileURL(file).href)) as { default?: unknown };
    if (!isFactory(module.default)) {
        throw new Error(`DNS provider "${config.provider}" (${file}) has no default export building the provider`);
    }

    const provider = module.default(config);
    if (provider.name !== config.provider) {
        throw new Error(`DNS provider file ${file} built a provider named "${provider.name}", not "${config.provider}"`);
    }
    return provider;
}
