/**
 * The admin API under /api/v3: finds the operation in authentik's schema, authenticates the Bearer token, checks
 * path, query and body against the schema (a refusal is DRF's 400, or 404 for a path parameter, and a violation),
 * runs the operation, and checks the answer against the schema too (a mismatch is a violation: a stand-in bug).
 *
 * Who may do what, as authentik's object permissions work out for a user without any: `objects` operations list
 * nothing, find nothing (404) and may not create (403) for a user who is not a superuser; `superuser` ones answer 403.
 */
import { ApiError, forbidden, notFound } from './errors.ts';
import { isSuperuser } from './directory.ts';
import type { Json, Reply } from './http.ts';
import { paginated } from './pagination.ts';
import type { Operation, Router } from './schema.ts';
import type { SchemaValidator } from './schema-validation.ts';
import type { Store, UserRecord } from './store.ts';
import { authenticate } from './tokens.ts';

export type Access = 'anonymous' | 'user' | 'objects' | 'superuser';

export interface ApiContext {
    store: Store;
    /** The token's user; for an anonymous request to an operation that allows it, Django's AnonymousUser. */
    caller: UserRecord;
    operation: Operation;
    /** Path parameters, typed as the schema says. */
    params: Record<string, unknown>;
    /** Query parameters, typed, with the schema's defaults. */
    query: Record<string, unknown>;
    /** The JSON body, keeping only the fields the request schema names (DRF ignores the others). */
    body: Json;
}

export interface ApiOperation {
    access: Access;
    run(context: ApiContext): { status: number; body?: unknown };
}

export type ApiOperations = Record<string, ApiOperation>;

export interface ApiRequest {
    method: string;
    /** The path below /api/v3, starting with `/`. */
    path: string;
    query: URLSearchParams;
    authorization: string | undefined;
    contentType: string | undefined;
    body: string;
}

const ANONYMOUS: UserRecord = {
    pk: -1,
    uuid: '00000000-0000-0000-0000-000000000000',
    username: 'AnonymousUser',
    name: '',
    email: '',
    password: '',
    is_active: false,
    type: 'internal',
    path: 'users',
    attributes: {},
    date_joined: new Date(0).toISOString(),
    last_login: null,
    last_updated: new Date(0).toISOString(),
    password_change_date: new Date(0).toISOString(),
};

export class AdminApi {
    constructor(
        private readonly store: Store,
        private readonly router: Router,
        private readonly validator: SchemaValidator,
        private readonly operations: ApiOperations,
        /** Told every refused request and every answer that does not match the schema. */
        private readonly violation: (text: string) => void,
    ) {}

    handle(request: ApiRequest): Reply {
        const where = `${request.method} /api/v3${request.path}`;
        let operation: Operation | undefined;
        let reply: Reply;
        try {
            const route = this.#route(request);
            operation = route.operation;
            reply = this.#run(route.operation, route.params, request);
        } catch (error) {
            if (!(error instanceof ApiError)) {
                this.violation(`${where}: the stand-in failed: ${(error as Error).stack ?? String(error)}`);
                return { status: 500, body: { detail: 'A server error occurred.' } };
            }

            if (error.violation) {
                this.violation(`${where}: ${error.violation}`);
            }

            reply = { status: error.status, body: error.body };
        }

        // Success must be declared; errors the schema does not declare (404 on every object, 405, 415) are DRF's own.
        const problem =
            operation && (reply.status < 300 || operation.responses.has(reply.status))
                ? this.validator.response(operation, reply.status, reply.body)
                : null;
        if (problem) {
            this.violation(`${where}: the stand-in's ${reply.status} answer does not match the schema: ${problem}`);
        }

        return reply;
    }

