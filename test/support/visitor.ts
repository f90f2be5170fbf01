/**
 * A visitor's HTTP client for apps behind nginx: names under a test domain go to nginx on loopback (with the name as
 * Host and SNI), any other URL goes where it says. Cookies are kept per host; redirects are followed by hand, so a
 * test sees every hop.
 */
import Http from 'node:http';
import Https from 'node:https';

export interface VisitorResponse {
    status: number;
    location: string | null;
    body: string;
    url: string;
}

export class Visitor {
    readonly #cookies = new Map<string, Map<string, string>>();

    /** `domainSuffix`: names ending in it are served by nginx at 127.0.0.1 on the URL's port. */
    constructor(readonly domainSuffix: string) {}

    cookiesOf(host: string): Map<string, string> {
        let jar = this.#cookies.get(host);
        if (!jar) {
            jar = new Map();
            this.#cookies.set(host, jar);
        }

        return jar;
    }

    #remember(host: string, headers: Http.IncomingHttpHeaders): void {
        for (const header of headers['set-cookie'] ?? []) {
            const [pair = ''] = header.split(';');
            const index = pair.indexOf('=');
            const name = pair.slice(0, index).trim();
            const value = pair.slice(index + 1).trim();
            if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(header)) {
                this.cookiesOf(host).delete(name);
            } else {
                this.cookiesOf(host).set(name, value);
            }
        }
    }

    request(
        method: 'GET' | 'POST',
        address: string,
        form?: Record<string, string>,
        extraHeaders: Record<string, string> = {},
    ): Promise<VisitorResponse> {
        const url = new URL(address);
        const behindNginx = url.hostname.endsWith(this.domainSuffix);
        const jar = this.cookiesOf(url.host);
        const body = form ? new URLSearchParams(form).toString() : undefined;
        // A browser's Accept: apps tell a visitor's browser (sent to sign in) from a script (answered 401) by it.
        const headers: Record<string, string> = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', ...extraHeaders, host: url.host };
        if (jar.size > 0) {
            headers.cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
        }

        if (body !== undefined) {
            headers['content-type'] = 'application/x-www-form-urlencoded';
            headers['content-length'] = String(Buffer.byteLength(body));
        }

        const secure = url.protocol === 'https:';
        const options: Https.RequestOptions = {
            method,
            host: behindNginx ? '127.0.0.1' : url.hostname,
            port: url.port || (secure ? 443 : 80),
            path: `${url.pathname}${url.search}`,
            headers,
            agent: false,
            timeout: 10_000,
            ...(secure ? { servername: url.hostname, rejectUnauthorized: false } : {}),
        };
        return new Promise((resolve, reject) => {
            const request = (secure ? Https : Http).request(options, (response) => {
                this.#remember(url.host, response.headers);
                let text = '';
                response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
                response.once('end', () =>
                    resolve({
                        status: response.statusCode ?? 0,
                        location: response.headers.location ? new URL(response.headers.location, url).href : null,
                        body: text,
                        url: url.href,
                    }),
                );
            });
            request.once('timeout', () => request.destroy(new Error(`${method} ${address}: no answer`)));
            request.once('error', reject);
            request.end(body);
        });
    }

    /** GETs and follows redirects (at most `limit`); answers every hop, the last one last. */
    async follow(address: string, limit = 10): Promise<VisitorResponse[]> {
        const hops: VisitorResponse[] = [];
        let next: string | null = address;
        while (next && hops.length < limit) {
            const response = await this.request('GET', next);
            hops.push(response);
            next = response.status >= 300 && response.status < 400 ? response.location : null;
        }

        return hops;
    }
}

export function lastHop(hops: VisitorResponse[]): VisitorResponse {
    return hops[hops.length - 1] as VisitorResponse;
}

/** Follows an app's redirects to the provider's sign-in page, signs in there, and follows back; answers every hop. */
export async function signInThroughProvider(visitor: Visitor, url: string, username: string, password: string): Promise<VisitorResponse[]> {
    const toLogin = await visitor.follow(url);
    const loginPage = lastHop(toLogin);
    if (loginPage.status !== 200 || !loginPage.body.includes('<form')) {
        throw new Error(`${url} did not lead to a sign-in page: ${loginPage.status} at ${loginPage.url}`);
    }

    const posted = await visitor.request('POST', loginPage.url, { uid_field: username, password });
    if (posted.status !== 302 || !posted.location) {
        throw new Error(`signing in as ${username} was refused: ${posted.status}`);
    }

    return [...toLogin, posted, ...(await visitor.follow(posted.location))];
}
