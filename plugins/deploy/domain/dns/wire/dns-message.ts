/**
 * The DNS wire format (RFC 1035) as far as dynamic updates (RFC 2136) and address look-ups need it.
 * Names are written uncompressed (always valid, and what TSIG signs); compression pointers are followed on read.
 */
import Net from 'node:net';

export const RECORD_TYPE = { A: 1, NS: 2, SOA: 6, TXT: 16, AAAA: 28, TSIG: 250, ANY: 255 } as const;
export const RECORD_CLASS = { IN: 1, NONE: 254, ANY: 255 } as const;
export const OPCODE = { QUERY: 0, UPDATE: 5 } as const;
export const RCODE_NOERROR = 0;
export const RCODE_NXDOMAIN = 3;

const FLAG_RESPONSE = 0x8000;
const FLAG_TRUNCATED = 0x0200;
const HEADER_BYTES = 12;
const MAX_LABEL_BYTES = 63;
const MAX_NAME_BYTES = 255;
const POINTER_MASK = 0xc0;

/** RFC 1035, 2136 and (16 and up, carried in the TSIG record) 8945. */
const RCODE_NAMES: Record<number, string> = {
    0: 'NOERROR',
    1: 'FORMERR',
    2: 'SERVFAIL',
    3: 'NXDOMAIN',
    4: 'NOTIMP',
    5: 'REFUSED',
    6: 'YXDOMAIN',
    7: 'YXRRSET',
    8: 'NXRRSET',
    9: 'NOTAUTH',
    10: 'NOTZONE',
    16: 'BADSIG',
    17: 'BADKEY',
    18: 'BADTIME',
    22: 'BADTRUNC',
};

export function rcodeName(code: number): string {
    return RCODE_NAMES[code] ?? `RCODE${code}`;
}

export interface Question {
    name: string;
    type: number;
    class: number;
}

export interface ResourceRecord {
    name: string;
    type: number;
    class: number;
    ttl: number;
    data: Buffer;
}

export interface MessageHeader {
    id: number;
    opcode: number;
    /** Recursion desired; for queries only. */
    recursionDesired?: boolean;
}

/** The four sections under RFC 2136's names for an UPDATE: zone, prerequisite, update, additional. */
export interface Message extends MessageHeader {
    questions: Question[];
    answers: ResourceRecord[];
    authorities: ResourceRecord[];
    additionals: ResourceRecord[];
}

export interface DecodedRecord extends ResourceRecord {
    /** Where the record starts in the message (TSIG verification signs what comes before it). */
    offset: number;
}

export interface DecodedMessage {
    id: number;
    opcode: number;
    isResponse: boolean;
    truncated: boolean;
    rcode: number;
    questions: Question[];
    answers: DecodedRecord[];
    authorities: DecodedRecord[];
    additionals: DecodedRecord[];
}

/** Lower case, without the trailing dot: the form names are compared in. */
export function normalizeName(name: string): string {
    return name.trim().replace(/\.$/, '').toLowerCase();
}

export function encodeName(name: string): Buffer {
    const labels = normalizeName(name) === '' ? [] : name.replace(/\.$/, '').split('.');
    const parts: Buffer[] = [];
    for (const label of labels) {
        const bytes = Buffer.from(label, 'utf8');
        if (bytes.length === 0 || bytes.length > MAX_LABEL_BYTES) {
            throw new Error(`"${name}" is not a valid DNS name: each label needs 1 to ${MAX_LABEL_BYTES} bytes`);
        }
        parts.push(Buffer.from([bytes.length]), bytes);
    }
    parts.push(Buffer.from([0]));
    const encoded = Buffer.concat(parts);
    if (encoded.length > MAX_NAME_BYTES) {
        throw new Error(`"${name}" is not a valid DNS name: longer than ${MAX_NAME_BYTES} bytes`);
    }
    return encoded;
}

function uint16(value: number): Buffer {
    const buffer = Buffer.alloc(2);
    buffer.writeUInt16BE(value);
    return buffer;
}

export function encodeRecord(record: ResourceRecord): Buffer {
    const fixed = Buffer.alloc(10);
    fixed.writeUInt16BE(record.type, 0);
    fixed.writeUInt16BE(record.class, 2);
    fixed.writeUInt32BE(record.ttl, 4);
    fixed.writeUInt16BE(record.data.length, 8);
    return Buffer.concat([encodeName(record.name), fixed, record.data]);
}

function encodeQuestion(question: Question): Buffer {
    return Buffer.concat([encodeName(question.name), uint16(question.type), uint16(question.class)]);
}

export function encodeMessage(message: Message): Buffer {
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt16BE(message.id, 0);
    header.writeUInt16BE((message.opcode << 11) | (message.recursionDesired ? 0x0100 : 0), 2);
    header.writeUInt16BE(message.questions.length, 4);
    header.writeUInt16BE(message.answers.length, 6);
    header.writeUInt16BE(message.authorities.length, 8);
    header.writeUInt16BE(message.additionals.length, 10);
    return Buffer.concat([
        header,
        ...message.questions.map(encodeQuestion),
        ...[...message.answers, ...message.authorities, ...message.additionals].map(encodeRecord),
    ]);
}

