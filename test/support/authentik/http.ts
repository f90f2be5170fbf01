/** Small pieces of HTTP the stand-in's parts share: bodies, cookies, answers. */
import type Http from 'node:http';

export type Json = Record<string, unknown>;

/** What a part of the stand-in answers: written out by the server. */
export interface Reply {
    status: number;
    headers?: Record<string, string | string[]>;
    /** A string is sent as is; anything else as JSON; undefined sends no body. */
    body?: unknown;
}

export async function readBody(request: Http.IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) {
        chunks.push(chunk as Buffer);
    }

    return Buffer.concat(chunks).toString('utf8');
}

export function parseCookies(header: string | undefined): Map<string, string> {
    const cookies = new Map<string, string>();
    for (const pair of (header ?? '').split(';')) {
        const index = pair.indexOf('=');
        if (index > 0) {
            cookies.set(pair.slice(0, index).trim(), decodeURIComponent(pair.slice(index + 1).trim()));
        }
    }

    return cookies;
}

export interface CookieOptions {
    maxAgeSeconds?: number;
    secure?: boolean;
    domain?: string;
}

export function setCookie(name: string, value: string, options: CookieOptions = {}): string {
    const parts = [`${name}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
    if (options.maxAgeSeconds !== undefined) parts.push(`Max-Age=${options.maxAgeSeconds}`);
    if (options.domain) parts.push(`Domain=${options.domain}`);
    if (options.secure) parts.push('Secure');
    return parts.join('; ');
}

export function clearCookie(name: string, options: CookieOptions = {}): string {
    return setCookie(name, '', { ...options, maxAgeSeconds: 0 });
}

export function redirect(location: string, cookies: string[] = []): Reply {
    return { status: 302, headers: { location, ...(cookies.length > 0 ? { 'set-cookie': cookies } : {}) }, body: '' };
}

export function text(status: number, body: string, cookies: string[] = []): Reply {
    return {
        status,
        headers: { 'content-type': 'text/plain; charset=utf-8', ...(cookies.length > 0 ? { 'set-cookie': cookies } : {}) },
        body: `${body}\n`,
    };
}

export function html(status: number, body: string, cookies: string[] = []): Reply {
    return {
        status,
        headers: { 'content-type': 'text/html; charset=utf-8', ...(cookies.length > 0 ? { 'set-cookie': cookies } : {}) },
        body,
    };
}

export function escapeHtml(value: string): string {
    return value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

export function writeReply(response: Http.ServerResponse, reply: Reply): void {
    const headers: Record<string, string | string[]> = { ...reply.headers };
    let payload = '';
    if (typeof reply.body === 'string') {
        payload = reply.body;
    } else if (reply.body !== undefined) {
        payload = JSON.stringify(reply.body);
        headers['content-type'] ??= 'application/json';
    }

    response.writeHead(reply.status, headers).end(payload);
}

/** A request to the stand-in's web side (authentik's pages, the embedded outpost), read whole. */
export interface WebRequest {
    method: string;
    /** The request's path and query, on the stand-in's own URL. */
    url: URL;
    headers: Http.IncomingHttpHeaders;
    cookies: Map<string, string>;
    body: string;
}

/** The header's value (the first, when it came twice); undefined when missing or empty. */
export function header(request: WebRequest, name: string): string | undefined {
    const value = request.headers[name.toLowerCase()];
    return (Array.isArray(value) ? value[0] : value) || undefined;
}
