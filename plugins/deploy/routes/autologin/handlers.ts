import Boom from '@hapi/boom';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';

import { AUTOLOGIN_TOKEN_HEADER } from '../../../sso/methods/autologin.ts';
import type { IssuedCookie } from '../../../sso/autologin/adapter-types.ts';
import { autoLogin as signInForVisitor } from '../../domain/access/autologin-service.ts';

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

/** A Set-Cookie line for the app's own domain: no Domain attribute, so the cookie stays host-only. */
function setCookieLine(cookie: IssuedCookie): string {
    const parts = [`${cookie.name}=${cookie.value}`, `Path=${cookie.path}`];
    if (cookie.expires) parts.push(`Expires=${cookie.expires.toUTCString()}`);
    if (cookie.maxAge !== undefined) parts.push(`Max-Age=${cookie.maxAge}`);
    if (cookie.secure) parts.push('Secure');
    if (cookie.httpOnly) parts.push('HttpOnly');
    if (cookie.sameSite) parts.push(`SameSite=${cookie.sameSite}`);
    return parts.join('; ');
}

function page(h: ResponseToolkit, status: number, title: string, body: string): ResponseObject {
    const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
    return h.response(html).code(status).type('text/html; charset=utf-8').header('Cache-Control', 'no-store');
}

/** localStorage belongs to the app's origin, so a page served there sets it, then goes on to the app. */
function storagePage(h: ResponseToolkit, storage: Record<string, string>, landing: string): ResponseObject {
    const data = JSON.stringify({ storage, landing }).replace(/</g, '\\u003c');
    const script = `const d=${data};for(const [k,v] of Object.entries(d.storage))localStorage.setItem(k,v);location.replace(d.landing);`;
    return page(h, 200, 'Signing in', `<p>Signing in…</p><script>${script}</script>`);
}

function headerOf(request: Request, name: string): string | undefined {
    const value: unknown = request.headers[name.toLowerCase()];
    return typeof value === 'string' ? value : undefined;
}

/** The browser's headers an app may tie its session to, as nginx passed them. */
const VISITOR_HEADERS = ['user-agent', 'accept-language', 'accept-encoding', 'x-real-ip', 'x-forwarded-for'];

function visitorHeaders(request: Request): Record<string, string> {
    return Object.fromEntries(
        VISITOR_HEADERS.map((name) => [name, headerOf(request, name)] as const).filter(
            (entry): entry is [string, string] => entry[1] !== undefined,
        ),
    );
}

export const autoLogin: Lifecycle.Method = async (request, h) => {
    const answer = await signInForVisitor(request.server, String(request.params.name), {
        remoteAddress: request.info.remoteAddress,
        token: headerOf(request, AUTOLOGIN_TOKEN_HEADER),
        visitorHeaders: visitorHeaders(request),
    });
    if (answer.kind === 'refused') {
        throw Boom.forbidden('the auto-login answers only to the proxy of the app, with its token');
    }

    if (!answer.ok) {
        const reason = escapeHtml(answer.reason);
        return page(
            h,
            502,
            'Auto-login failed',
            `<h1>The auto-login to ${escapeHtml(answer.app)} did not sign in</h1><p>${reason}</p><p><a href="/">Go to the app and sign in with its own form</a></p>`,
        );
    }

    const response =
        Object.keys(answer.storage).length > 0 ? storagePage(h, answer.storage, answer.landing) : h.redirect(answer.landing).code(302);
    for (const cookie of answer.cookies) {
        response.header('Set-Cookie', setCookieLine(cookie), { append: true });
    }

    return response.header('Cache-Control', 'no-store');
};
