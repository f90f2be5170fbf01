/**
 * Sends one DNS message and waits for its answer: over UDP, or over TCP (RFC 7766) when the message is
 * too large for a plain UDP datagram or the UDP answer comes back truncated.
 */
import Dgram from 'node:dgram';
import Dns from 'node:dns';
import Net from 'node:net';

import { isTruncated } from './dns-message.ts';

export interface DnsServer {
    host: string;
    port: number;
}

/** Without EDNS a DNS message over UDP is at most 512 bytes (RFC 1035 4.2.1). */
const MAX_UDP_BYTES = 512;
const UDP_ATTEMPTS = 3;
const UDP_ATTEMPT_TIMEOUT_MS = 2_000;
const TCP_TIMEOUT_MS = 10_000;
const DEFAULT_PORT = 53;

/** "host", "host:port", "[v6]:port" or a bare IPv6 address. */
export function parseServer(text: string): DnsServer {
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
    const hostAndPort = /^([^:]+):(\d+)$/.exec(text);
    const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : hostAndPort ? [hostAndPort[1], hostAndPort[2]] : [text, undefined];
    const portNumber = port === undefined ? DEFAULT_PORT : Number(port);
    if (!host || !Number.isInteger(portNumber) || portNumber < 1 || portNumber > 65535) {
        throw new Error(`"${text}" is not a DNS server (host or host:port)`);
    }
    return { host, port: portNumber };
}

export function describeServer(server: DnsServer): string {
    return Net.isIPv6(server.host) ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`;
}

async function resolveHost(host: string): Promise<{ address: string; family: 4 | 6 }> {
    const family = Net.isIP(host);
    if (family === 4 || family === 6) {
        return { address: host, family };
    }
    const { address, family: resolvedFamily } = await Dns.promises.lookup(host);
    return { address, family: resolvedFamily === 6 ? 6 : 4 };
}

function sameId(request: Buffer, response: Buffer): boolean {
    return response.length >= 2 && response.readUInt16BE(0) === request.readUInt16BE(0);
}

async function exchangeUdp(server: DnsServer, request: Buffer): Promise<Buffer> {
    const { address, family } = await resolveHost(server.host);
    const socket = Dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    try {
        await new Promise<void>((resolve, reject) => {
            socket.once('error', reject);
            socket.connect(server.port, address, () => resolve());
        });
        for (let attempt = 1; attempt <= UDP_ATTEMPTS; attempt++) {
            const response = await sendAndWait(socket, request);
            if (response) {
                return response;
            }
        }
        throw new Error(`DNS server ${describeServer(server)} did not answer over UDP (${UDP_ATTEMPTS} tries)`);
    } finally {
        socket.close();
    }
}

/** One datagram out, the first answer with the request's ID back; undefined on time-out. */
function sendAndWait(socket: Dgram.Socket, request: Buffer): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
        const done = (outcome: () => void) => {
            clearTimeout(timer);
            socket.off('message', onMessage);
            socket.off('error', onError);
            outcome();
        };
        const onMessage = (message: Buffer) => {
            if (sameId(request, message)) {
                done(() => resolve(message));
            }
        };
        const onError = (error: Error) => done(() => reject(error));
        const timer = setTimeout(() => done(() => resolve(undefined)), UDP_ATTEMPT_TIMEOUT_MS);
        socket.on('message', onMessage);
        socket.on('error', onError);
        socket.send(request, (error) => error && onError(error));
    });
}

function exchangeTcp(server: DnsServer, request: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
        const socket = Net.connect({ host: server.host, port: server.port });
        let received = Buffer.alloc(0);
        const fail = (error: Error) => {
            socket.destroy();
            reject(error);
        };
        socket.setTimeout(TCP_TIMEOUT_MS, () => fail(new Error(`DNS server ${describeServer(server)} did not answer over TCP`)));
        socket.on('error', fail);
        socket.on('connect', () => {
            const length = Buffer.alloc(2);
            length.writeUInt16BE(request.length);
            socket.write(Buffer.concat([length, request]));
        });
        socket.on('data', (chunk: Buffer) => {
            received = Buffer.concat([received, chunk]);
            const expected = received.length >= 2 ? received.readUInt16BE(0) : Infinity;
            if (received.length >= 2 + expected) {
                socket.end();
                const response = received.subarray(2, 2 + expected);
                if (sameId(request, response)) {
                    resolve(response);
                } else {
                    reject(new Error(`DNS server ${describeServer(server)} answered another message over TCP`));
                }
            }
        });
        socket.on('end', () => fail(new Error(`DNS server ${describeServer(server)} closed the TCP connection without an answer`)));
    });
}

/** The server's answer to the request (matched by message ID); `transport` tells how it went. */
export async function exchange(server: DnsServer, request: Buffer): Promise<{ response: Buffer; transport: 'udp' | 'tcp' }> {
    try {
        if (request.length <= MAX_UDP_BYTES) {
            const response = await exchangeUdp(server, request);
            if (!isTruncated(response)) {
                return { response, transport: 'udp' };
            }
        }
        return { response: await exchangeTcp(server, request), transport: 'tcp' };
    } catch (error) {
        const { message, code } = error as NodeJS.ErrnoException;
        throw message.startsWith('DNS server')
            ? error
            : new Error(`DNS server ${describeServer(server)} cannot be reached: ${code ?? message}`);
    }
}
