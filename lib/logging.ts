import type { Plugin } from '@hapi/hapi';
import HapiPino from 'hapi-pino';
import Pino from 'pino';

import { batchedStdout } from './log-stream.ts';

const SECRET_QUERY_KEYS = /^(token|access_token|password|secret|code|state)$/i;

/** A path the URL parser would give back unchanged: no query, fragment, percent-encoding or dot segment. */
const PLAIN_PATH = /^\/[\w\-.~!$&'()*+,;=:@/]*$/;
const DOT_SEGMENT = /(?:^|\/)\.\.?(?:\/|$)/;

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

/** Node's error for a request its HTTP parser refused (too large, malformed): `rawPacket` holds the request as sent. */
interface ParserError {
    code?: unknown;
    rawPacket?: unknown;
    bytesParsed?: unknown;
}

function isParserError(error: ParserError): boolean {
    return 'rawPacket' in error || (typeof error.code === 'string' && error.code.startsWith('HPE_'));
}

/**
 * A request that failed to parse, as hapi logs it (its clientError event), is logged by its size and error code only:
 * its raw packet holds the request's headers, cookies and Authorization included, and its message nothing more.
 */
function loggableParserError(error: ParserError): ErrorFields {
    const bytes = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.length : error.bytesParsed;
    return { type: 'ClientError', code: error.code, bytes };
}

/**
 * pino's error serializer, made safe for database errors and for requests that failed to parse. knex writes the failed statement into the message (with
 * placeholders, as lib/database.ts configures it; with inlined values otherwise) and mysql2 adds it with the values as
 * `sql`: a log line keeps the statement's text without the values it quotes, bounded, and the driver's codes.
 */
export function loggableError(error: unknown): unknown {
    if (!(error instanceof Error)) {
        return error;
    }

    const fields = error as unknown as ErrorFields;
    if (isParserError(fields)) {
        return loggableParserError(fields);
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
    url?: string | URL | null;
    remoteAddress?: string;
    raw?: { req?: { url?: string } };
}

/**
 * The request's URL as logged: its path, and its query with credentials redacted. A plain path is logged as it came,
 * without reading hapi's `request.url` (which parses the URL on first use) or parsing it again here.
 */
function loggedUrl(request: LoggedRequest): string {
    const raw = request.raw?.req?.url ?? (typeof request.url === 'string' ? request.url : '');
    if (PLAIN_PATH.test(raw) && !DOT_SEGMENT.test(raw)) {
        return raw;
    }

    const url = request.url instanceof URL ? request.url : new URL(String(request.url ?? raw), 'http://localhost');
    return redactedUrl(url.pathname, url.searchParams);
}

const CENSOR = '[Redacted]';
/** Fields a logged object's values never show, one level down (as pino's redact paths `*.authorization` did). */
const SECRET_FIELDS = ['authorization', 'cookie', 'password', 'token'];

/** A shallow copy keeping the prototype, so that an Error or a class with `toJSON` is written as before. */
function copied(value: object): Record<string, unknown> {
    return Object.assign(Object.create(Object.getPrototypeOf(value) as object | null) as object, value) as Record<string, unknown>;
}

/** The value with its secret fields censored, copied only when it has one: the caller's object is left as it is. */
function withoutSecrets(value: unknown): unknown {
    if (typeof value !== 'object' || value === null) {
        return value;
    }

    let copy: Record<string, unknown> | undefined;
    for (const field of SECRET_FIELDS) {
        if (Object.prototype.propertyIsEnumerable.call(value, field)) {
            copy ??= copied(value);
            copy[field] = CENSOR;
        }
    }

    return copy ?? value;
}

/** Request and response are logged by the serializers below, field by field; an error by its serializer. */
const SERIALIZED_KEYS = new Set(['err', 'req', 'res']);

/**
 * What pino's `redact` paths `*.authorization`, `*.cookie`, `*.password` and `*.token` did, without their cost: with a
 * wildcard they ran a redactor over every value of every line (numbers and message included), re-parsing the paths
 * each time. Serialized keys are left to their serializers, which run after this.
 */
function redactedLine(line: Record<string, unknown>): Record<string, unknown> {
    let redacted: Record<string, unknown> | undefined;
    for (const key of Object.keys(line)) {
        if (SERIALIZED_KEYS.has(key)) {
            continue;
        }

        const value = line[key];
        const safe = withoutSecrets(value);
        if (safe !== value) {
            redacted ??= { ...line };
            redacted[key] = safe;
        }
    }

    return redacted ?? line;
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
                err: (error: unknown) => withoutSecrets(loggableError(error)),
                req: (request: LoggedRequest) => ({
                    id: request.id,
                    method: request.method,
                    url: loggedUrl(request),
                    remoteAddress: request.remoteAddress,
                }),
                res: (response: { statusCode?: number }) => ({ statusCode: response.statusCode }),
            },
            wrapSerializers: false,
            formatters: { log: redactedLine },
            // Standard output written in batches, off the request's path (lib/log-stream.ts says why).
            stream: batchedStdout() as unknown as NodeJS.WriteStream,
        },
    };
}
