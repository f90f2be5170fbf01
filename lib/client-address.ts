import Net from 'node:net';

import type { Request } from '@hapi/hapi';

import { defineService } from './services.ts';

/** `::ffff:192.0.2.1` is 192.0.2.1; IPv6 addresses in lower case. */
export function normalizeAddress(address: string): string {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    return mapped?.[1] ?? address.toLowerCase();
}

/**
 * TRUSTED_PROXIES: comma-separated addresses and CIDRs, returned as CIDRs (`10.0.0.0/8`, `::1/128`);
 * throws naming the first item that is neither.
 */
export function parseTrustedProxies(value: string): string[] {
    return value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
        .map((item) => {
            const [address = '', prefix, ...rest] = item.split('/');
            const family = Net.isIP(address);
            const bits = family === 6 ? 128 : 32;
            const length = prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
            if (family === 0 || rest.length > 0 || !(length >= 0 && length <= bits)) {
                throw new Error(`not an address or CIDR: ${item}`);
            }

            return `${normalizeAddress(address)}/${length}`;
        });
}

/** An X-Forwarded-For entry's address: `192.0.2.1`, `192.0.2.1:443`, `[2001:db8::1]:443` or `2001:db8::1`. */
function forwardedAddress(entry: string): string | undefined {
    const trimmed = entry.trim();
    const bracketed = /^\[([^\]]+)\](:\d+)?$/.exec(trimmed);
    const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(trimmed);
    const address = bracketed?.[1] ?? withPort?.[1] ?? trimmed;
    return Net.isIP(address) === 0 ? undefined : normalizeAddress(address);
}

/** The proxies whose X-Forwarded-For is believed. */
export class TrustedProxies {
    readonly #list = new Net.BlockList();
    readonly #empty: boolean;

    constructor(cidrs: readonly string[]) {
        for (const cidr of cidrs) {
            const [address = '', prefix = ''] = cidr.split('/');
            this.#list.addSubnet(address, Number(prefix), Net.isIP(address) === 6 ? 'ipv6' : 'ipv4');
        }

        this.#empty = cidrs.length === 0;
    }

    trusts(address: string): boolean {
        const family = Net.isIP(address);
        return !this.#empty && family !== 0 && this.#list.check(address, family === 6 ? 'ipv6' : 'ipv4');
    }

    /**
     * The client behind `peer`: while the hop at hand is a trusted proxy, the address it says it was reached from
     * (X-Forwarded-For, read from the right) is taken instead. The entries further left are the client's own word.
     */
    clientOf(peer: string, forwardedFor: string | undefined): string {
        let client = normalizeAddress(peer);
        const hops = (forwardedFor ?? '').split(',').reverse();
        for (const hop of hops) {
            if (!this.trusts(client)) {
                break;
            }

            const address = forwardedAddress(hop);
            if (address === undefined) {
                break;
            }

            client = address;
        }

        return client;
    }
}

const trustedProxiesOf = defineService('trustedProxies', (server) => new TrustedProxies(server.app.config.trustedProxies));
const trustedProxies = (request: Request): TrustedProxies => trustedProxiesOf(request.server);

/** The address a request came from: its peer's, or the one a trusted proxy forwards (TRUSTED_PROXIES). */
export function clientAddress(request: Request): string {
    // Node joins repeated X-Forwarded-For headers into one, comma-separated.
    const header = request.headers['x-forwarded-for'] as string | undefined;
    return trustedProxies(request).clientOf(request.info.remoteAddress, header);
}
