/**
 * The runner protocol Gitea's runners speak: Connect unary calls with JSON bodies (proto3 JSON mapping,
 * lowerCamelCase, 64-bit integers as strings) under /api/actions. Register trades a registration token for
 * a runner; every other call authenticates with the `x-runner-uuid` and `x-runner-token` headers.
 */
import type { Plugin, Request, ResponseObject, ResponseToolkit, RouteOptionsPayload } from '@hapi/hapi';

import { RegistrationError, type RunnerRow, runners } from '../domain/actions/runner-service.ts';

const PREFIX = '/api/actions';

/** The runner.v1.RunnerService procedures this server does not serve yet: 501, where an unknown name is a 404. */
const UNIMPLEMENTED_PROCEDURES = new Set(['UpdateTask', 'UpdateLog']);

/** A runner's labels are kept as JSON in a TEXT column (65,535 bytes on MariaDB). */
const MAX_LABELS_BYTES = 65_535;

type ConnectCode = 'invalid_argument' | 'unauthenticated' | 'not_found' | 'unimplemented' | 'internal';

const HTTP_STATUS: Record<ConnectCode, number> = {
    invalid_argument: 400,
    unauthenticated: 401,
    not_found: 404,
    unimplemented: 501,
    internal: 500,
};

/** Connect answers a codec it does not speak with a bare 415. */
class UnsupportedMediaType extends Error {}

class ConnectError extends Error {
    constructor(
        readonly code: ConnectCode,
        message: string,
    ) {
        super(message);
    }
}

type Message = Record<string, unknown>;

/** proto3 JSON accepts a field under its JSON name or its proto name. */
function field(message: Message, jsonName: string, protoName = jsonName): unknown {
    return message[jsonName] ?? message[protoName];
}

function text(message: Message, jsonName: string, protoName?: string): string {
    const value = field(message, jsonName, protoName);
    if (value === undefined || value === null) {
        return '';
    }

    if (typeof value !== 'string') {
        throw new ConnectError('invalid_argument', `${jsonName}: a string is expected`);
    }

    return value;
}

function texts(message: Message, jsonName: string, protoName?: string): string[] {
    const value = field(message, jsonName, protoName) ?? [];
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
        throw new ConnectError('invalid_argument', `${jsonName}: a list of strings is expected`);
    }

    return value as string[];
}

function labels(message: Message): string[] {
    const value = texts(message, 'labels');
    if (Buffer.byteLength(JSON.stringify(value), 'utf8') > MAX_LABELS_BYTES) {
        throw new ConnectError('invalid_argument', `labels: longer than ${MAX_LABELS_BYTES} bytes`);
    }

    return value;
}

/** The Runner message; proto3 JSON leaves out empty fields and writes int64 as a string. */
function runnerMessage(runner: RunnerRow, token?: string): Message {
    const message: Message = { id: String(runner.id), uuid: runner.uuid, name: runner.name };
    if (token) {
        message.token = token;
    }

    if (runner.version) {
        message.version = runner.version;
    }

    if (runner.labels.length > 0) {
        message.labels = runner.labels;
    }

    if (runner.ephemeral) {
        message.ephemeral = true;
    }

    return message;
}

function parseBody(request: Request): Message {
    const type = String(request.headers['content-type'] ?? '')
        .split(';')[0]
        ?.trim()
        .toLowerCase();
    if (type !== 'application/json') {
        throw new UnsupportedMediaType(type);
    }

    const raw = Buffer.isBuffer(request.payload) ? request.payload.toString('utf8') : '';
    try {
        const parsed: unknown = raw.trim() === '' ? {} : JSON.parse(raw);
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
            throw new Error('not an object');
        }

        return parsed as Message;
    } catch {
        throw new ConnectError('invalid_argument', 'the body is not a JSON message');
    }
}

async function authenticated(request: Request): Promise<RunnerRow> {
    const uuid = String(request.headers['x-runner-uuid'] ?? '');
    const token = String(request.headers['x-runner-token'] ?? '');
    const runner = await runners(request.server).authenticate(uuid, token);
    if (!runner) {
        throw new ConnectError('unauthenticated', 'unregistered runner');
    }

    return runner;
}

type Procedure = (request: Request, message: Message) => Promise<Message>;

const RUNNER_PROCEDURES: Record<string, Procedure> = {
    async Register(request, message) {
        const { runner, token } = await runners(request.server).register({
            name: text(message, 'name'),
            token: text(message, 'token'),
            version: text(message, 'version'),
            labels: labels(message),
            ephemeral: field(message, 'ephemeral') === true,
        });
        return { runner: runnerMessage(runner, token) };
    },
    async Declare(request, message) {
        const runner = await authenticated(request);
        const declared = await runners(request.server).declare(runner, text(message, 'version'), labels(message));
        return { runner: runnerMessage(declared) };
    },
    // No workflow is dispatched to runners yet: the answer is always "no task", at tasks version 0.
    async FetchTask(request) {
        await authenticated(request);
        return {};
    },
};

/** Own names only: `constructor` or `toString` are no procedures. */
function procedureNamed(name: string): Procedure {
    const procedure = Object.hasOwn(RUNNER_PROCEDURES, name) ? RUNNER_PROCEDURES[name] : undefined;
    if (procedure) {
        return procedure;
    }

    if (UNIMPLEMENTED_PROCEDURES.has(name)) {
        throw new ConnectError('unimplemented', `runner.v1.RunnerService.${name} is not implemented`);
    }

    throw new ConnectError('not_found', `no procedure runner.v1.RunnerService.${name.slice(0, 100)}`);
}

function answer(h: ResponseToolkit, body: Message, status = 200): ResponseObject {
    return h.response(body).code(status).type('application/json');
}

function failure(h: ResponseToolkit, error: unknown): ResponseObject {
    if (error instanceof UnsupportedMediaType) {
        return h.response().code(415).header('Accept-Post', 'application/json');
    }

    if (error instanceof ConnectError || error instanceof RegistrationError) {
        return answer(h, { code: error.code, message: error.message }, HTTP_STATUS[error.code]);
    }

    throw error;
}

// Runners authenticate with their own headers, never with a browser's cookies: the deploy manager's CSRF check does not apply.
const NO_CSRF = { crumb: false };

export const runnerProtocolPlugin: Plugin<undefined> = {
    name: 'git-actions-runner-protocol',
    register(server) {
        const raw: RouteOptionsPayload = { parse: false, output: 'data' };
        server.route({
            method: 'POST',
            path: `${PREFIX}/runner.v1.RunnerService/{procedure}`,
            options: { auth: false, payload: raw, plugins: NO_CSRF },
            async handler(request, h) {
                try {
                    return answer(h, await procedureNamed(request.params.procedure as string)(request, parseBody(request)));
                } catch (error) {
                    return failure(h, error);
                }
            },
        });
        // Runners ping before they register.
        server.route({
            method: 'POST',
            path: `${PREFIX}/ping.v1.PingService/Ping`,
            options: { auth: false, payload: raw, plugins: NO_CSRF },
            handler(request, h) {
                try {
                    return answer(h, { data: `Hello, ${text(parseBody(request), 'data')}!` });
                } catch (error) {
                    return failure(h, error);
                }
            },
        });
    },
};
