import Dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import Net from 'node:net';

/**
 * What an outgoing request may reach, decided on IP addresses: the webhooks' allow-list and the deploy manager's
 * identity-provider requests both keep callers from probing the server's own machine and network.
 */

export type AddressFamily = 'ipv4' | 'ipv6';

/**
 * Where an address points: this machine; a private network (RFC 1918, RFC 4193, as Go's net.IP.IsPrivate);
 * nowhere routable (unspecified, link-local, multicast, broadcast); or the internet.
 */
export type AddressKind = 'loopback' | 'private' | 'not-global' | 'external';

export interface IpAddress {
    address: string;
    family: AddressFamily;
}

export function blockList(subnets: Array<[string, number, AddressFamily]>): Net.BlockList {
    const list = new Net.BlockList();
    for (const [network, prefix, family] of subnets) {
        list.addSubnet(network, prefix, family);
    }

    return list;
}

const KINDS: Array<[Exclude<AddressKind, 'external'>, Net.BlockList]> = [
    [
        'loopback',
        blockList([
            ['127.0.0.0', 8, 'ipv4'],
            ['::1', 128, 'ipv6'],
        ]),
    ],
    [
        'private',
        blockList([
            ['10.0.0.0', 8, 'ipv4'],
            ['172.16.0.0', 12, 'ipv4'],
            ['192.168.0.0', 16, 'ipv4'],
            ['fc00::', 7, 'ipv6'],
        ]),
    ],
    [
        'not-global',
        blockList([
            ['0.0.0.0', 32, 'ipv4'],
            ['169.254.0.0', 16, 'ipv4'],
            ['224.0.0.0', 4, 'ipv4'],
            ['255.255.255.255', 32, 'ipv4'],
            ['::', 128, 'ipv6'],
            ['fe80::', 10, 'ipv6'],
            ['ff00::', 8, 'ipv6'],
        ]),
    ],
];

/** An IP address with its family, `::ffff:127.0.0.1` read as 127.0.0.1; undefined for anything else. */
export function parseIpAddress(address: string): IpAddress | undefined {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const plain = mapped?.[1] ?? address;
    const version = Net.isIP(plain);
    if (version === 0) {
        return undefined;
    }

    return { address: plain, family: version === 4 ? 'ipv4' : 'ipv6' };
}

export function addressKind(ip: IpAddress): AddressKind {
    return KINDS.find(([, list]) => list.check(ip.address, ip.family))?.[0] ?? 'external';
}

/**
 * A `lookup` for net.connect, http.request and the like: resolves as they would, and fails with `refusal` when
 * any address the name resolves to is not allowed. The check happens as the connection is made, so a name cannot
 * answer one address to a check and another to the connection. (An IP literal is not looked up: check it first.)
 */
export function guardedLookup(
    allows: (hostName: string, address: string) => boolean,
    refusal: (hostName: string, address: string) => Error,
): LookupFunction {
    return (hostName, options, callback) => {
        Dns.lookup(hostName, { family: options.family, hints: options.hints, all: true }, (error, addresses) => {
            if (error) {
                callback(error, '', 4);
                return;
            }

            const denied = addresses.find((entry) => !allows(hostName, entry.address));
            if (denied || addresses.length === 0) {
                callback(refusal(hostName, denied?.address ?? 'no address'), '', 4);
                return;
            }

            if (options.all) {
                (callback as unknown as (error: null, all: Dns.LookupAddress[]) => void)(null, addresses);
                return;
            }

            const first = addresses[0] as Dns.LookupAddress;
            callback(null, first.address, first.family);
        });
    };
}
