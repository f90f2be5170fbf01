/** The DNS side of a run: the app's name pointed at this host, journalled first, and put back when the run is undone. */
import type { Config } from '../../../../lib/config.ts';
import type { DnsProvider } from '../dns/dns-providers.ts';
import type { RunContext } from './run-context.ts';

/** The configured DNS provider, or null when no record is managed (its module loaded only then). */
export async function dnsProvider(config: Config): Promise<DnsProvider | null> {
    if (!config.host.dns.provider) {
        return null;
    }

    // Loaded here, not with the module: most hosts manage no DNS records.
    const { loadDnsProvider } = await import('../dns/dns-providers.ts');
    return await loadDnsProvider(config.host.dns);
}

/** Points the app's domain at this host when a DNS provider is set; answers the undo of that change, if one was made. */
export async function setDnsRecord(context: RunContext): Promise<(() => Promise<string>) | undefined> {
    const dns = context.config.host.dns;
    const provider = await dnsProvider(context.config);
    if (!provider || !dns.address) {
        return undefined;
    }

    context.step = 'dns';
    const domain = context.data.domain;
    const previous = await provider.lookupAddress(domain);
    if (previous.length === 1 && previous[0] === dns.address) {
        context.log(`DNS: ${domain} already points at ${dns.address}`);
        return undefined;
    }

    const existed = (await context.resources('dns')).includes(domain);
    await context.journal({ type: 'dns', domain, previous, existed });
    await provider.setAddress(domain, dns.address, dns.ttl);
    await context.recordResource('dns', domain);
    context.log(`DNS: ${domain} now points at ${dns.address} (${provider.name})`);
    return async () => await putBackDnsRecord(context, { domain, previous, existed });
}

/**
 * Gives the domain back the addresses it had before the run (or no record), and takes the record out of the app's
 * resources when the run made it; answers what it did, in words for the run's log.
 */
export async function putBackDnsRecord(
    context: RunContext,
    change: { domain: string; previous: string[]; existed: boolean },
): Promise<string> {
    const { domain, previous } = change;
    const provider = await dnsProvider(context.config);
    if (!provider) {
        throw new Error(`no DNS provider is configured now, so ${domain} keeps the record the run set`);
    }

    if (previous.length === 0) {
        await provider.removeAddress(domain);
    } else {
        await provider.setAddress(domain, previous, context.config.host.dns.ttl);
    }

    if (!change.existed) {
        await context.forgetResource('dns', domain);
    }

    return previous.length === 0 ? `removed the DNS record of ${domain}` : `pointed ${domain} back at ${previous.join(', ')}`;
}
