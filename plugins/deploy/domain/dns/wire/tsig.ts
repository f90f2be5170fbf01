/**
 * TSIG (RFC 8945): signs a request with a shared HMAC key and checks the server's signed answer.
 * No maintained npm library does TSIG, and it is short: an HMAC over the message and a few fields.
 */
import Crypto from 'node:crypto';

import {
    decodeName,
    type DecodedMessage,
    encodeName,
    encodeRecord,
    normalizeName,
    RECORD_CLASS,
    RECORD_TYPE,
    rcodeName,
} from './dns-message.ts';

export const TSIG_ALGORITHMS = { 'hmac-sha1': 'sha1', 'hmac-sha256': 'sha256', 'hmac-sha512': 'sha512' } as const;
export type TsigAlgorithm = keyof typeof TSIG_ALGORITHMS;

export interface TsigKey {
    name: string;
    algorithm: TsigAlgorithm;
    secret: Buffer;
}

/** RFC 8945 recommends 300 seconds of allowed clock difference. */
const FUDGE_SECONDS = 300;
const TSIG_ERROR_NONE = 0;
const TSIG_ERROR_BADTIME = 18;

interface TsigFields {
    algorithm: string;
    timeSigned: number;
    fudge: number;
    mac: Buffer;
    originalId: number;
    error: number;
    otherData: Buffer;
}

export function isTsigAlgorithm(name: string): name is TsigAlgorithm {
    return Object.hasOwn(TSIG_ALGORITHMS, name);
}

function uint48(value: number): Buffer {
    const buffer = Buffer.alloc(6);
    buffer.writeUIntBE(value, 0, 6);
    return buffer;
}

function uint16(value: number): Buffer {
    const buffer = Buffer.alloc(2);
    buffer.writeUInt16BE(value);
    return buffer;
}

/** The "TSIG variables" (RFC 8945 4.3.3): what the MAC covers besides the message, names in canonical form. */
function tsigVariables(keyName: string, fields: Omit<TsigFields, 'mac' | 'originalId'>): Buffer {
    const classAndTtl = Buffer.alloc(6);
    classAndTtl.writeUInt16BE(RECORD_CLASS.ANY, 0);
    return Buffer.concat([
        encodeName(normalizeName(keyName)),
        classAndTtl,
        encodeName(normalizeName(fields.algorithm)),
        uint48(fields.timeSigned),
        uint16(fields.fudge),
        uint16(fields.error),
        uint16(fields.otherData.length),
        fields.otherData,
    ]);
}

function hmac(key: TsigKey, ...parts: Buffer[]): Buffer {
    const mac = Crypto.createHmac(TSIG_ALGORITHMS[key.algorithm], key.secret);
    parts.forEach((part) => mac.update(part));
    return mac.digest();
}

function encodeTsigData(fields: TsigFields): Buffer {
    return Buffer.concat([
        encodeName(normalizeName(fields.algorithm)),
        uint48(fields.timeSigned),
        uint16(fields.fudge),
        uint16(fields.mac.length),
        fields.mac,
        uint16(fields.originalId),
        uint16(fields.error),
        uint16(fields.otherData.length),
        fields.otherData,
    ]);
}

function decodeTsigData(data: Buffer): TsigFields {
    const { name: algorithm, end: algorithmEnd } = decodeName(data, 0);
    const macLength = data.readUInt16BE(algorithmEnd + 8);
    const afterMac = algorithmEnd + 10 + macLength;
    return {
        algorithm,
        timeSigned: data.readUIntBE(algorithmEnd, 6),
        fudge: data.readUInt16BE(algorithmEnd + 6),
        mac: data.subarray(algorithmEnd + 10, afterMac),
        originalId: data.readUInt16BE(afterMac),
        error: data.readUInt16BE(afterMac + 2),
        otherData: data.subarray(afterMac + 6, afterMac + 6 + data.readUInt16BE(afterMac + 4)),
    };
}

/** Appends a TSIG record to an encoded message; the MAC is kept to check the answer with. */
export function signMessage(message: Buffer, key: TsigKey, now = Date.now()): { signed: Buffer; mac: Buffer } {
    const fields = {
        algorithm: key.algorithm,
        timeSigned: Math.floor(now / 1000),
        fudge: FUDGE_SECONDS,
        error: TSIG_ERROR_NONE,
        otherData: Buffer.alloc(0),
    };
    const mac = hmac(key, message, tsigVariables(key.name, fields));
    const record = encodeRecord({
        name: normalizeName(key.name),
        type: RECORD_TYPE.TSIG,
        class: RECORD_CLASS.ANY,
        ttl: 0,
        data: encodeTsigData({ ...fields, mac, originalId: message.readUInt16BE(0) }),
    });
    const signed = Buffer.concat([message, record]);
    signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
    return { signed, mac };
}

/**
 * Checks the TSIG record that ends a response to a signed request. Returns undefined when the answer
 * is signed with the key and in time, else what is wrong: the server's TSIG error (BADSIG, BADKEY, ...,
 * sent unsigned) or this side's finding (unsigned, MAC mismatch, BADTIME).
 */
export function responseSignatureProblem(
    response: Buffer,
    decoded: DecodedMessage,
    requestMac: Buffer,
    key: TsigKey,
    now = Date.now(),
): string | undefined {
    const record = decoded.additionals.at(-1);
    if (record?.type !== RECORD_TYPE.TSIG) {
        return 'the response is not signed';
    }
    let fields: TsigFields;
    try {
        fields = decodeTsigData(record.data);
    } catch {
        return 'the response TSIG record is malformed';
    }
    if (fields.error !== TSIG_ERROR_NONE) {
        return `TSIG ${rcodeName(fields.error)}`;
    }
    if (normalizeName(record.name) !== normalizeName(key.name) || normalizeName(fields.algorithm) !== key.algorithm) {
        return `the response is signed with another key (${record.name}, ${fields.algorithm})`;
    }
    const unsigned = Buffer.from(response.subarray(0, record.offset));
    unsigned.writeUInt16BE(fields.originalId, 0);
    unsigned.writeUInt16BE(decoded.additionals.length - 1, 10);
    const expected = hmac(key, uint16(requestMac.length), requestMac, unsigned, tsigVariables(record.name, fields));
    if (fields.mac.length !== expected.length || !Crypto.timingSafeEqual(fields.mac, expected)) {
        return 'the response TSIG does not verify (BADSIG)';
    }
    if (Math.abs(Math.floor(now / 1000) - fields.timeSigned) > fields.fudge) {
        return `the response TSIG time is off by more than ${fields.fudge} s (${rcodeName(TSIG_ERROR_BADTIME)})`;
    }
    return undefined;
}
