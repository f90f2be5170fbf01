/**
 * A classic HTML login form, submitted server side as a browser would submit it (../shared/reference/autologin.md
 * §1): the login page fetched with an empty cookie jar, the form with exactly one password field chosen, every
 * control a browser sends kept (hidden CSRF tokens included), user and password filled in, posted with the app's
 * public Origin and Referer, and the answer judged: a redirect away from the login page, or a page without a
 * password field, is a success; the form again, a redirect back to it, or an error status is a refusal.
 */
import Http from 'node:http';
import Https from 'node:https';
import Zlib from 'node:zlib';

import { DomUtils, parseDocument } from 'htmlparser2';
import { CookieJar } from 'tough-cookie';

import { OffOriginError, onOrigin, pathOnOrigin } from '../../../../lib/app-urls.ts';

import type { AutoLoginAdapter, AutoLoginOutcome, AutoLoginRequest, IssuedCookie } from '../adapter-types.ts';

type Element = ReturnType<typeof DomUtils.findAll>[number];

/** Where login pages usually are, when the recipe names none. */
export const LOGIN_PATHS = [
    '/login',
    '/signin',
    '/sign_in',
    '/auth/login',
    '/user/login',
    '/account/login',
    '/accounts/login/',
    '/users/sign_in',
    '/admin/login',
    '/index.php?do=login',
    '/doku.php?do=login',
    '/wp-login.php',
    '/',
];
const MAX_REDIRECTS = 5;
const USERNAME_NAME = /user|login|email|mail|name|uid|account|ident/i;
const TEXT_TYPES = new Set(['', 'text', 'email', 'tel']);
const NOT_SENT = new Set(['submit', 'button', 'image', 'reset', 'file']);

interface Page {
    url: URL;
    status: number;
    location: URL | null;
    html: string;
}

interface Exchange {
    status: number;
    location: string | null;
    setCookies: string[];
    body: string;
}

const DECODERS: Record<string, (data: Buffer) => Buffer> = {
    gzip: (data) => Zlib.gunzipSync(data),
    'x-gzip': (data) => Zlib.gunzipSync(data),
    deflate: (data) => Zlib.inflateSync(data),
    br: (data) => Zlib.brotliDecompressSync(data),
    identity: (data) => data,
};

/**
 * One request, redirects not followed. node:http rather than fetch: fetch will not send another Host than the URL's,
 * and the app must see the Host nginx sends, since apps derive cookie names and URLs from it.
 */
