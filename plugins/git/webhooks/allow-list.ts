import Net from 'node:net';

/**
 * Gitea's ALLOWED_HOST_LIST: which hosts a webhook may reach, checked on the address a host name resolves to
 * (so that a public name pointing inside cannot probe the server's own network).
 */
export interface HostAllowList {
    allows(hostName: string, address: string): boolean;
}

type AddressFamily = 'ipv4' | 'ipv6';

function blockList(subnets: Array<[string, number, AddressFamily]>): Net.BlockList {
    const list = new Net.BlockList();
    for (const [network, prefix, family] of subnets) {
        list.addSubnet(network, prefix, family);
    }

    return list;
}

const LOOPBACK = blockList([
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
]);
/** Go's net.IP.IsPrivate: RFC 1918 and RFC 4193. */
const PRIVATE = blockList([
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
]);
/** Not global unicast: unspecified, link-local, multicast and broadcast addresses. */
const NOT_GLOBAL = blockList([
    ['0.0.0.0', 32, 'ipv4'],
    ['169.254.0.0', 16, 'ipv4'],
    ['224.0.0.0', 4, 'ipv4'],
    ['255.255.255.255', 32, 'ipv4'],
    ['::', 128, 'ipv6'],
    ['fe80::', 10, 'ipv6'],
    ['ff00::', 8, 'ipv6'],
]);

/** `::ffff:127.0.0.1` is 127.0.0.1. */
function normalise(address: string): { address: string; family: AddressFamily } | undefined {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const plain = mapped?.[1] ?? address;
    const version = Net.isIP(plain);
    if (version === 0) {
        return undefined;
    }

    return { address: plain, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function isExternal(address: string, family: AddressFamily): boolean {
    return ![LOOPBACK, PRIVATE, NOT_GLOBAL].some((list) => list.check(address, family));
}

function globToRegExp(glob: string): RegExp {
    const source = glob
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*');
    return new RegExp(`^${source}$`, 'i');
}

type Matcher = (hostName: string, address: string, family: AddressFamily) => boolean;

function matcherFor(item: string): Matcher {
    switch (item.toLowerCase()) {
        case '*':
            return () => true;
        case 'external':
            return (_host, address, family) => isExternal(address, family);
        case 'private':
            return (_host, address, family) => PRIVATE.check(address, family);
        case 'loopback':
            return (_host, address, family) => LOOPBACK.check(address, family);
        default:
            return item.includes('/') ? cidrMatcher(item) : hostMatcher(item);
    }
}

function cidrMatcher(item: string): Matcher {
    const [network = '', prefix = ''] = item.split('/');
    const base = normalise(network);
    if (!base || !/^\d+$/.test(prefix)) {
        throw new Error(`invalid CIDR in the webhook allow-list: ${item}`);
    }

    const list = blockList([[base.address, Number(prefix), base.family]]);
    return (_host, address, family) => list.check(address, family);
}

function hostMatcher(item: string): Matcher {
    const pattern = globToRegExp(item.replace(/^\[(.*)\]$/, '$1'));
    return (hostName, address) => pattern.test(hostName) || pattern.test(address);
}

export function parseAllowList(value: string): HostAllowList {
    const matchers = value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '')
        .map(matcherFor);
    return {
        allows(hostName, address) {
            const ip = normalise(address);
            return ip !== undefined && matchers.some((matches) => matches(hostName.toLowerCase(), ip.address, ip.family));
        },
    };
}
