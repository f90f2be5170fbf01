/** One HTTP(S) GET with a short deadline, answering what came back and how long it took; never throws. */
import Http from 'node:http';
import Https from 'node:https';
import Net from 'node:net';
import Tls from 'node:tls';

export interface HttpCheck {
    statusCode: number | null;
    /** The Location header of a redirect. */
    location: string | null;
    /** The answer's body (UTF-8), up to `readBody` bytes, when the caller asked for it. */
    body?: string;
    ms: number;
    error: string | null;
}

export interface HttpCheckOptions {
    url: URL;
    /** Sent as Host (and, without its port, as the TLS server name) instead of the URL's host, to reach a virtual host by address. */
    host?: string;
    timeoutMs?: number;
    /** More request headers. */
    headers?: Record<string, string>;
    /** Extra CA certificates (PEM) to trust besides the system's. */
    ca?: string[];
    /** Only for probes whose certificate is reported on its own: the answer is wanted, not the chain's validity. */
    skipVerification?: boolean;
    /** Read at most this many bytes of the body. */
    readBody?: number;
}

const DEFAULT_TIMEOUT_MS = 3000;

function describeError(error: NodeJS.ErrnoException): string {
    return error.code ? `${error.code}: ${error.message}` : error.message;
}

export function checkHttp(options: HttpCheckOptions): Promise<HttpCheck> {
    const { url, host, timeoutMs = DEFAULT_TIMEOUT_MS } = options;
    const secure = url.protocol === 'https:';
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);

    return new Promise((resolve) => {
        let settled = false;
        const settle = (outcome: Omit<HttpCheck, 'ms'>) => {
            if (!settled) {
                settled = true;
                resolve({ ...outcome, ms: elapsed() });
            }
        };

        const headers = { 'user-agent': 'gatehouse-status', ...options.headers, ...(host ? { host } : {}) };
        const requestOptions: Https.RequestOptions = { method: 'GET', headers, agent: false, timeout: timeoutMs };
        if (secure) {
            const serverName = host?.replace(/:\d+$/, '') ?? url.hostname;
            // SNI carries names only (RFC 6066); an address is left out.
            if (Net.isIP(serverName) === 0) {
                requestOptions.servername = serverName;
            }

            requestOptions.rejectUnauthorized = options.skipVerification !== true;
            if (options.ca) {
                requestOptions.ca = [...Tls.rootCertificates, ...options.ca];
            }
        }

        const request = (secure ? Https : Http).request(url, requestOptions, (response) => {
            const answer = { statusCode: response.statusCode ?? null, location: response.headers.location ?? null, error: null };
            const limit = options.readBody;
            if (limit === undefined) {
                settle(answer);
                response.destroy();
                return;
            }

            const chunks: Buffer[] = [];
            let size = 0;
            const done = () => settle({ ...answer, body: Buffer.concat(chunks).subarray(0, limit).toString('utf8') });
            response.on('data', (chunk: Buffer) => {
                chunks.push(chunk);
                size += chunk.length;
                if (size >= limit) {
                    done();
                    response.destroy();
                }
            });
            response.on('end', done);
            response.on('error', done);
        });
        request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        request.on('error', (error) => settle({ statusCode: null, location: null, error: describeError(error) }));
        request.end();
    });
}

/**
 * Behind forward auth nginx answers a visitor without a session for the app, without asking it: whether the app
 * serves is known only by asking its upstreams directly. Answers what is wrong with the first that does not answer
 * (no answer, or 500 and above), or null when all answer.
 */
export async function silentUpstream(upstreams: string[], host: string): Promise<string | null> {
    for (const upstream of upstreams) {
        const direct = await checkHttp({ url: new URL(upstream), host, timeoutMs: 5000 });
        if (direct.statusCode === null || direct.statusCode >= 500) {
            return `its upstream ${upstream} did not answer: ${direct.error ?? `status ${direct.statusCode}`}`;
        }
    }

    return null;
}
