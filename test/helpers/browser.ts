/** A minimal browser for the deploy manager's API over real HTTP: a cookie jar, and the CSRF header from dp_csrf. */
export interface BrowserResponse {
    status: number;
    body: unknown;
    text: string;
    headers: Headers;
    setCookies: string[];
}

export interface RequestOptions {
    csrf?: boolean;
    headers?: Record<string, string>;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/** A socket error of a kept-alive connection that the server closed as the request was sent on it. */
function closedUnderneath(error: unknown): boolean {
    const cause = error instanceof TypeError ? (error.cause as { code?: string } | undefined) : undefined;
    return cause?.code === 'UND_ERR_SOCKET' || cause?.code === 'ECONNRESET';
}

/**
 * fetch, sending an idempotent request once more when the kept-alive connection it went out on was closed under it,
 * as browsers do. A test that blocks its event loop (a synchronous image build) lets the server's keep-alive timer
 * and the next request's send meet on the same idle connection ('fetch failed: other side closed').
 */
async function fetchRetryingClosedConnection(method: string, url: string, init: RequestInit): Promise<Response> {
    try {
        return await fetch(url, init);
    } catch (error) {
        if (!IDEMPOTENT.has(method) || !closedUnderneath(error)) {
            throw error;
        }

        return await fetch(url, init);
    }
}

export class Browser {
    readonly cookies = new Map<string, string>();

    constructor(readonly baseUrl: string) {}

    #remember(setCookies: string[]): void {
        for (const header of setCookies) {
            const [pair = ''] = header.split(';');
            const index = pair.indexOf('=');
            const name = pair.slice(0, index).trim();
            const value = pair.slice(index + 1).trim();
            const expired = /max-age=0/i.test(header) || /expires=thu, 01 jan 1970/i.test(header);
            if (expired || value === '') {
                this.cookies.delete(name);
            } else {
                this.cookies.set(name, value);
            }
        }
    }

    async request(method: string, path: string, payload?: unknown, options: RequestOptions = {}): Promise<BrowserResponse> {
        const headers: Record<string, string> = { ...options.headers };
        if (this.cookies.size > 0) {
            headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
        }

        const csrf = this.cookies.get('dp_csrf');
        if (method !== 'GET' && options.csrf !== false && csrf) {
            headers['x-csrf-token'] = csrf;
        }

        if (payload !== undefined) {
            headers['content-type'] = 'application/json';
        }

        const response = await fetchRetryingClosedConnection(method, `${this.baseUrl}${path}`, {
            method,
            headers,
            body: payload === undefined ? undefined : JSON.stringify(payload),
            redirect: 'manual',
        });
        const setCookies = response.headers.getSetCookie();
        this.#remember(setCookies);
        const text = await response.text();
        let body: unknown = text;
        try {
            body = text ? JSON.parse(text) : undefined;
        } catch {
            // not JSON
        }

        return { status: response.status, body, text, headers: response.headers, setCookies };
    }

    get = (path: string) => this.request('GET', path);
    post = (path: string, payload?: unknown, options?: RequestOptions) => this.request('POST', path, payload, options);
    put = (path: string, payload?: unknown, options?: RequestOptions) => this.request('PUT', path, payload, options);
    delete = (path: string, payload?: unknown, options?: RequestOptions) => this.request('DELETE', path, payload, options);
}

/** A new browser signed in with a password (no second factor); throws unless the sign-in answers 200. */
export async function signIn(baseUrl: string, email: string, password: string): Promise<Browser> {
    const browser = new Browser(baseUrl);
    await browser.get('/api/auth/me');
    const response = await browser.post('/api/auth/login', { email, password });
    if (response.status !== 200) {
        throw new Error(`signing in as ${email} answered ${response.status}: ${response.text}`);
    }

    return browser;
}
