import Fs from 'node:fs';
import Path from 'node:path';

import Boom from '@hapi/boom';
import type { Plugin, Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';

export interface WebOptions {
    /** The built UI: web/dist, holding index.html and assets/ (Vite's output). */
    distDir: string;
}

/** No inline script or style anywhere: only the UI's own files, and data: images (icons). */
export const WEB_CONTENT_SECURITY_POLICY = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
].join('; ');

/** Asset names carry a hash of their content: a changed file is a new name, so browsers may keep them for good. */
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Gatehouse: the web UI is not built</title>
</head>
<body>
<main>
<h1>The web UI is not built</h1>
<p>Gatehouse is running, but its web UI has not been built yet. Run <code>npm run build:web</code> in Gatehouse's
folder (or <code>npm ci</code>, which builds it), then reload this page. The API under <code>/api</code> works meanwhile.</p>
</main>
</body>
</html>
`;

/** Paths that belong to the APIs and their documents: never answered with the UI, whatever the client accepts. */
function isApiPath(path: string): boolean {
    return path === '/api' || path.startsWith('/api/') || path === '/swagger.v1.json';
}

/** A browser navigating to a page (not a script, an image or an API client) asks for HTML. */
function acceptsHtml(request: Request): boolean {
    const accept = String(request.headers.accept ?? '');
    return accept.includes('text/html') || accept.includes('application/xhtml+xml');
}

function withSecurityHeaders(response: ResponseObject): ResponseObject {
    return response.header('Content-Security-Policy', WEB_CONTENT_SECURITY_POLICY).header('X-Content-Type-Options', 'nosniff');
}

/**
 * The deploy manager's web UI (web/, built by Vite into web/dist) at `/`: hashed assets cached for good,
 * index.html revalidated every time, and every other page address answered with index.html so that the
 * single-page app's own routes (/apps/x, /sign-in...) load directly. While web/dist is missing, pages answer
 * 503 saying how to build it.
 */
export const webPlugin: Plugin<WebOptions> = {
    name: 'web',
    register(server, { distDir }) {
        const indexFile = Path.join(distDir, 'index.html');
        const assetsDir = Path.join(distDir, 'assets');

        const indexPage = (h: ResponseToolkit): ResponseObject => {
            if (!Fs.existsSync(indexFile)) {
                return withSecurityHeaders(h.response(NOT_BUILT_PAGE).type('text/html; charset=utf-8').code(503)).header(
                    'Cache-Control',
                    'no-store',
                );
            }

            return withSecurityHeaders(h.file(indexFile, { confine: false }))
                .type('text/html; charset=utf-8')
                .header('Cache-Control', 'no-cache');
        };

        server.route([
            { method: 'GET', path: '/', options: { auth: false, handler: (_request, h) => indexPage(h) } },
            {
                method: 'GET',
                path: '/index.html',
                options: { auth: false, handler: (_request, h) => h.redirect('/').code(301) },
            },
            {
                method: 'GET',
                path: '/assets/{file*}',
                options: {
                    auth: false,
                    handler: (request, h) => {
                        // Vite writes its assets flat, under plain names: anything else (folders, dot files) is not one.
                        const file = String(request.params.file ?? '');
                        if (!ASSET_NAME.test(file)) {
                            throw Boom.notFound();
                        }

                        return withSecurityHeaders(h.file(Path.join(assetsDir, file), { confine: assetsDir })).header(
                            'Cache-Control',
                            ASSET_CACHE_CONTROL,
                        );
                    },
                },
            },
        ]);

        // The single-page app's routes: a GET that found no route, outside the APIs, from a browser asking for a
        // page. Done as a fallback rather than a catch-all route, so that the APIs' 404 and 405 answers stay theirs.
        server.ext('onPreResponse', (request, h) => {
            const unrouted = (request.route.method as string) === '_special';
            const read = request.method === 'get' || request.method === 'head';
            if (!unrouted || !read || isApiPath(request.path) || !acceptsHtml(request)) {
                return h.continue;
            }

            return indexPage(h);
        });
    },
};