function exchange(
    url: URL,
    options: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<Exchange> {
    const client = url.protocol === 'https:' ? Https : Http;
    return new Promise((resolve, reject) => {
        const request = client.request(
            url,
            { method: options.method, headers: options.headers, timeout: options.timeoutMs },
            (response) => {
                const chunks: Buffer[] = [];
                response.on('data', (chunk: Buffer) => chunks.push(chunk));
                response.once('error', reject);
                response.once('end', () => {
                    const encoding = String(response.headers['content-encoding'] ?? 'identity').toLowerCase();
                    const decode = DECODERS[encoding];
                    if (!decode) {
                        reject(new Error(`the app answered in an encoding this client cannot read (${encoding})`));
                        return;
                    }

                    resolve({
                        status: response.statusCode ?? 0,
                        location: response.headers.location ?? null,
                        setCookies: response.headers['set-cookie'] ?? [],
                        body: decode(Buffer.concat(chunks)).toString('utf8'),
                    });
                });
            },
        );
        request.once('timeout', () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
        request.once('error', reject);
        request.end(options.body);
    });
}

/** One sign-in's HTTP client: the app reached at its upstream, as if at its public origin, with a cookie jar. */
class AppClient {
    readonly jar = new CookieJar();
    readonly #request: AutoLoginRequest;
    readonly #deadline: number;

    constructor(request: AutoLoginRequest) {
        this.#request = request;
        this.#deadline = Date.now() + request.timeoutMs;
    }

    /** App-supplied text (a path, an action, a Location) as a URL on the app's public origin; else an OffOriginError. */
    publicUrl(text: string, base: string | URL = this.#request.origin): URL {
        return onOrigin(text, base, this.#request.origin);
    }

    /** Sends to the upstream what the public URL asks, when its path and query still lead there; else an OffOriginError. */
    async send(url: URL, init: { method?: string; body?: string; referer?: string } = {}): Promise<Page> {
        const upstream = onOrigin(`${url.pathname}${url.search}`, this.#request.upstream);
        this.publicUrl(url.href);
        const headers: Record<string, string> = {
            ...this.#request.visitorHeaders,
            // As nginx sends them (site-render.ts PROXY_HEADERS): apps that derive names from Host see the same one.
            host: url.hostname,
            'x-forwarded-host': url.host,
            'x-forwarded-proto': url.protocol.slice(0, -1),
            accept: 'text/html,application/xhtml+xml,*/*;q=0.8',
        };
        const cookie = await this.jar.getCookieString(url.href);
        if (cookie) headers.cookie = cookie;
        if (init.body !== undefined) {
            headers['content-type'] = 'application/x-www-form-urlencoded';
            headers.origin = url.origin;
            headers.referer = init.referer ?? url.href;
        }

        const response = await exchange(upstream, {
            method: init.method ?? 'GET',
            headers,
            ...(init.body !== undefined ? { body: init.body } : {}),
            timeoutMs: Math.max(1, this.#deadline - Date.now()),
        });
        for (const line of response.setCookies) {
            await this.jar.setCookie(line, url.href, { ignoreError: true });
        }

        const location = response.location;
        return { url, status: response.status, location: location ? new URL(location, url) : null, html: response.body };
    }

    /** GETs the URL, following redirects; a redirect off the app's own origin is an OffOriginError, and is not followed. */
    async follow(url: URL): Promise<Page> {
        let page = await this.send(url);
        for (let hops = 0; hops < MAX_REDIRECTS && page.location && isRedirect(page.status); hops += 1) {
            page = await this.send(this.publicUrl(page.location.href));
        }

        return page;
    }
}

const isRedirect = (status: number) => status >= 300 && status < 400;
const attribute = (element: Element, name: string) => DomUtils.getAttributeValue(element, name);
const typeOf = (element: Element) => (attribute(element, 'type') ?? '').toLowerCase();
const passwordFields = (root: Element | Element[]) =>
    DomUtils.findAll((element) => element.name === 'input' && typeOf(element) === 'password', Array.isArray(root) ? root : [root]);

/** The login form of the page: the one form with exactly one password field. */
export function findLoginForm(html: string): Element | undefined {
    const document = parseDocument(html);
    const forms = DomUtils.findAll((element) => element.name === 'form', document.children);
    return forms.find((form) => passwordFields(form).length === 1);
}

function isDisabled(element: Element): boolean {
    for (let node: Element | null = element; node; node = node.parent as Element | null) {
        if (node.type === 'tag' && (DomUtils.hasAttrib(node, 'disabled') || node.name === 'form')) {
            return node.name !== 'form' && DomUtils.hasAttrib(node, 'disabled');
        }
    }

    return false;
}

/** The text or e-mail field before the password field that names a user, else the last one before it. */
function usernameField(controls: Element[], password: Element): Element | undefined {
    const before = controls
        .slice(0, controls.indexOf(password))
        .filter((control) => control.name === 'input' && TEXT_TYPES.has(typeOf(control)));
    return (
        before.filter((control) => USERNAME_NAME.test(`${attribute(control, 'name')} ${attribute(control, 'id') ?? ''}`)).at(-1) ??
        before.at(-1)
    );
}

function selectedValues(select: Element): string[] {
    const options = DomUtils.findAll((element) => element.name === 'option', [select]);
    const chosen = options.filter((option) => DomUtils.hasAttrib(option, 'selected'));
    const picked = chosen.length > 0 || DomUtils.hasAttrib(select, 'multiple') ? chosen : options.slice(0, 1);
    return picked.map((option) => attribute(option, 'value') ?? DomUtils.textContent(option).trim());
}

/** What a browser sends for the form: named, enabled controls in order; checked boxes only; one submit button. */
export function formBody(form: Element, username: string, password: string): { fields: Array<[string, string]>; usernameFound: boolean } {
    const controls = DomUtils.findAll((element) => ['input', 'select', 'textarea', 'button'].includes(element.name), [form]);
    const passwordInput = passwordFields(form)[0] as Element;
    const userInput = usernameField(controls, passwordInput);
    const submit = controls.find(
        (control) =>
            ['submit', 'image'].includes(typeOf(control)) || (control.name === 'button' && ['', 'submit'].includes(typeOf(control))),
    );
    const fields: Array<[string, string]> = [];
    for (const control of controls) {
        const name = attribute(control, 'name');
        if (!name || isDisabled(control)) continue;
        const type = typeOf(control);
        if (control === passwordInput) fields.push([name, password]);
        else if (control === userInput) fields.push([name, username]);
        else if (control.name === 'select') selectedValues(control).forEach((value) => fields.push([name, value]));
        else if (control.name === 'textarea') fields.push([name, DomUtils.textContent(control)]);
        else if (control === submit) fields.push([name, attribute(control, 'value') ?? '']);
        else if (control.name === 'button' || NOT_SENT.has(type)) continue;
        else if (type === 'checkbox' || type === 'radio') {
            if (DomUtils.hasAttrib(control, 'checked')) fields.push([name, attribute(control, 'value') ?? 'on']);
        } else fields.push([name, attribute(control, 'value') ?? '']);
    }

    return { fields, usernameFound: userInput !== undefined };
}

async function findLoginPage(client: AppClient, loginPath: string | undefined): Promise<{ page: Page; form: Element } | undefined> {
    for (const path of loginPath ? [loginPath] : LOGIN_PATHS) {
        const page = await client.follow(client.publicUrl(path));
        const form = page.status < 400 ? findLoginForm(page.html) : undefined;
        if (form) return { page, form };
    }

    return undefined;
}

function samePage(a: URL, b: URL): boolean {
    return a.pathname === b.pathname && a.search === b.search;
}

/** A refusal when the answer is the form again, a way back to it, or an error; undefined when it is a success. */
function refusal(answer: Page, loginPage: Page): string | undefined {
    if (isRedirect(answer.status)) {
        const to = answer.location;
        if (!to) return `the app answered ${answer.status} without a Location`;
        if (samePage(to, loginPage.url) || /[?&](error|login_error|failed)=/i.test(to.search))
            return `the app sent the login back to ${to.pathname}${to.search}`;
        return undefined;
    }

    if (answer.status >= 400) return `the app answered the login with ${answer.status}`;
    return findLoginForm(answer.html) ? 'the app answered with its login form again: the user or password was refused' : undefined;
}

function sameSiteOf(value: string | undefined): IssuedCookie['sameSite'] {
    const known: Record<string, IssuedCookie['sameSite']> = { strict: 'Strict', lax: 'Lax', none: 'None' };
    return value ? known[value.toLowerCase()] : undefined;
}

/**
 * Every cookie the app set, re-issued for its public host: no Domain, its Path (or the default path), Secure over
 * HTTPS. Only answers from the app's own origin reach the jar: nothing is sent anywhere else.
 */
async function issuedCookies(client: AppClient, origin: URL): Promise<IssuedCookie[]> {
    const stored = (await client.jar.serialize()).cookies;
    const now = Date.now();
    return stored
        .filter((cookie) => typeof cookie.expires !== 'string' || Date.parse(cookie.expires) > now)
        .map((cookie) => {
            const expires = typeof cookie.expires === 'string' ? new Date(cookie.expires) : undefined;
            const sameSite = sameSiteOf(typeof cookie.sameSite === 'string' ? cookie.sameSite : undefined);
            const name = String(cookie.key);
            return {
                name,
                value: String(cookie.value ?? ''),
                path: name.startsWith('__Host-') ? '/' : String(cookie.path ?? '/'),
                ...(expires ? { expires } : {}),
                ...(typeof cookie.maxAge === 'number' ? { maxAge: cookie.maxAge } : {}),
                httpOnly: cookie.httpOnly === true,
                secure: origin.protocol === 'https:' || cookie.secure === true,
                ...(sameSite ? { sameSite } : {}),
            };
        });
}

async function signIn(request: AutoLoginRequest): Promise<AutoLoginOutcome> {
    const client = new AppClient(request);
    const found = await findLoginPage(client, request.loginPath);
    if (!found) {
        const where = request.loginPath ?? `any of ${LOGIN_PATHS.join(', ')}`;
        return { ok: false, reason: `no login form (one with a single password field) at ${where}` };
    }

    const { fields, usernameFound } = formBody(found.form, request.username, request.password);
    if (!usernameFound) return { ok: false, reason: `the login form at ${found.page.url.pathname} has no user name field` };
    const action = client.publicUrl(attribute(found.form, 'action') || found.page.url.href, found.page.url);
    const method = (attribute(found.form, 'method') ?? 'get').toUpperCase();
    const body = new URLSearchParams(fields).toString();
    const answer =
        method === 'POST'
            ? await client.send(action, { method: 'POST', body, referer: found.page.url.href })
            : await client.send(client.publicUrl(`${action.pathname}?${body}`, action));
    const refused = refusal(answer, found.page);
    if (refused) return { ok: false, reason: refused };

    const origin = new URL(request.origin);
    const landing = (answer.location && pathOnOrigin(answer.location, origin)) ?? '/';
    return { ok: true, cookies: await issuedCookies(client, origin), storage: {}, landing };
}

const form: AutoLoginAdapter = {
    title: 'A classic HTML login form',
    signIn: async (request) => {
        try {
            return await signIn(request);
        } catch (error) {
            if (error instanceof OffOriginError) {
                return { ok: false, reason: `refused: ${error.message}; nothing was sent there` };
            }

            const cause = (error as Error & { cause?: { code?: string } }).cause?.code;
            return { ok: false, reason: `the app could not be reached at ${request.upstream} (${cause ?? (error as Error).message})` };
        }
    },
};

export default form;
