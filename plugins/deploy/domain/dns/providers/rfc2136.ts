/**
 * DNS provider `rfc2136`: dynamic updates (RFC 2136) sent straight to the zone's primary server
 * (BIND, Knot, PowerDNS...), signed with TSIG (RFC 8945) when a key is configured.
 */
import Crypto from 'node:crypto';
import Net from 'node:net';

import type { DnsConfig } from '../../../../../lib/config.ts';
import type { DnsProvider } from '../dns-providers.ts';
import {
    decodeAddress,
    decodeMessage,
    type DecodedMessage,
    encodeAddress,
    encodeMessage,
    type Message,
    normalizeName,
    OPCODE,
    RCODE_NOERROR,
    RCODE_NXDOMAIN,
    RECORD_CLASS,
    RECORD_TYPE,
    rcodeName,
    type ResourceRecord,
} from '../wire/dns-message.ts';
import { isTsigAlgorithm, responseSignatureProblem, signMessage, type TsigKey } from '../wire/tsig.ts';
import { type DnsServer, describeServer, exchange, parseServer } from '../wire/transport.ts';

const ADDRESS_TYPES = [RECORD_TYPE.A, RECORD_TYPE.AAAA] as const;
const LABEL = /^(?:\*|[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)$/;

export interface Rfc2136Settings {
    server: DnsServer;
    zone: string;
    key: TsigKey | undefined;
}

/** An update the server did not apply; `rcode` is the RCODE's name, `tsigError` the TSIG problem if any. */
export class DnsUpdateError extends Error {
    constructor(
        message: string,
        readonly rcode: string,
        readonly tsigError?: string,
    ) {
        super(message);
        this.name = new.target.name;
    }
}

function tsigKey(config: DnsConfig): TsigKey | undefined {
    if (!config.tsigKeyName && !config.tsigSecret) {
        return undefined;
    }
    if (!config.tsigKeyName || !config.tsigSecret) {
        throw new Error('DNS provider rfc2136: a TSIG key needs both DNS_TSIG_KEY_NAME and DNS_TSIG_SECRET');
    }
    if (!isTsigAlgorithm(config.tsigAlgorithm)) {
        throw new Error(`DNS provider rfc2136: unsupported TSIG algorithm "${config.tsigAlgorithm}"`);
    }
    const secret = Buffer.from(config.tsigSecret, 'base64');
    if (secret.length === 0) {
        throw new Error('DNS provider rfc2136: DNS_TSIG_SECRET is not a base64 key');
    }
    return { name: config.tsigKeyName, algorithm: config.tsigAlgorithm, secret };
}

export function rfc2136Settings(config: DnsConfig): Rfc2136Settings {
    if (!config.server || !config.zone) {
        throw new Error('DNS provider rfc2136 needs DNS_SERVER (host:port of the primary server) and DNS_ZONE');
    }
    return { server: parseServer(config.server), zone: normalizeName(config.zone), key: tsigKey(config) };
}

export default function createRfc2136Provider(config: DnsConfig): DnsProvider {
    return new Rfc2136Provider(rfc2136Settings(config));
}

export class Rfc2136Provider implements DnsProvider {
    readonly name = 'rfc2136';

    constructor(private readonly settings: Rfc2136Settings) {}

    async setAddress(fqdn: string, address: string | readonly string[], ttl: number): Promise<void> {
        const name = this.nameInZone(fqdn);
        const addresses = typeof address === 'string' ? [address] : address;
        if (addresses.length === 0) {
            throw new Error(`no address to point ${fqdn} at`);
        }
        const notAddress = addresses.find((candidate) => !Net.isIP(candidate));
        if (notAddress !== undefined) {
            throw new Error(`"${notAddress}" is not an IPv4 or IPv6 address`);
        }
        if (!Number.isInteger(ttl) || ttl < 0 || ttl > 0x7fffffff) {
            throw new Error(`${ttl} is not a DNS TTL`);
        }
        const records = addresses.map((one) => {
            const type = Net.isIPv4(one) ? RECORD_TYPE.A : RECORD_TYPE.AAAA;
            return { name, type, class: RECORD_CLASS.IN, ttl, data: encodeAddress(one) };
        });
        await this.update(name, [...deleteAddresses(name), ...records]);
    }

    async removeAddress(fqdn: string): Promise<void> {
        const name = this.nameInZone(fqdn);
        await this.update(name, deleteAddresses(name));
    }

    async lookupAddress(fqdn: string): Promise<string[]> {
        const name = this.nameInZone(fqdn);
        const answers = await Promise.all(ADDRESS_TYPES.map((type) => this.query(name, type)));
        return answers.flat();
    }

    /** Sends an UPDATE of the zone whose update section is `records`; throws unless the server applied it. */
    async update(name: string, records: ResourceRecord[]): Promise<void> {
        const request: Message = {
            id: Crypto.randomInt(0x10000),
            opcode: OPCODE.UPDATE,
            questions: [{ name: this.settings.zone, type: RECORD_TYPE.SOA, class: RECORD_CLASS.IN }],
            answers: [],
            authorities: records,
            additionals: [],
        };
        const response = await this.send(request);
        if (response.rcode !== RCODE_NOERROR || response.signatureProblem) {
            const rcode = rcodeName(response.rcode);
            const detail = response.signatureProblem ? ` (${response.signatureProblem})` : '';
            throw new DnsUpdateError(
                `DNS update of ${name} in zone ${this.settings.zone} at ${describeServer(this.settings.server)} failed: ${rcode}${detail}`,
                rcode,
                response.signatureProblem,
            );
        }
    }

    private async query(name: string, type: number): Promise<string[]> {
        const request: Message = {
            id: Crypto.randomInt(0x10000),
            opcode: OPCODE.QUERY,
            questions: [{ name, type, class: RECORD_CLASS.IN }],
            answers: [],
            authorities: [],
            additionals: [],
        };
        const { response } = await exchange(this.settings.server, encodeMessage(request));
        const decoded = decodeMessage(response);
        if (decoded.rcode === RCODE_NXDOMAIN) {
            return [];
        }
        if (decoded.rcode !== RCODE_NOERROR) {
            throw new Error(`DNS query for ${name} at ${describeServer(this.settings.server)} failed: ${rcodeName(decoded.rcode)}`);
        }
        return decoded.answers
            .filter((record) => record.type === type && normalizeName(record.name) === name)
            .map((record) => decodeAddress(record.data));
    }

    private async send(request: Message): Promise<DecodedMessage & { signatureProblem?: string }> {
        const encoded = encodeMessage(request);
        const { key } = this.settings;
        const { signed, mac } = key ? signMessage(encoded, key) : { signed: encoded, mac: undefined };
        const { response } = await exchange(this.settings.server, signed);
        const decoded = decodeMessage(response);
        if (!decoded.isResponse || decoded.opcode !== request.opcode) {
            throw new Error(`DNS server ${describeServer(this.settings.server)} sent something that is not an answer to the update`);
        }
        const signatureProblem = key && mac ? responseSignatureProblem(response, decoded, mac, key) : undefined;
        return { ...decoded, signatureProblem };
    }

    /** The name in canonical form, checked before anything is sent: a valid host name inside the zone. */
    private nameInZone(fqdn: string): string {
        const name = normalizeName(fqdn);
        const { zone } = this.settings;
        if (name !== zone && !name.endsWith(`.${zone}`)) {
            throw new Error(`${fqdn} is outside the DNS zone ${zone}; refusing to update it`);
        }
        if (name.length > 253 || !name.split('.').every((label) => LABEL.test(label))) {
            throw new Error(`"${fqdn}" is not a valid DNS name`);
        }
        return name;
    }
}

/** RFC 2136 2.5.2: class ANY, TTL 0 and no data deletes the whole RRset of that type. */
function deleteAddresses(name: string): ResourceRecord[] {
    return ADDRESS_TYPES.map((type) => ({ name, type, class: RECORD_CLASS.ANY, ttl: 0, data: Buffer.alloc(0) }));
}
