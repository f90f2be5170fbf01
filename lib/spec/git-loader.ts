import Fs from 'node:fs';
import Path from 'node:path';

import Boom from '@hapi/boom';
import type { Lifecycle, Plugin, RouteOptions, RouteOptionsValidate, Server, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';

import { validationFailAction } from '../errors.ts';
import { GiteaBinder } from './gitea-binding.ts';
import { loadHandlers, setUpDomain } from './handlers.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { type Definitions, type JsonSchema, SchemaConverter } from './schema-to-joi.ts';

export interface SwaggerParameter extends Omit<JsonSchema, 'required'> {
    name: string;
    in: 'path' | 'query' | 'header' | 'body' | 'formData';
    required?: boolean;
    schema?: JsonSchema;
    collectionFormat?: 'csv' | 'multi';
    /** Our own: Gitea's handler reads this query parameter itself (leniently, or with its own message). */
    'x-gatehouse-handler-parsed'?: boolean;
}

export interface SwaggerOperation {
    operationId: string;
    tags: string[];
    summary?: string;
    consumes?: string[];
    produces?: string[];
    parameters?: SwaggerParameter[];
    responses: Record<string, { $ref?: string; schema?: JsonSchema }>;
    deprecated?: boolean;
    'x-gatehouse-access'?: unknown;
}

export interface SwaggerDocument {
    swagger: '2.0';
    basePath: string;
    paths: Record<string, Record<string, SwaggerOperation>>;
    definitions: Definitions;
    responses: Record<string, { schema?: JsonSchema }>;
}

export interface GitOperation extends SwaggerOperation {
    method: string;
    path: string;
    tag: string;
}

export function readSwagger(file: string): SwaggerDocument {
    const document = JSON.parse(Fs.readFileSync(file, 'utf8')) as SwaggerDocument;
    if (document.swagger !== '2.0' || !document.paths || !document.basePath) {
        throw new Error(`${file} is not a Swagger 2.0 document`);
    }

    return document;
}

export function gitOperations(document: SwaggerDocument): GitOperation[] {
    const operations: GitOperation[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(item)) {
            const tag = operation.tags?.[0];
            if (!tag || !operation.operationId) {
                throw new Error(`${method.toUpperCase()} ${path} needs an operationId and a tag`);
            }

            operations.push({ ...operation, method: method.toUpperCase(), path, tag });
        }
    }

    return operations;
}

/** A path, query or header parameter; its `default` is what Gitea's handler takes when the parameter is missing. */
function parameterSchema(parameter: SwaggerParameter, converter: SchemaConverter): Joi.Schema {
    const { required: _required, ...typed } = parameter;
    let joi = converter.toJoi(parameter.schema ?? typed).label(parameter.name);
    if (parameter.type === 'array' && parameter.in === 'query') {
        joi = (joi as Joi.ArraySchema).single();
    }

    if (parameter.default !== undefined) {
        joi = joi.default(parameter.default);
    }

    return parameter.required ? joi.required() : joi;
}

/**
 * Builds hapi's validate options (path, query, headers, body) from an operation's parameters. Each joi schema is
 * built by the first request that is validated with it (see builtOnFirstUse): most of the API's 450 operations are
 * never called on a given server, and building them all was a tenth of the start and a few MB kept for nothing.
 */
export function buildValidation(operation: SwaggerOperation & { method?: string }, converter: SchemaConverter): RouteOptionsValidate {
    const groups: Record<'path' | 'query' | 'header', SwaggerParameter[]> = { path: [], query: [], header: [] };
    let body: SwaggerParameter | undefined;
    for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'body') {
            body = parameter;
        } else if (parameter.in !== 'formData') {
            groups[parameter.in].push(parameter);
        }
    }

    // A group without parameters is not validated at all: joi would only check that it is an object.
    const validate: RouteOptionsValidate = { failAction: validationFailAction };
    if (groups.query.length > 0) {
        validate.query = builtOnFirstUse(() => parametersSchema(groups.query, converter).unknown(true));
    }

    if (groups.header.length > 0) {
        validate.headers = builtOnFirstUse(() => parametersSchema(groups.header, converter).unknown(true));
    }

    if (groups.path.length > 0) {
        validate.params = builtOnFirstUse(() => parametersSchema(groups.path, converter));
    }

    if (body) {
        validate.payload = isTextBody(operation, body, converter)
            ? textValidator(body, converter)
            : boundValidator(operation, body, converter);
    }

    return validate;
}

