import Crypto from 'node:crypto';
import Dgram from 'node:dgram';
import Dns from 'node:dns';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { DnsConfig } from '../../../../../lib/config.ts';
import { availableDnsProviders, type DnsProvider, loadDnsProvider } from '../../../../../plugins/deploy/domain/dns/dns-providers.ts';
import { Rfc2136Provider, rfc2136Settings } from '../../../../../plugins/deploy/domain/dns/providers/rfc2136.ts';
import {
    decodeMessage,
    encodeAddress,
    encodeMessage,
    OPCODE,
    RECORD_CLASS,
    RECORD_TYPE,
} from '../../../../../plugins/deploy/domain/dns/wire/dns-message.ts';
import { signMessage } from '../../../../../plugins/deploy/domain/dns/wire/tsig.ts';
import { exchange, parseServer } from '../../../../../plugins/deploy/domain/dns/wire/transport.ts';
import { createTestServer, freePort, freshDatabase, temporaryDirectory } from '../../../../helpers/server.ts';
import { type BindKey, ensureBind, type RunningBind, startBind } from '../../../../support/bind.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const needsBind = { skip: !ensureBind() };

function dnsConfig(overrides: Partial<DnsConfig> = {}): DnsConfig {
    return {
        provider: undefined,
        providerDirs: [],
        server: undefined,
        zone: undefined,
        tsigKeyName: undefined,
        tsigSecret: undefined,
        tsigAlgorithm: 'hmac-sha256',
        address: undefined,
        ttl: 300,
        ...overrides,
    };
}

/** DNS settings for the running BIND, signed with `key` (null: unsigned). */
function bindConfig(bind: RunningBind, key: BindKey | null = bind, overrides: Partial<DnsConfig> = {}): DnsConfig {
    return dnsConfig({
        provider: 'rfc2136',
        server: bind.server,
        zone: bind.zone,
        tsigKeyName: key?.name,
        tsigSecret: key?.secret,
        tsigAlgorithm: key?.algorithm ?? 'hmac-sha256',
        ...overrides,
    });
}

async function providerFor(config: DnsConfig): Promise<DnsProvider> {
    const provider = await loadDnsProvider(config);
    if (!provider) {
        throw new Error('no provider');
    }
    return provider;
}

/** What BIND answers, asked through Node's own resolver (c-ares): independent of the provider's wire code. */
function independentResolver(bind: RunningBind) {
    const resolver = new Dns.promises.Resolver({ timeout: 2_000, tries: 2 });
    resolver.setServers([bind.server]);
    const orNone = async (lookup: Promise<string[]>) => {
        try {
            return await lookup;
        } catch (error) {
            if (['ENODATA', 'ENOTFOUND'].includes((error as NodeJS.ErrnoException).code ?? '')) {
                return [];
            }
            throw error;
        }
    };
    return {
        ipv4: (name: string) => orNone(resolver.resolve4(name)),
        ipv6: (name: string) => orNone(resolver.resolve6(name)),
        txt: async (name: string) => (await orNone(resolver.resolveTxt(name).then((rows) => rows.map((row) => row.join(''))))).sort(),
    };
}

/** A UDP socket on 127.0.0.1 standing in for a DNS server: counts what arrives, answers with `reply` if given. */
async function udpListener(reply?: (request: Buffer) => Buffer) {
    const socket = Dgram.createSocket('udp4');
    const received: Buffer[] = [];
    socket.on('message', (message, peer) => {
        received.push(message);
        if (reply) {
            socket.send(reply(message), peer.port, peer.address);
        }
    });
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return {
        server: `127.0.0.1:${socket.address().port}`,
        received,
        close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
    };
}

/** The request turned into a NOERROR answer, its TSIG record cut off. */
function unsignedAnswer(request: Buffer): Buffer {
    const tsig = decodeMessage(request).additionals.at(-1);
    const answer = Buffer.from(request.subarray(0, tsig?.offset));
    answer.writeUInt16BE(request.readUInt16BE(2) | 0x8000, 2);
    answer.writeUInt16BE(0, 10);
    return answer;
}

