import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Path from 'node:path';

import type { Plugin } from '@hapi/hapi';

export interface DocsOptions {
    swaggerFile: string;
}

const UI_FILES = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png']);

function uiPage(): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Gatehouse API</title>
<link rel="stylesheet" href="/api/swagger/assets/swagger-ui.css">
<link rel="icon" href="/api/swagger/assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/swagger/assets/swagger-ui-bundle.js"></script>
<script src="/api/swagger/assets/swagger-ui-standalone-preset.js"></script>
<script src="/api/swagger/init.js"></script>
</body>
</html>
`;
}

const INIT_SCRIPT = `window.ui = SwaggerUIBundle({
    url: '/swagger.v1.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    layout: 'StandaloneLayout',
});
`;

/** The git API's Swagger document at /swagger.v1.json and a Swagger UI page at /api/swagger, as Gitea serves them. */
export const docsPlugin: Plugin<DocsOptions> = {
    name: 'docs',
    register(server, { swaggerFile }) {
        const document = Fs.readFileSync(swaggerFile, 'utf8');
        const uiDir = Path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
        const security = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";
        server.route([
            {
                method: 'GET',
                path: '/swagger.v1.json',
                options: { handler: (_request, h) => h.response(document).type('application/json; charset=utf-8') },
            },
            {
                method: 'GET',
                path: '/api/swagger',
                options: {
                    handler: (_request, h) =>
                        h.response(uiPage()).type('text/html; charset=utf-8').header('Content-Security-Policy', security),
                },
            },
            {
                method: 'GET',
                path: '/api/swagger/init.js',
                options: { handler: (_request, h) => h.response(INIT_SCRIPT).type('application/javascript; charset=utf-8') },
            },
            {
                method: 'GET',
                path: '/api/swagger/assets/{file}',
                options: {
                    handler: (request, h) => {
                        const file = request.params.file as string;
                        if (!UI_FILES.has(file)) {
                            return h.response({ error: 'not found' }).code(404);
                        }

                        return h.file(Path.join(uiDir, file), { confine: false });
                    },
                },
            },
        ]);
    },
};
