import { type AddressFamily, addressKind, blockList, parseIpAddress } from './addresses.ts';

/**
 * Gitea's ALLOWED_HOST_LIST: which hosts an outgoing request (a webhook, an image look-up) may reach, checked on
 * the address a host name resolves to (so that a public name pointing inside cannot probe the server's own network).
 */
export interface HostAllowList {
    allows(hostName: string, address: string): boolean;
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
    const name = item.toLowerCase();
    switch (name) {
        case '*':
            return () => true;
        case 'external':
        case 'private':
        case 'loopback':
            return (_host, address, family) => addressKind({ address, family }) === name;
        default:
            return item.includes('/') ? cidrMatcher(item) : hostMatcher(item);
    }
}

function cidrMatcher(item: string): Matcher {
    const [network = '', prefix = ''] = item.split('/');
    const base = parseIpAddress(network);
    if (!base || !/^\d+$/.test(prefix)) {
        throw new Error(`invalid CIDR in the allow-list: ${item}`);
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
            const ip = parseIpAddress(address);
            return ip !== undefined && matchers.some((matches) => matches(hostName.toLowerCase(), ip.address, ip.family));
        },
    };
}
