/**
 * Talking to Docker Hub and registries: one request with a time limit and a bounded body. An upstream that is down
 * or answers nonsense is an UpstreamFailure (a 502 with its reason); one that asks us to slow down is lib's
 * TooManyRequestsError (a 429 with Retry-After).
 */
import { TooManyRequestsError } from '../../../../lib/errors.ts';
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
}

/** What `what` means in messages: `Docker Hub's search`, `the registry ghcr.io`. */
export async function requestUpstream(what: string, url: string, request: UpstreamRequest): Promise<UpstreamResponse> {
    let response: Response;
    try {
        response = await fetch(url, {
            method: request.method ?? 'GET',
            headers: { 'user-agent': USER_AGENT, ...request.headers },
            redirect: 'follow',
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
    } catch (error) {
        throw new UpstreamFailure(`${what} is unreachable: ${networkReason(error)}`);
    }

    if (request.method === 'HEAD') {
        return { status: response.status, headers: response.headers, url: response.url || url, body: Buffer.alloc(0) };
    }

    const body = await readBounded(what, response, request.maxBytes);
    return { status: response.status, headers: response.headers, url: response.url || url, body };
}

function networkReason(error: unknown): string {
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
    }

    const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
    return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

async function readBounded(what: string, response: Response, maxBytes: number): Promise<Buffer> {
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > maxBytes) {
        await response.body?.cancel();
        throw new UpstreamFailure(`${what} answered ${declared} bytes, more than the ${maxBytes} expected`);
    }

    if (!response.body) {
        return Buffer.alloc(0);
    }

    const chunks: Buffer[] = [];
    let length = 0;
    try {
        for await (const chunk of response.body) {
            length += (chunk as Uint8Array).length;
            if (length > maxBytes) {
                await response.body.cancel().catch(() => undefined);
                throw new UpstreamFailure(`${what} answered more than the ${maxBytes} bytes expected`);
            }

            chunks.push(Buffer.from(chunk as Uint8Array));
        }
    } catch (error) {
        if (error instanceof UpstreamFailure) {
            throw error;
        }

        throw new UpstreamFailure(`${what} broke off its answer: ${networkReason(error)}`);
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

/** The registry's own words from its `{errors: [{code, message}]}` body, when it sent them. */
export function registryErrorText(body: Buffer): string {
    try {
        const parsed = JSON.parse(body.toString('utf8')) as { errors?: Array<{ code?: unknown; message?: unknown }> };
        const first = parsed.errors?.[0];
        if (first) {
            const text = [first.code, first.message].filter((part) => typeof part === 'string' && part !== '').join(': ');
            return text.slice(0, MAX_QUOTED_ERROR);
        }
    } catch {
        // not JSON: nothing to quote
    }

    return '';
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