/** The object of a group of parameters, each by its name (a header's in lower case, as hapi holds headers). */
function parametersSchema(parameters: SwaggerParameter[], converter: SchemaConverter): Joi.ObjectSchema {
    const keys: Record<string, Joi.Schema> = {};
    for (const parameter of parameters) {
        const name = parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name;
        keys[name] = parameter['x-gatehouse-handler-parsed'] ? Joi.any() : parameterSchema(parameter, converter);
    }

    return Joi.object(keys);
}

/** A raw body (`/markdown/raw`), which Gitea reads as it comes, whatever its type. */
function isTextBody(operation: SwaggerOperation, body: SwaggerParameter, converter: SchemaConverter): boolean {
    return (operation.consumes ?? []).includes('text/plain') || converter.resolve(body.schema ?? {}).type === 'string';
}

function textValidator(body: SwaggerParameter, converter: SchemaConverter) {
    let joi: Joi.Schema | undefined;
    return async (value: unknown) => {
        joi ??= converter.toJoi(body.schema ?? { type: 'string' });
        const input = Buffer.isBuffer(value) ? value.toString('utf8') : (value ?? '');
        return await joi.validateAsync(input, { abortEarly: true, convert: true });
    };
}

/** An option struct's body, bound as Gitea binds it (JSON or form, by Content-Type), then checked by its rules. */
function boundValidator(operation: SwaggerOperation & { method?: string }, body: SwaggerParameter, converter: SchemaConverter) {
    const bodySchema = body.schema ?? { type: 'object' };
    let checks: { binder: GiteaBinder; joi: Joi.Schema } | undefined;
    const method = (operation.method ?? 'POST').toUpperCase();
    return async (value: unknown, options: Joi.ValidationOptions) => {
        checks ??= { binder: new GiteaBinder(bodySchema, converter), joi: converter.toJoi(bodySchema) };
        // hapi hands a validator the request's other parts as `context`.
        const request = (options.context ?? {}) as { headers?: Record<string, string>; query?: Record<string, unknown> };
        const input = await checks.binder.bind({
            method,
            contentType: request.headers?.['content-type'],
            body: Buffer.isBuffer(value) ? value : null,
            query: request.query ?? {},
        });
        return await checks.joi.validateAsync(input, { abortEarly: true, convert: true });
    };
}

/** How routes authenticate: a hapi strategy tried on every route, and a check built from `x-gatehouse-access`. */
export interface GitAuthOptions {
    strategy: string;
    accessCheck(access: unknown): Lifecycle.Method;
}

export interface GitApiOptions {
    swaggerFile: string;
    /** Where the handlers live: one folder per Swagger tag, holding only handler files (one per resource). */
    handlersRoot: string;
    /** Where the domain lives: one folder per concept, each set up by its `setup.ts` before the routes. */
    domainRoot?: string;
    /** The concepts whose `setup.ts` runs, in this order (see setUpDomain). */
    setupOrder?: readonly string[];
    auth?: GitAuthOptions;
}