describe('DNS providers: rfc2136 against a real BIND', needsBind, () => {
    let bind: RunningBind;
    let provider: DnsProvider;
    let resolver: ReturnType<typeof independentResolver>;

    before(async () => {
        const started = await startBind();
        if (!started) {
            throw new Error('BIND did not start');
        }
        bind = started;
        provider = await providerFor(bindConfig(bind));
        resolver = independentResolver(bind);
    });

    after(async () => {
        await bind?.stop();
    });

    it('sets an A record, replaces it, switches to AAAA and removes it', async () => {
        const name = 'wiki.apps.test';

        await provider.setAddress(name, '192.0.2.10', 120);
        expect(await provider.lookupAddress(name)).to.equal(['192.0.2.10']);
        expect(await resolver.ipv4(name)).to.equal(['192.0.2.10']);

        await provider.setAddress(`${name}.`, '192.0.2.20', 120);
        expect(await provider.lookupAddress(name)).to.equal(['192.0.2.20']);
        expect(await resolver.ipv4(name)).to.equal(['192.0.2.20']);

        await provider.setAddress('WIKI.Apps.Test', '2001:db8:0:0:1::5', 120);
        expect(await provider.lookupAddress(name)).to.equal(['2001:db8::1:0:0:5']);
        expect(await resolver.ipv6(name)).to.equal(['2001:db8::1:0:0:5']);
        expect(await resolver.ipv4(name)).to.equal([]);

        await provider.removeAddress(name);
        expect(await provider.lookupAddress(name)).to.equal([]);
        expect(await resolver.ipv4(name)).to.equal([]);
        expect(await resolver.ipv6(name)).to.equal([]);

        await provider.removeAddress(name);
        await provider.removeAddress('never-there.apps.test');
    });

    it('puts back several addresses at once (what a lookup answered before a change), and refuses an empty list', async () => {
        const name = 'several.apps.test';
        await provider.setAddress(name, ['192.0.2.11', '192.0.2.12', '2001:db8::12'], 120);
        expect((await provider.lookupAddress(name)).sort()).to.equal(['192.0.2.11', '192.0.2.12', '2001:db8::12']);
        await provider.setAddress(name, '192.0.2.13', 120);
        expect(await provider.lookupAddress(name)).to.equal(['192.0.2.13']);
        await expect(provider.setAddress(name, [], 120)).to.reject(Error, 'no address to point several.apps.test at');
        await expect(provider.setAddress(name, ['192.0.2.14', 'nope'], 120)).to.reject(Error, /"nope" is not an IPv4 or IPv6 address/);
        expect(await provider.lookupAddress(name)).to.equal(['192.0.2.13']);
        await provider.removeAddress(name);
    });

    it('uses the record TTL it is given', async () => {
        const name = 'ttl.apps.test';
        await provider.setAddress(name, '192.0.2.30', 42);
        const resolverWithTtl = new Dns.promises.Resolver();
        resolverWithTtl.setServers([bind.server]);
        expect(await resolverWithTtl.resolve4(name, { ttl: true })).to.equal([{ address: '192.0.2.30', ttl: 42 }]);
        await provider.removeAddress(name);
    });

    it("leaves the name's other records alone", async () => {
        const name = 'acme.apps.test';
        const rfc2136 = new Rfc2136Provider(rfc2136Settings(bindConfig(bind)));
        const txt = Buffer.concat([Buffer.from([9]), Buffer.from('challenge')]);
        await rfc2136.update(name, [{ name, type: RECORD_TYPE.TXT, class: RECORD_CLASS.IN, ttl: 60, data: txt }]);

        await provider.setAddress(name, '192.0.2.40', 60);
        await provider.removeAddress(name);
        expect(await resolver.txt(name)).to.equal(['challenge']);
        expect(await provider.lookupAddress(name)).to.equal([]);
    });

    it('signs with hmac-sha512 and hmac-sha1 keys too', async () => {
        for (const key of bind.keys) {
            const name = `${key.algorithm}.apps.test`;
            const signedWith = await providerFor(bindConfig(bind, key));
            await signedWith.setAddress(name, '192.0.2.50', 60);
            expect(await resolver.ipv4(name)).to.equal(['192.0.2.50']);
            await signedWith.removeAddress(name);
        }
    });

    it('is refused with BADSIG for a wrong TSIG secret, and changes nothing', async () => {
        const name = 'guarded.apps.test';
        await provider.setAddress(name, '192.0.2.60', 60);

        const wrongSecret = { ...bind, secret: Crypto.randomBytes(32).toString('base64') };
        const forger = await providerFor(bindConfig(bind, wrongSecret));
        await expect(forger.setAddress(name, '198.51.100.1', 60)).to.reject(Error, /NOTAUTH \(TSIG BADSIG\)/);
        await expect(forger.removeAddress(name)).to.reject(Error, /BADSIG/);
        expect(await resolver.ipv4(name)).to.equal(['192.0.2.60']);

        await provider.removeAddress(name);
    });

    it('is refused with BADKEY for a key the server does not know, and REFUSED without a key', async () => {
        const name = 'guarded-too.apps.test';
        const unknownKey = { ...bind, name: 'someone-else.key' };
        const stranger = await providerFor(bindConfig(bind, unknownKey));
        await expect(stranger.setAddress(name, '198.51.100.2', 60)).to.reject(Error, /NOTAUTH \(TSIG BADKEY\)/);

        const unsigned = await providerFor(bindConfig(bind, null));
        const error = await expect(unsigned.setAddress(name, '198.51.100.3', 60)).to.reject(Error, /failed: REFUSED$/);
        expect((error as Error & { rcode: string }).rcode).to.equal('REFUSED');
        expect(await resolver.ipv4(name)).to.equal([]);
    });

    it('sends a large update over TCP and reads a truncated answer again over TCP', async () => {
        const name = 'many.apps.test';
        const rfc2136 = new Rfc2136Provider(rfc2136Settings(bindConfig(bind)));
        const addresses = Array.from({ length: 60 }, (_, index) => `10.0.0.${index + 1}`);
        const records = addresses.map((address) => ({
            name,
            type: RECORD_TYPE.A,
            class: RECORD_CLASS.IN,
            ttl: 60,
            data: encodeAddress(address),
        }));
        await rfc2136.update(name, records);

        const query = encodeMessage({
            id: 7,
            opcode: OPCODE.QUERY,
            questions: [{ name, type: RECORD_TYPE.A, class: RECORD_CLASS.IN }],
            answers: [],
            authorities: [],
            additionals: [],
        });
        expect((await exchange(parseServer(bind.server), query)).transport).to.equal('tcp');
        expect((await provider.lookupAddress(name)).sort()).to.equal([...addresses].sort());
        expect((await resolver.ipv4(name)).length).to.equal(60);

        await provider.setAddress(name, '192.0.2.70', 60);
        expect(await provider.lookupAddress(name)).to.equal(['192.0.2.70']);
        await provider.removeAddress(name);
    });

    it('refuses a name outside the zone, or not a host name, before sending anything', async () => {
        const listener = await udpListener();
        try {
            const aside = await providerFor(bindConfig(bind, bind, { server: listener.server }));
            for (const name of ['example.com', 'apps.test.example.com', 'notapps.test', 'test']) {
                await expect(aside.setAddress(name, '192.0.2.80', 60)).to.reject(Error, /outside the DNS zone apps\.test/);
                await expect(aside.removeAddress(name)).to.reject(Error, /outside the DNS zone/);
            }
            await expect(aside.setAddress('bad name.apps.test', '192.0.2.80', 60)).to.reject(Error, /not a valid DNS name/);
            await expect(aside.setAddress('wiki.apps.test', 'not-an-address', 60)).to.reject(Error, /not an IPv4 or IPv6 address/);
            expect(listener.received).to.have.length(0);
        } finally {
            await listener.close();
        }
    });

    it("rejects a success the server's key did not sign", async () => {
        const unsignedServer = await udpListener(unsignedAnswer);
        const forgingServer = await udpListener((request) => {
            const forgedKey = { name: 'gatehouse-test', algorithm: 'hmac-sha256' as const, secret: Crypto.randomBytes(32) };
            return signMessage(unsignedAnswer(request), forgedKey).signed;
        });
        try {
            const key = { ...bind, name: 'gatehouse-test' };
            const toUnsigned = await providerFor(bindConfig(bind, key, { server: unsignedServer.server }));
            await expect(toUnsigned.setAddress('wiki.apps.test', '192.0.2.90', 60)).to.reject(
                Error,
                /NOERROR \(the response is not signed\)/,
            );
            const toForging = await providerFor(bindConfig(bind, key, { server: forgingServer.server }));
            await expect(toForging.setAddress('wiki.apps.test', '192.0.2.90', 60)).to.reject(Error, /does not verify \(BADSIG\)/);
        } finally {
            await unsignedServer.close();
            await forgingServer.close();
        }
    });
});

