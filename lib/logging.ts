import type { Plugin } from '@hapi/hapi';
import HapiPino from 'hapi-pino';

const SECRET_QUERY_KEYS = /^(token|access_token|password|secret|code|state)$/i;

/** A request's URL with the values of credential-bearing query parameters replaced. */
export function redactedUrl(path: string, search: URLSearchParams): string {
    const params = new URLSearchParams();
    for (const [key, value] of search) {
        params.append(key, SECRET_QUERY_KEYS.test(key) ? '[redacted]' : value);
    }

    const query = params.toString();
    return query ? `${path}?${query}` : path;
}

interface LoggedRequest {
    id?: string;
    method?: string;
    url?: string;
    remoteAddress?: string;
    raw?: { req?: { url?: string } };
}

/**
 * Request logging through pino. Headers are never logged (they carry Authorization and cookies),
 * payloads never, and credential query parameters are redacted.
 */
export function loggingPlugin(level: string): { plugin: Plugin<HapiPino.Options>; options: HapiPino.Options } {
    return {
        plugin: HapiPino as unknown as Plugin<HapiPino.Options>,
        options: {
            level,
            logPayload: false,
            logQueryParams: false,
            logPathParams: false,
            ignorePaths: ['/api/health'],
            serializers: {
                req: (request: LoggedRequest) => {
                    const raw = request.url ?? request.raw?.req?.url ?? '';
                    const url = new URL(raw, 'http://localhost');
                    return {
                        id: request.id,
                        method: request.method,
                        url: redactedUrl(url.pathname, url.searchParams),
                        remoteAddress: request.remoteAddress,
                    };
                },
                res: (response: { statusCode?: number }) => ({ statusCode: response.statusCode }),
            },
            wrapSerializers: false,
            redact: ['req.headers', 'res.headers', '*.authorization', '*.cookie', '*.password', '*.token'],
        },
    };
}