/** One hapi plugin per Swagger tag (`git-admin`, `git-miscellaneous`...), its handlers found by operationId. */
export async function registerGitApi(
    server: Server,
    { swaggerFile, handlersRoot, domainRoot, setupOrder = [], auth }: GitApiOptions,
): Promise<string[]> {
    if (domainRoot) {
        await setUpDomain(domainRoot, server, setupOrder);
    }

    const document = readSwagger(swaggerFile);
    normalisePaths(server, document.basePath);
    // A body field's default in Gitea's document describes what Gitea does without it (`login_name: "empty"`, where
    // Gitea keeps ""): written into the request, it would invent a value the caller never sent.
    const converter = new SchemaConverter(document.definitions, { fillDefaults: false });
    const byTag = new Map<string, GitOperation[]>();
    for (const operation of gitOperations(document)) {
        byTag.set(operation.tag, [...(byTag.get(operation.tag) ?? []), operation]);
    }

    const missing: string[] = [];
    for (const [tag, operations] of byTag) {
        const handlers = await loadHandlers(
            Path.join(handlersRoot, tag),
            operations.map((operation) => operation.operationId),
        );
        const plugin: Plugin<undefined> = {
            name: `git-${tag}`,
            register(pluginServer) {
                for (const operation of operations) {
                    const handler = handlers.get(operation.operationId) ?? notImplemented(operation.operationId);
                    if (!handlers.has(operation.operationId)) {
                        missing.push(operation.operationId);
                    }

                    pluginServer.route(routeFor(document, operation, converter, handler, auth));
                }
            },
        };
        await server.register(plugin);
    }

    return missing.sort();
}

/**
 * Gitea's router reads a path without its trailing slashes and with repeated slashes made one
 * (`/api/v1/licenses/` is `/api/v1/licenses`), so a known path with a method it does not serve answers 405.
 */
function normalisePaths(server: Server, basePath: string): void {
    server.ext('onRequest', (request, h) => {
        const path = request.path;
        if (!path.endsWith('/') && !path.includes('//')) {
            return h.continue;
        }

        const normalised = path.replace(/\/{2,}/g, '/').replace(/(.)\/+$/, '$1');
        if (normalised === basePath || normalised.startsWith(`${basePath}/`)) {
            request.setUrl(`${normalised}${request.url.search}`);
        }

        return h.continue;
    });
}

function routeFor(
    document: SwaggerDocument,
    operation: GitOperation,
    converter: SchemaConverter,
    handler: Lifecycle.Method,
    auth: GitAuthOptions | undefined,
): ServerRoute {
    return {
        method: operation.method as ServerRoute['method'],
        path: `${document.basePath}${operation.path}`,
        options: {
            id: operation.operationId,
            description: operation.summary,
            tags: ['api', 'git', operation.tag],
            validate: buildValidation(operation, converter),
            payload: payloadOptions(operation),
            auth: auth ? { strategy: auth.strategy, mode: 'optional' } : false,
            ext: auth ? { onPostAuth: { method: auth.accessCheck(operation['x-gatehouse-access']) } } : undefined,
            // Gitea renders an empty document as a 200 with an empty body, not as a 204.
            response: operation.produces?.includes('text/html') ? { emptyStatusCode: 200 as const } : undefined,
            handler,
        },
    };
}

/**
 * How a route reads its body: unparsed, to its validator. A raw body (`/markdown/raw`) is read whatever its declared
 * type, as Gitea reads it; an option struct's body is bound as Gitea does it, the Content-Type deciding, not hapi.
 * `override` keeps hapi from refusing a type, or a malformed header, itself: it would do so before the access check,
 * answering an anonymous caller 415 where Gitea answers 401. A body sent to an operation that takes none is read and
 * ignored, whatever it holds.
 */
function payloadOptions(operation: GitOperation): RouteOptions['payload'] {
    if (operation.method === 'GET' || operation.method === 'HEAD') {
        return undefined;
    }

    const body = operation.parameters?.some((parameter) => parameter.in === 'body');
    return { parse: body ? 'gunzip' : false, output: 'data', override: 'application/octet-stream' };
}

function notImplemented(operationId: string): Lifecycle.Method {
    return () => {
        throw Boom.notImplemented(`not implemented: ${operationId}`);
    };
}