    #route(request: ApiRequest): { operation: Operation; params: Record<string, string> } {
        const route = this.router.route(request.method, request.path);
        if (route === 'no-path') throw notFound();
        if (route === 'no-method') throw new ApiError(405, { detail: `Method "${request.method}" not allowed.` });
        return route;
    }

    #run(operation: Operation, rawParams: Record<string, string>, request: ApiRequest): Reply {
        const served = this.operations[operation.id];
        if (!served) {
            throw new ApiError(
                501,
                { detail: `the authentik stand-in does not serve ${operation.id}` },
                `${operation.id} exists in authentik's schema but the stand-in does not serve it`,
            );
        }

        // As DRF: authentication and permissions first, then the lookup, then the serializer.
        const caller = this.#caller(operation, request.authorization);
        const superuser = isSuperuser(this.store, caller);
        if (served.access === 'superuser' && !superuser) throw forbidden();
        const restricted = served.access === 'objects' && !superuser;
        if (restricted && operation.id.endsWith('_create')) throw forbidden();
        const params = this.#params(operation, rawParams);
        const query = this.#query(operation, request.query);
        if (restricted) {
            // What a user without object permissions gets: nothing listed, nothing found.
            if (operation.id.endsWith('_list')) return { status: 200, body: paginated([], query) };
            throw notFound();
        }

        const body = this.#body(operation, request);
        return served.run({ store: this.store, caller, operation, params, query, body });
    }

    #caller(operation: Operation, authorization: string | undefined): UserRecord {
        const user = authenticate(this.store, authorization);
        if (user === 'invalid') throw forbidden('Token invalid/expired');
        if (user !== 'missing') return user;
        if (!operation.needsToken) return ANONYMOUS;
        throw forbidden('Authentication credentials were not provided.');
    }

    #params(operation: Operation, raw: Record<string, string>): Record<string, unknown> {
        const params: Record<string, unknown> = {};
        for (const parameter of operation.parameters.filter((candidate) => candidate.in === 'path')) {
            const checked = this.validator.parameter(operation, parameter, [raw[parameter.name] ?? '']);
            if ('error' in checked) {
                // Django's URL lookup turns a malformed key into 404, never 400.
                throw new ApiError(404, { detail: 'Not found.' }, `path parameter ${parameter.name}: ${checked.error}`);
            }

            params[parameter.name] = checked.value;
        }

        return params;
    }

    #query(operation: Operation, search: URLSearchParams): Record<string, unknown> {
        const query: Record<string, unknown> = {};
        const errors: Record<string, string[]> = {};
        for (const parameter of operation.parameters.filter((candidate) => candidate.in === 'query')) {
            const raw = search.getAll(parameter.name);
            if (raw.length === 0) {
                if (parameter.schema.default !== undefined) query[parameter.name] = parameter.schema.default;
                continue;
            }

            const checked = this.validator.parameter(operation, parameter, raw);
            if ('error' in checked) {
                errors[parameter.name] = [checked.error];
            } else {
                query[parameter.name] = checked.value;
            }
        }

        if (Object.keys(errors).length > 0) {
            throw new ApiError(400, errors, `query ${JSON.stringify(errors)}`);
        }

        return query;
    }

    #body(operation: Operation, request: ApiRequest): Json {
        if (!operation.body) {
            return {};
        }

        let body: unknown = {};
        if (request.body.trim() !== '') {
            if (!(request.contentType ?? '').includes('application/json')) {
                throw new ApiError(
                    415,
                    { detail: `Unsupported media type "${request.contentType ?? ''}" in request.` },
                    'body is not JSON',
                );
            }

            try {
                body = JSON.parse(request.body);
            } catch (error) {
                throw new ApiError(400, { detail: `JSON parse error - ${(error as Error).message}` }, 'body is not valid JSON');
            }
        }

        const errors = this.validator.body(operation, body);
        if (errors) {
            throw new ApiError(400, errors, `body ${JSON.stringify(errors)}`);
        }

        const writable = new Set(this.validator.writableFields(operation));
        return Object.fromEntries(Object.entries(body as Json).filter(([key]) => writable.has(key)));
    }
}
