/**
 * Talking to Docker Hub and registries: one request with a time limit and a bounded body, to a place the address
 * policy allows (checked on every address a name resolves to, as the connection is made, and at every redirect).
 * An upstream that is down, unreachable or not allowed is one UpstreamFailure with the same words whatever the
 * cause, so that the answers tell nothing about the ports and hosts around the server; one that answers nonsense
 * is an UpstreamFailure with its reason (a 502); one that asks us to slow down is lib's TooManyRequestsError (a 429
 * with Retry-After).
 */
import Http from 'node:http';
import Https from 'node:https';
import Net from 'node:net';

import { guardedLookup } from '../../../../lib/addresses.ts';
import { TooManyRequestsError } from '../../../../lib/errors.ts';
import { headersOf } from '../../../../lib/http-headers.ts';
import { BoundedCache } from './bounded-cache.ts';

/** The upstream is down, unreachable, or answered something that cannot be used: a 502 with this reason. */
export class UpstreamFailure extends Error {
    constructor(message: string) {
        super(message);
        this.name = new.target.name;
    }
}

export const REQUEST_TIMEOUT_MS = 15_000;
const DEFAULT_RETRY_SECONDS = 60;
const MAX_RETRY_SECONDS = 6 * 3600;
const USER_AGENT = 'Gatehouse (image search)';
const MAX_QUOTED_ERROR = 300;
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Whether a request may go to `address`, which `hostName` (as the URL names it) resolved to, on `port`. */
export type ReachPolicy = (hostName: string, port: number, address: string) => boolean;

export interface UpstreamResponse {
    status: number;
    headers: Headers;
    /** The final URL, after redirects. */
    url: string;
    body: Buffer;
}

export interface UpstreamRequest {
    method?: 'GET' | 'HEAD';
    headers?: Record<string, string>;
    /** Bodies longer than this fail the request rather than fill the memory (a HEAD's is not read). */
    maxBytes: number;
    /**
     * Whether a redirect may lead to another host or port: only a registry's blob, which the distribution spec
     * lets a registry hand over to its storage. Every other request follows redirects on its own origin only.
     */
    crossOrigin?: boolean;
}

/** The one answer for an upstream that cannot be asked, whatever the reason (refused, closed, unreachable, slow). */
export function unreachable(what: string): UpstreamFailure {
    return new UpstreamFailure(`${what} is unreachable (it does not answer, or HUB_ALLOWED_HOST_LIST does not allow it)`);
}

class NotAllowed extends Error {}

export const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');
export const portOf = (url: URL) => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/** Where a redirect leads, when it may be followed: never to another scheme than HTTP(S), nor from HTTPS to HTTP. */
function redirectTarget(from: URL, location: string | null, crossOrigin: boolean): URL | undefined {
    let target: URL;
    try {
        target = new URL(location ?? '', from);
    } catch {
        return undefined;
    }

    const downgrade = from.protocol === 'https:' && target.protocol !== 'https:';
    const allowed = target.origin === from.origin || (crossOrigin && !downgrade && target.protocol.startsWith('http'));
    return allowed ? target : undefined;
}

/** Requests to Docker Hub and registries, each checked against the address policy. */
export class Upstream {
    readonly #allows: ReachPolicy;
    readonly #agents = { http: new Http.Agent({ keepAlive: true }), https: new Https.Agent({ keepAlive: true }) };

    constructor(allows: ReachPolicy) {
        this.#allows = allows;
    }

    /** What `what` means in messages: `Docker Hub's search`, `the registry ghcr.io`. */
    async request(what: string, url: string, request: UpstreamRequest): Promise<UpstreamResponse> {
        const signal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
        let target = new URL(url);
        let headers = { 'user-agent': USER_AGENT, ...request.headers };
        for (let hop = 0; ; hop += 1) {
            const response = await this.#send(what, target, headers, request, signal);
            if (!REDIRECT_STATUSES.has(response.statusCode ?? 0)) {
                return await this.#answer(what, target, response, request);
            }

            response.destroy();
            const next = redirectTarget(target, response.headers.location ?? null, request.crossOrigin === true);
            if (next === undefined || hop >= MAX_REDIRECTS) {
                throw new UpstreamFailure(`${what} redirected its answer somewhere Gatehouse does not follow`);
            }

            if (next.origin !== target.origin) {
                // Credentials meant for the registry never go to its storage.
                const { authorization: _dropped, ...rest } = headers as Record<string, string>;
                headers = { 'user-agent': USER_AGENT, ...rest };
            }

            target = next;
        }
    }

    async #send(
        what: string,
        url: URL,
        headers: Record<string, string>,
        request: UpstreamRequest,
        signal: AbortSignal,
    ): Promise<Http.IncomingMessage> {
        const hostName = hostOf(url);
        const port = portOf(url);
        const allows = (_name: string, address: string) => this.#allows(hostName, port, address);
        if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (Net.isIP(hostName) !== 0 && !allows(hostName, hostName))) {
            throw unreachable(what);
        }

        const secure = url.protocol === 'https:';
        const send = secure ? Https.request : Http.request;
        return await new Promise((resolve, reject) => {
            const outgoing = send(url, {
                method: request.method ?? 'GET',
                headers,
                agent: secure ? this.#agents.https : this.#agents.http,
                lookup: guardedLookup(allows, () => new NotAllowed()),
                signal,
            });
            outgoing.on('error', () => reject(unreachable(what)));
            outgoing.on('response', resolve);
            outgoing.end();
        });
    }

    async #answer(what: string, url: URL, response: Http.IncomingMessage, request: UpstreamRequest): Promise<UpstreamResponse> {
        const answer = { status: response.statusCode ?? 0, headers: headersOf(response.headers), url: url.toString() };
        if (request.method === 'HEAD') {
            response.resume();
            return { ...answer, body: Buffer.alloc(0) };
        }

        return { ...answer, body: await readBounded(what, response, request.maxBytes) };
    }
}