export function isTruncated(message: Buffer): boolean {
    return message.length >= HEADER_BYTES && (message.readUInt16BE(2) & FLAG_TRUNCATED) !== 0;
}

/** Reads a possibly compressed name; `end` is where the name ends at `offset` (not where a pointer led). */
export function decodeName(message: Buffer, offset: number): { name: string; end: number } {
    const labels: string[] = [];
    let position = offset;
    let end: number | undefined;
    for (let jumps = 0; ;) {
        const length = byteAt(message, position);
        if ((length & POINTER_MASK) === POINTER_MASK) {
            end ??= position + 2;
            if (++jumps > 64) {
                throw new Error('malformed DNS message: compression pointer loop');
            }
            position = ((length & ~POINTER_MASK) << 8) | byteAt(message, position + 1);
            continue;
        }
        if (length === 0) {
            return { name: labels.join('.'), end: end ?? position + 1 };
        }
        if (position + 1 + length > message.length) {
            throw new Error('malformed DNS message: label runs past the end');
        }
        labels.push(message.toString('utf8', position + 1, position + 1 + length));
        position += 1 + length;
    }
}

function byteAt(message: Buffer, position: number): number {
    const value = message[position];
    if (value === undefined) {
        throw new Error('malformed DNS message: truncated');
    }
    return value;
}

function decodeRecord(message: Buffer, offset: number): { record: DecodedRecord; end: number } {
    const { name, end: nameEnd } = decodeName(message, offset);
    if (nameEnd + 10 > message.length) {
        throw new Error('malformed DNS message: record header runs past the end');
    }
    const dataLength = message.readUInt16BE(nameEnd + 8);
    const dataStart = nameEnd + 10;
    if (dataStart + dataLength > message.length) {
        throw new Error('malformed DNS message: record data runs past the end');
    }
    const record = {
        name,
        type: message.readUInt16BE(nameEnd),
        class: message.readUInt16BE(nameEnd + 2),
        ttl: message.readUInt32BE(nameEnd + 4),
        data: message.subarray(dataStart, dataStart + dataLength),
        offset,
    };
    return { record, end: dataStart + dataLength };
}

export function decodeMessage(message: Buffer): DecodedMessage {
    if (message.length < HEADER_BYTES) {
        throw new Error('malformed DNS message: shorter than its header');
    }
    const flags = message.readUInt16BE(2);
    let offset = HEADER_BYTES;
    const questions: Question[] = [];
    for (let index = 0; index < message.readUInt16BE(4); index++) {
        const { name, end } = decodeName(message, offset);
        if (end + 4 > message.length) {
            throw new Error('malformed DNS message: question runs past the end');
        }
        questions.push({ name, type: message.readUInt16BE(end), class: message.readUInt16BE(end + 2) });
        offset = end + 4;
    }
    const readSection = (count: number): DecodedRecord[] => {
        const records: DecodedRecord[] = [];
        for (let index = 0; index < count; index++) {
            const { record, end } = decodeRecord(message, offset);
            records.push(record);
            offset = end;
        }
        return records;
    };
    const answers = readSection(message.readUInt16BE(6));
    const authorities = readSection(message.readUInt16BE(8));
    const additionals = readSection(message.readUInt16BE(10));
    return {
        id: message.readUInt16BE(0),
        opcode: (flags >> 11) & 0x0f,
        isResponse: (flags & FLAG_RESPONSE) !== 0,
        truncated: (flags & FLAG_TRUNCATED) !== 0,
        rcode: flags & 0x0f,
        questions,
        answers,
        authorities,
        additionals,
    };
}

/** The 4 or 16 bytes of an address record's data. */
export function encodeAddress(address: string): Buffer {
    const family = Net.isIP(address);
    if (family === 4) {
        return Buffer.from(address.split('.').map(Number));
    }
    if (family === 6) {
        return Buffer.concat(ipv6Groups(address).map(uint16));
    }
    throw new Error(`"${address}" is not an IPv4 or IPv6 address`);
}

function ipv6Groups(address: string): number[] {
    let text = address.toLowerCase();
    const embeddedIpv4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
    if (embeddedIpv4) {
        const [a = 0, b = 0, c = 0, d = 0] = embeddedIpv4.split('.').map(Number);
        text = `${text.slice(0, -embeddedIpv4.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    }
    const [head = '', tail] = text.split('::');
    const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
    const before = parse(head);
    const after = tail === undefined ? [] : parse(tail);
    return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/** The address in an A or AAAA record's data, IPv6 in its canonical short form (RFC 5952). */
export function decodeAddress(data: Buffer): string {
    if (data.length === 4) {
        return [...data].join('.');
    }
    if (data.length === 16) {
        const groups = Array.from({ length: 8 }, (_, index) => data.readUInt16BE(index * 2).toString(16));
        return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
    }
    throw new Error(`an address record holds ${data.length} bytes`);
}
