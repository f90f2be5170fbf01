import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { normalizeAddress, parseTrustedProxies, TrustedProxies } from '../../lib/client-address.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('client address behind trusted proxies', () => {
    it('reads TRUSTED_PROXIES as CIDRs, a bare address as a single host', () => {
        expect(parseTrustedProxies(' 10.0.0.0/8, ::1 ,192.0.2.7, fd00::/8,')).to.equal([
            '10.0.0.0/8',
            '::1/128',
            '192.0.2.7/32',
            'fd00::/8',
        ]);
        expect(parseTrustedProxies('')).to.equal([]);
        for (const bad of ['10.0.0.0/33', '::/129', 'localhost', '10.0.0.0/8/1', '10.0.0.0/', '10.0.0.0/-1', '300.1.1.1']) {
            expect(() => parseTrustedProxies(bad), bad).to.throw(`not an address or CIDR: ${bad}`);
        }
    });

    it('ignores X-Forwarded-For from a peer that is not trusted, and when nothing is trusted', () => {
        expect(new TrustedProxies([]).clientOf('127.0.0.1', '203.0.113.1')).to.equal('127.0.0.1');
        const proxies = new TrustedProxies(parseTrustedProxies('127.0.0.1'));
        expect(proxies.clientOf('198.51.100.1', '203.0.113.1')).to.equal('198.51.100.1');
        expect(proxies.clientOf('::ffff:198.51.100.1', undefined)).to.equal('198.51.100.1');
    });

    it('takes the rightmost address that is not a trusted proxy; entries further left are the client’s own word', () => {
        const proxies = new TrustedProxies(parseTrustedProxies('127.0.0.1, 10.0.0.0/8, ::1'));
        expect(proxies.clientOf('127.0.0.1', '203.0.113.1')).to.equal('203.0.113.1');
        expect(proxies.clientOf('::ffff:127.0.0.1', '203.0.113.9, 198.51.100.1, 10.1.2.3')).to.equal('198.51.100.1');
        expect(proxies.clientOf('::1', '10.0.0.2, 10.0.0.1')).to.equal('10.0.0.2');
        expect(proxies.clientOf('127.0.0.1', '[2001:DB8::1]:443')).to.equal('2001:db8::1');
        expect(proxies.clientOf('127.0.0.1', '203.0.113.1:5555')).to.equal('203.0.113.1');
    });

    it('stops at an entry that is not an address', () => {
        const proxies = new TrustedProxies(parseTrustedProxies('10.0.0.0/8'));
        expect(proxies.clientOf('10.0.0.1', '203.0.113.1, unknown')).to.equal('10.0.0.1');
        expect(proxies.clientOf('10.0.0.1', 'junk, 10.0.0.2')).to.equal('10.0.0.2');
        expect(proxies.clientOf('10.0.0.1', '')).to.equal('10.0.0.1');
    });

    it('writes IPv4-mapped addresses as IPv4 and IPv6 in lower case', () => {
        expect(normalizeAddress('::FFFF:192.0.2.1')).to.equal('192.0.2.1');
        expect(normalizeAddress('2001:DB8::1')).to.equal('2001:db8::1');
    });
});
