import Dns from 'node:dns';
import Http from 'node:http';
import Https from 'node:https';
import Net from 'node:net';

import type { CustomFetch } from 'openid-client';

import { type AddressKind, addressKind, guardedLookup, parseIpAddress } from '../../../../lib/addresses.ts';
import { headersOf } from '../../../../lib/http-headers.ts';

/** Discovery documents and key sets are small; a provider that sends more is not one. */
const MAX_BODY_BYTES = 1024 * 1024;
/** Statuses whose Response must have no body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A provider address the rule refuses. */
export class ProviderAddressError extends Error {
    constructor(hostName: string, address: string) {
        super(`the identity provider's address is not allowed: ${hostName} (${address})`);
        this.name = 'ProviderAddressError';
    }
}

/**
 * The kinds of address the identity provider may have: public ones, and the kind of the deploy manager's own
 * public URL (loopback when it is served on loopback, a private network when it is served there), never
 * unroutable ones. So an administrator cannot make the server probe its own ports or its network.
 */
export async function allowedProviderKinds(publicUrl: string): Promise<Set<AddressKind>> {
    const kinds = new Set<AddressKind>(['external']);
    const hostName = new URL(publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = await Dns.promises.lookup(hostName, { all: true }).catch(() => []);
    for (const { address } of addresses) {
        const ip = parseIpAddress(address);
        const kind = ip && addressKind(ip);
        if (kind && kind !== 'not-global') {
            kinds.add(kind);
        }
    }

    return kinds;
}

function allowedAddress(kinds: Set<AddressKind>, address: string): boolean {
    const ip = parseIpAddress(address);
    return ip !== undefined && kinds.has(addressKind(ip));
}

async function bodyBytes(body: unknown): Promise<Buffer | undefined> {
    if (body === undefined || body === null) {
        return undefined;
    }

    return Buffer.from(await new Response(body as BodyInit).arrayBuffer());
}

function readResponse(response: Http.IncomingMessage, resolve: (response: Response) => void, reject: (error: Error) => void): void {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
            response.destroy(new Error(`the identity provider's answer is larger than ${MAX_BODY_BYTES} bytes`));
            return;
        }

        chunks.push(chunk);
    });
    response.on('error', reject);
    response.on('end', () => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 599) {
            reject(new Error(`the identity provider answered with status ${status}`));
            return;
        }

        const body = NULL_BODY_STATUSES.has(status) ? null : Buffer.concat(chunks);
        resolve(new Response(body, { status, statusText: response.statusMessage, headers: headersOf(response.headers) }));
    });
}

/**
 * openid-client's fetch, over node:http(s) with a lookup that refuses the addresses `kinds` leaves out: every
 * request to the provider (discovery, keys, tokens, user info) goes through it. Redirects are not followed
 * (openid-client asks for none).
 */
export function guardedProviderFetch(kinds: Set<AddressKind>): CustomFetch {
    const lookup = guardedLookup(
        (_hostName, address) => allowedAddress(kinds, address),
        (hostName, address) => new ProviderAddressError(hostName, address),
    );
    return async (url, options) => {
        const target = new URL(url);
        const literal = target.hostname.replace(/^\[(.*)\]$/, '$1');
        if (Net.isIP(literal) !== 0 && !allowedAddress(kinds, literal)) {
            throw new ProviderAddressError(literal, literal);
        }

        const body = await bodyBytes(options.body);
        const send = target.protocol === 'https:' ? Https.request : Http.request;
        return await new Promise<Response>((resolve, reject) => {
            const request = send(target, {
                method: options.method,
                headers: options.headers,
                signal: options.signal,
                lookup,
                agent: false,
            });
            request.on('error', reject);
            request.on('response', (response) => readResponse(response, resolve, reject));
            request.end(body);
        });
    };
}