describe('DNS providers: found by name', () => {
    it('finds rfc2136 by name and returns null when no provider is configured', async () => {
        expect(availableDnsProviders()).to.include('rfc2136');
        const provider = await loadDnsProvider(dnsConfig({ provider: 'rfc2136', server: '127.0.0.1:5353', zone: 'apps.test' }));
        expect(provider?.name).to.equal('rfc2136');
        expect(await loadDnsProvider(dnsConfig())).to.be.null();
    });

    it('gives a clear error for an unknown provider or a configuration it cannot work with', async () => {
        await expect(loadDnsProvider(dnsConfig({ provider: 'route53' }))).to.reject(
            Error,
            /Unknown DNS provider "route53".*available: .*rfc2136/,
        );
        await expect(loadDnsProvider(dnsConfig({ provider: '../dns-providers' }))).to.reject(Error, /Unknown DNS provider/);
        await expect(loadDnsProvider(dnsConfig({ provider: 'rfc2136' }))).to.reject(Error, /needs DNS_SERVER .* and DNS_ZONE/);
        const keyWithoutSecret = dnsConfig({ provider: 'rfc2136', server: '127.0.0.1', zone: 'apps.test', tsigKeyName: 'k' });
        await expect(loadDnsProvider(keyWithoutSecret)).to.reject(Error, /needs both DNS_TSIG_KEY_NAME and DNS_TSIG_SECRET/);
        const badServer = dnsConfig({ provider: 'rfc2136', server: '127.0.0.1:99999', zone: 'apps.test' });
        await expect(loadDnsProvider(badServer)).to.reject(Error, /not a DNS server/);
    });

    it('names the server it cannot reach', async () => {
        const provider = await providerFor(dnsConfig({ provider: 'rfc2136', server: `127.0.0.1:${await freePort()}`, zone: 'apps.test' }));
        await expect(provider.setAddress('wiki.apps.test', '192.0.2.1', 60)).to.reject(
            Error,
            /DNS server 127\.0\.0\.1:\d+ cannot be reached/,
        );
    });

    it('stops the start when DNS_PROVIDER names no provider, naming it', async () => {
        const dataDir = temporaryDirectory();
        const database = await freshDatabase(dataDir);
        try {
            await expect(createTestServer({ DNS_PROVIDER: 'route53' }, { dataDir, database })).to.reject(
                Error,
                /Unknown DNS provider "route53" \(DNS_PROVIDER\); available: .*rfc2136/,
            );
        } finally {
            await database.drop();
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('finds a provider file in a folder of DNS_PROVIDERS_DIRS, named after its file', async () => {
        const folder = temporaryDirectory('gatehouse-dns-providers-');
        const name = `dropped-${Crypto.randomBytes(4).toString('hex')}`;
        const provider = (builtName: string) => `export default function create(config: { address?: string }) {
    return {
        name: '${builtName}',
        setAddress: async () => undefined,
        removeAddress: async () => undefined,
        lookupAddress: async () => [config.address ?? 'none'],
    };
}
`;
        try {
            Fs.writeFileSync(Path.join(folder, `${name}.ts`), provider(name));
            const withFolder = { providerDirs: [folder] };
            expect(availableDnsProviders(withFolder)).to.include([name, 'rfc2136']);
            expect(availableDnsProviders()).to.not.include(name);
            const found = await loadDnsProvider(dnsConfig({ ...withFolder, provider: name, address: '192.0.2.1' }));
            expect(found?.name).to.equal(name);
            expect(await found?.lookupAddress('x.apps.test')).to.equal(['192.0.2.1']);
            await expect(loadDnsProvider(dnsConfig({ provider: name }))).to.reject(Error, new RegExp(`Unknown DNS provider "${name}"`));

            Fs.writeFileSync(Path.join(folder, 'misnamed.ts'), provider('other'));
            await expect(loadDnsProvider(dnsConfig({ ...withFolder, provider: 'misnamed' }))).to.reject(
                Error,
                /DNS provider misnamed \(DNS_PROVIDER\) built a provider named "other"/,
            );
            Fs.writeFileSync(Path.join(folder, 'rfc2136.ts'), provider('rfc2136'));
            expect(() => availableDnsProviders(withFolder)).to.throw(/named rfc2136 is both .*rfc2136\.ts and .*rfc2136\.ts/);
        } finally {
            Fs.rmSync(folder, { recursive: true, force: true });
        }
    });
});
