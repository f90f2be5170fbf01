/**
 * A browser behind the nginx of authentik's documented forward-auth snippet (reference: authentik-forward-auth §2),
 * without nginx: plain fetch, manual redirects and a small cookie jar. App URLs (any host but the stand-in's) are
 * played as nginx would: `/outpost.goauthentik.io/*` is passed to the outpost, everything else first asks
 * `auth/nginx` and answers 200 with the identity headers, or the 302 to `start` on a 401. The requests reach the
 * stand-in with the app's host in X-Forwarded-Host (with the port, as §7 advises, unless told otherwise).
 */
export interface BrowserResponse {
    status: number;
    url: string;
    /** Lower-case names. */
    headers: Record<string, string>;
    body: string;
}

export interface Visit extends BrowserResponse {
    /** Every response on the way, the last one included. */
    trail: Array<{ method: string; url: string; status: number }>;
}

export interface BrowserOptions {
    /** False: nginx forwards the host without its port (`proxy_set_header Host $host`), the pitfall of §7. */
    forwardPort?: boolean;
}

const OUTPOST_PATH = '/outpost.goauthentik.io';
const MAX_HOPS = 20;

interface StoredCookie {
    value: string;
    /** A Domain= cookie also goes to subdomains. */
    domain: boolean;
}

function headersOf(response: Response): Record<string, string> {
    return Object.fromEntries([...response.headers.entries()]);
}

export class ForwardAuthBrowser {
    /** Cookies by host name (cookies do not tell ports apart) and name. */
    readonly #jar = new Map<string, Map<string, StoredCookie>>();
    readonly #standIn: URL;

    constructor(
        standInUrl: string,
        private readonly options: BrowserOptions = {},
    ) {
        this.#standIn = new URL(standInUrl);
    }

    /** The cookies this browser would send to the host. */
    cookies(hostname: string): Map<string, string> {
        const found = new Map<string, string>();
        for (const [domain, cookies] of this.#jar) {
            for (const [name, cookie] of cookies) {
                if (domain === hostname || (cookie.domain && hostname.endsWith(`.${domain}`))) {
                    found.set(name, cookie.value);
                }
            }
        }

        return found;
    }

    #cookieHeader(hostname: string): string {
        return [...this.cookies(hostname)].map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('; ');
    }

    #keep(hostname: string, response: Response): void {
        for (const line of response.headers.getSetCookie()) {
            const [pair = '', ...attributes] = line.split(';').map((part) => part.trim());
            const index = pair.indexOf('=');
            const name = pair.slice(0, index);
            const value = decodeURIComponent(pair.slice(index + 1));
            const domain = attributes
                .find((attribute) => /^domain=/i.test(attribute))
                ?.slice('domain='.length)
                .replace(/^\./, '');
            const key = domain ?? hostname;
            const cookies = this.#jar.get(key) ?? new Map<string, StoredCookie>();
            if (attributes.some((attribute) => /^max-age=0$/i.test(attribute))) {
                cookies.delete(name);
            } else {
                cookies.set(name, { value, domain: domain !== undefined });
            }

            this.#jar.set(key, cookies);
        }
    }

    async #fetch(url: string, hostname: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Response> {
        const cookie = this.#cookieHeader(hostname);
        const response = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers, ...(cookie ? { cookie } : {}) } });
        this.#keep(hostname, response);
        return response;
    }

    /** The headers nginx's outpost location adds. */
    #forwarded(target: URL): Record<string, string> {
        return {
            'x-forwarded-host': this.options.forwardPort === false ? target.hostname : target.host,
            'x-forwarded-proto': target.protocol.replace(':', ''),
            'x-original-url': target.href,
        };
    }

    async #throughNginx(target: URL, init: RequestInit): Promise<BrowserResponse> {
        const toOutpost = `${this.#standIn.origin}${target.pathname}${target.search}`;
        if (target.pathname.startsWith(`${OUTPOST_PATH}/`)) {
            const response = await this.#fetch(toOutpost, target.hostname, { ...init, headers: this.#forwarded(target) });
            return { status: response.status, url: target.href, headers: headersOf(response), body: await response.text() };
        }

        const check = await this.#fetch(`${this.#standIn.origin}${OUTPOST_PATH}/auth/nginx`, target.hostname, {
            headers: this.#forwarded(target),
        });
        await check.text();
        if (check.status === 200) {
            const identity = Object.fromEntries(Object.entries(headersOf(check)).filter(([name]) => name.startsWith('x-authentik-')));
            return { status: 200, url: target.href, headers: identity, body: `the app at ${target.href}` };
        }

        if (check.status === 401) {
            // nginx's `return 302 /outpost.goauthentik.io/start?rd=$scheme://$http_host$request_uri;` does not encode rd.
            const location = `${OUTPOST_PATH}/start?rd=${target.protocol}//${target.host}${target.pathname}${target.search}`;
            return { status: 302, url: target.href, headers: { location }, body: '' };
        }

        // auth_request passes 403 on and turns anything else into 500.
        const status = check.status === 403 ? 403 : 500;
        return { status, url: target.href, headers: {}, body: '' };
    }

    /** One request, without following redirects. */
    async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<BrowserResponse> {
        const target = new URL(url);
        const requestInit: RequestInit & { headers?: Record<string, string> } = init.form
            ? {
                  method: 'POST',
                  body: new URLSearchParams(init.form).toString(),
                  headers: { 'content-type': 'application/x-www-form-urlencoded' },
              }
            : { method: init.method ?? 'GET' };
        if (target.host !== this.#standIn.host) {
            return await this.#throughNginx(target, requestInit);
        }

        const response = await this.#fetch(target.href, target.hostname, requestInit);
        return { status: response.status, url: target.href, headers: headersOf(response), body: await response.text() };
    }

    /** Opens the URL and follows redirects; on the sign-in page, signs in once with the credentials given. */
    async open(url: string, credentials?: { username: string; password: string }): Promise<Visit> {
        const trail: Visit['trail'] = [];
        let signedIn = false;
        let method = 'GET';
        let response = await this.request(url);
        for (let hop = 0; hop < MAX_HOPS; hop++) {
            trail.push({ method, url: response.url, status: response.status });
            method = 'GET';
            const location = response.headers.location;
            if (response.status >= 300 && response.status < 400 && location) {
                response = await this.request(new URL(location, response.url).href);
                continue;
            }

            if (credentials && !signedIn && response.status === 200 && response.body.includes('name="uid_field"')) {
                signedIn = true;
                method = 'POST';
                response = await this.request(response.url, { form: { uid_field: credentials.username, password: credentials.password } });
                continue;
            }

            return { ...response, trail };
        }

        throw new Error(`more than ${MAX_HOPS} redirects from ${url}: ${trail.map((step) => step.url).join(' -> ')}`);
    }
}
