/** Posting a webhook: only to hosts the allow-list lets through, checked on every address a name resolves to. */
import Http from 'node:http';
import Https from 'node:https';
import Net from 'node:net';

import { guardedLookup } from './addresses.ts';
import type { WebhookConfig } from './config.ts';
import { type HostAllowList, parseAllowList } from './host-allow-list.ts';

const CONCURRENCY = 16;
const RESPONSE_EXCERPT_BYTES = 1024;

export interface WebhookOutcome {
    status: number;
    body: string;
    headers: Record<string, string>;
}

/** A request the allow-list stopped: not worth retrying, since the list does not change while the server runs. */
export class HostRefusedError extends Error {}

function refusal(hostName: string, address: string): Error {
    return new HostRefusedError(
        `webhook can only call allowed HTTP servers (check WEBHOOK_ALLOWED_HOST_LIST), deny '${hostName}(${address})'`,
    );
}

export interface WebhookSenderOptions {
    /** How many redirects (301, 302, 303, 307, 308) are followed, each to a host the allow-list lets through; 0: none. */
    maxRedirects?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export class WebhookSender {
    readonly #allowList: HostAllowList;
    readonly #timeoutMs: number;
    readonly #maxRedirects: number;
    readonly #agents = {
        http: new Http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }),
        https: new Https.Agent({ keepAlive: true, maxSockets: CONCURRENCY }),
    };

    constructor(settings: WebhookConfig, options: WebhookSenderOptions = {}) {
        this.#allowList = parseAllowList(settings.allowedHostList);
        this.#timeoutMs = settings.deliverTimeoutMs;
        this.#maxRedirects = options.maxRedirects ?? 0;
    }

    close(): void {
        this.#agents.http.destroy();
        this.#agents.https.destroy();
    }

    /** POSTs the body; a redirect is followed (with the same body and headers) to a host the list allows, up to the limit. */
    async post(url: URL, headers: Record<string, string>, body: string): Promise<WebhookOutcome> {
        let target = url;
        for (let redirects = 0; ; redirects += 1) {
            const outcome = await this.#postOnce(target, headers, body);
            const location = outcome.headers.location;
            if (!REDIRECTS.has(outcome.status) || location === undefined || redirects >= this.#maxRedirects) {
                return outcome;
            }

            target = new URL(location, target);
            if (target.protocol !== 'http:' && target.protocol !== 'https:') {
                throw new Error(`webhook redirected to a URL that is not HTTP: ${target.protocol}`);
            }
        }
    }

    async #postOnce(url: URL, headers: Record<string, string>, body: string): Promise<WebhookOutcome> {
        const hostName = url.hostname.replace(/^\[(.*)\]$/, '$1');
        if (Net.isIP(hostName) !== 0 && !this.#allowList.allows(hostName, hostName)) {
            throw refusal(hostName, hostName);
        }

        const secure = url.protocol === 'https:';
        const send = secure ? Https.request : Http.request;
        return await new Promise((resolve, reject) => {
            const request = send(url, {
                method: 'POST',
                headers,
                agent: secure ? this.#agents.https : this.#agents.http,
                lookup: guardedLookup((hostName, address) => this.#allowList.allows(hostName, address), refusal),
                timeout: this.#timeoutMs,
            });
            request.on('timeout', () => request.destroy(new Error(`timed out after ${this.#timeoutMs} ms`)));
            request.on('error', reject);
            request.on('response', (response) => {
                const chunks: Buffer[] = [];
                let size = 0;
                response.on('data', (chunk: Buffer) => {
                    if (size < RESPONSE_EXCERPT_BYTES) {
                        chunks.push(chunk);
                    }

                    size += chunk.length;
                });
                response.on('error', reject);
                response.on('end', () =>
                    resolve({
                        status: response.statusCode ?? 0,
                        body: Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'),
                        headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)])),
                    }),
                );
            });
            request.end(body);
        });
    }
}
