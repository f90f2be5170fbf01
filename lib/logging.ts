import type { Plugin } from '@hapi/hapi';
import HapiPino from 'hapi-pino';
import Pino from 'pino';

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

/** A logged error message is cut to this many characters (its head and its tail are kept). */
export const MAX_LOGGED_MESSAGE = 2_000;

/** What a database error keeps in a log line: never `sql` (mysql2 writes the values into it), nor `sqlMessage`. */
const DATABASE_ERROR_FIELDS = ['code', 'errno', 'sqlState'] as const;

/** Values a message may quote: SQL literals, MySQL's `Duplicate entry '...'`; the names of columns, keys and tables stay. */
const QUOTED = /(\b(?:column|key|table|index) )?'(?:[^'\\]|\\.|'')*'/gi;

type ErrorFields = Record<string, unknown>;

/** knex's message for a failed statement: the statement, ` - `, the driver's message. */
const FAILED_STATEMENT = /^\s*(?:select|insert|update|delete|with|create|alter|drop|pragma)\b[\s\S]* - /i;

/**
 * An error of knex or its drivers, whose message holds the failed statement (huge at times): by its driver's fields,
 * or by its message alone when it crossed from a worker thread without them.
 */
function isDatabaseError(error: ErrorFields): boolean {
    const code = typeof error.code === 'string' ? error.code : '';
    const knexMessage = typeof error.message === 'string' && FAILED_STATEMENT.test(error.message);
    return knexMessage || 'sql' in error || 'sqlState' in error || /^(SQLITE_|ER_)/.test(code) || error.name === 'SqliteError';
}

function shortened(text: string): string {
    if (text.length <= MAX_LOGGED_MESSAGE) {
        return text;
    }

    const half = MAX_LOGGED_MESSAGE / 2;
    return `${text.slice(0, half)} [... ${text.length - MAX_LOGGED_MESSAGE} characters left out ...] ${text.slice(-half)}`;
}

function loggableText(text: string, database: boolean): string {
    return shortened(database ? text.replace(QUOTED, (quoted, name?: string) => (name ? quoted : "'?'")) : text);
}

/** An error's message as a log line may show it: bounded, and for a database error without the values it quotes. */
export function loggableMessage(error: unknown): string {
    if (!(error instanceof Error)) {
        return shortened(String(error));
    }

    return loggableText(error.message, isDatabaseError(error as unknown as ErrorFields));
}

/**
 * pino's error serializer, made safe for database errors. knex writes the failed statement into the message (with
 * placeholders, as lib/database.ts configures it; with inlined values otherwise) and mysql2 adds it with the values as
 * `sql`: a log line keeps the statement's text without the values it quotes, bounded, and the driver's codes.
 */
export function loggableError(error: unknown): unknown {
    if (!(error instanceof Error)) {
        return error;
    }

    const serialized = Pino.stdSerializers.err(error) as unknown as ErrorFields;
    const database = isDatabaseError(error as unknown as ErrorFields);
    const message = loggableText(String(serialized.message), database);
    const rawStack = String(serialized.stack ?? '');
    const frames = rawStack.indexOf('\n    at ');
    const stack = `${String(serialized.type)}: ${message}${frames >= 0 ? rawStack.slice(frames) : ''}`;
    if (!database) {
        return { ...serialized, message, stack };
    }

    const kept: ErrorFields = { type: serialized.type, message, stack };
    for (const field of DATABASE_ERROR_FIELDS) {
        if (serialized[field] !== undefined) {
            kept[field] = serialized[field];
        }
    }

    return kept;
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
 * payloads never, and credential query parameters are redacted. Errors are bounded, and database errors never show
 * the values of their statements.
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
            customRequestErrorMessage: (_request, error) => loggableMessage(error),
            serializers: {
                err: loggableError,
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
