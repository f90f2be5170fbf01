/**
 * The stand-in's one HTTP server, as authentik's server container routes: `/api/v3/*` to the admin API,
 * `/outpost.goauthentik.io/*` to the embedded outpost, OAuth2/OpenID requests to their OpenID provider, the rest to
 * authentik's pages. Every request is recorded; while `down` an API request gets its connection reset, as from a
 * server that is not there; an API request a failure rule chooses gets the rule's status (failures.ts).
 */
import type Http from 'node:http';

import type { AdminApi } from './api.ts';
import type { AuthentikWeb } from './authorization.ts';
import { type EmbeddedOutpost, OUTPOST_PREFIX } from './embedded-outpost.ts';
import { parseCookies, readBody, type Reply, text, type WebRequest, writeReply } from './http.ts';
import type { OpenIdEndpoints } from './openid-endpoints.ts';

const API_PREFIX = '/api/v3';

export interface RecordedRequest {
    method: string;
    /** Path and query, as in the request line. */
    path: string;
    /** 0 when the connection was reset. */
    status: number;
}

export interface ServerParts {
    api: AdminApi;
    web: AuthentikWeb;
    outpost: EmbeddedOutpost;
    openid: OpenIdEndpoints;
    isDown(): boolean;
    /** The answer of a failure rule that chose this API request (path below /api/v3), if one did. */
    failure(method: string, path: string): Reply | undefined;
    record(request: RecordedRequest): void;
    /** Told a failure of the stand-in itself. */
    violation(text: string): void;
}

const isApiPath = (path: string): boolean => path === API_PREFIX || path.startsWith(`${API_PREFIX}/`);

function route(parts: ServerParts, request: WebRequest): Reply {
    const path = request.url.pathname;
    if (isApiPath(path)) {
        const apiPath = path.slice(API_PREFIX.length) || '/';
        return (
            parts.failure(request.method, apiPath) ??
            parts.api.handle({
                method: request.method,
                path: apiPath,
                query: request.url.searchParams,
                authorization: request.headers.authorization,
                contentType: request.headers['content-type'],
                body: request.body,
            })
        );
    }

    if (path.startsWith(`${OUTPOST_PREFIX}/`)) {
        return parts.outpost.handle(request);
    }

    return parts.web.handle(request) ?? text(404, 'Not Found');
}

export function requestListener(parts: ServerParts): Http.RequestListener {
    return (request, response) => {
        const method = request.method ?? 'GET';
        const path = request.url ?? '/';
        const url = new URL(path, 'http://stand-in.invalid');
        if (parts.isDown() && isApiPath(url.pathname)) {
            parts.record({ method, path, status: 0 });
            request.socket.resetAndDestroy();
            return;
        }

        readBody(request)
            .then(async (body) => {
                const webRequest = { method, url, headers: request.headers, cookies: parseCookies(request.headers.cookie), body };
                const openid = parts.openid.route(webRequest);
                if (openid) {
                    await openid(request, response);
                    parts.record({ method, path, status: response.statusCode });
                    return;
                }

                const reply = route(parts, webRequest);
                parts.record({ method, path, status: reply.status });
                writeReply(response, reply);
            })
            .catch((error: Error) => {
                parts.record({ method, path, status: 500 });
                parts.violation(`${method} ${path}: the stand-in failed: ${error.stack ?? error.message}`);
                if (!response.headersSent) writeReply(response, text(500, `the authentik stand-in failed: ${error.message}`));
            });
    };
}