async function readBounded(what: string, response: Http.IncomingMessage, maxBytes: number): Promise<Buffer> {
    const declared = Number(response.headers['content-length'] ?? NaN);
    if (declared > maxBytes) {
        response.destroy();
        throw new UpstreamFailure(`${what} answered ${declared} bytes, more than the ${maxBytes} expected`);
    }

    const chunks: Buffer[] = [];
    let length = 0;
    try {
        for await (const chunk of response) {
            length += (chunk as Buffer).length;
            if (length > maxBytes) {
                response.destroy();
                throw new UpstreamFailure(`${what} answered more than the ${maxBytes} bytes expected`);
            }

            chunks.push(chunk as Buffer);
        }
    } catch (error) {
        if (error instanceof UpstreamFailure) {
            throw error;
        }

        throw new UpstreamFailure(`${what} broke off its answer`);
    }

    return Buffer.concat(chunks);
}

/** JSON of the expected top-level kind, or an UpstreamFailure naming what was wrong. */
export function parseJsonObject(what: string, body: Buffer): Record<string, unknown> {
    let value: unknown;
    try {
        value = JSON.parse(body.toString('utf8'));
    } catch {
        throw new UpstreamFailure(`${what} answered something that is not JSON`);
    }

    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new UpstreamFailure(`${what} answered JSON that is not an object`);
    }

    return value as Record<string, unknown>;
}

/**
 * Seconds to wait before asking again: `Retry-After` (seconds or an HTTP date), else Hub's `X-Retry-After` or
 * `X-RateLimit-Reset` (Unix times), else a minute.
 */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number {
    const clamp = (seconds: number) => Math.min(MAX_RETRY_SECONDS, Math.max(1, Math.ceil(seconds)));
    const retryAfter = headers.get('retry-after');
    if (retryAfter !== null) {
        const seconds = /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) : (Date.parse(retryAfter) - now) / 1000;
        if (Number.isFinite(seconds)) {
            return clamp(seconds);
        }
    }

    for (const name of ['x-retry-after', 'x-ratelimit-reset']) {
        const at = Number(headers.get(name) ?? NaN);
        if (Number.isFinite(at) && at > 0) {
            return clamp(at - now / 1000);
        }
    }

    return DEFAULT_RETRY_SECONDS;
}

/** An error code of the distribution spec (`MANIFEST_UNKNOWN`, `DENIED`...): what a registry's error body holds. */
const REGISTRY_ERROR_CODE = /^[A-Z][A-Z_]{0,63}$/;

/**
 * The registry's own words from its `{errors: [{code, message}]}` body, when it sent them: only a body of that
 * shape, with a code as the spec spells them, is quoted, so that no other kind of answer is passed on.
 */
export function registryErrorText(body: Buffer): string {
    let first: { code?: unknown; message?: unknown } | undefined;
    try {
        first = (JSON.parse(body.toString('utf8')) as { errors?: Array<{ code?: unknown; message?: unknown }> }).errors?.[0];
    } catch {
        return ''; // not JSON: nothing to quote
    }

    if (typeof first?.code !== 'string' || !REGISTRY_ERROR_CODE.test(first.code)) {
        return '';
    }

    const message = typeof first.message === 'string' ? first.message.replace(/[^\x20-\x7e]/g, ' ').trim() : '';
    return (message === '' ? first.code : `${first.code}: ${message}`).slice(0, MAX_QUOTED_ERROR);
}

/**
 * Remembers, per upstream, until when it asked not to be asked again, and refuses at once meanwhile: a client
 * that keeps knocking after a 429 only lengthens the wait (Docker Hub's abuse limit counts every request).
 */
export class RateLimitMemory {
    readonly #until: BoundedCache<number>;
    readonly #now: () => number;

    constructor(now: () => number = Date.now) {
        this.#now = now;
        this.#until = new BoundedCache<number>({ maxWeight: 1000, now });
    }

    /** Throws the remembered 429 while it lasts. */
    check(key: string, what: string): void {
        const until = this.#until.get(key);
        if (until !== undefined) {
            const seconds = Math.max(1, Math.ceil((until - this.#now()) / 1000));
            throw new TooManyRequestsError(`${what} limits how often it is asked: try again in ${seconds} s`, seconds);
        }
    }

    /** The 429 to throw for this answer, remembered for later requests. */
    limited(key: string, what: string, headers: Headers): TooManyRequestsError {
        const seconds = retryAfterSeconds(headers, this.#now());
        this.#until.set(key, this.#now() + seconds * 1000, { ttlMs: seconds * 1000 });
        return new TooManyRequestsError(`${what} limits how often it is asked: try again in ${seconds} s`, seconds);
    }
}
