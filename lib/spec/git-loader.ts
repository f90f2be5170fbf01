import Fs from 'node:fs';
import Path from 'node:path';

import Boom from '@hapi/boom';
import type { Lifecycle, Plugin, RouteOptionsValidate, Server, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';

import { validationFailAction } from '../errors.ts';
import { loadHandlers, setUpDomain } from './handlers.ts';
import { canonicaliseKeys, type Definitions, type JsonSchema, SchemaConverter } from './schema-to-joi.ts';

export interface SwaggerParameter extends Omit<JsonSchema, 'required'> {
    name: string;
    in: 'path' | 'query' | 'header' | 'body' | 'formData';
    required?: boolean;
    schema?: JsonSchema;
    collectionFormat?: 'csv' | 'multi';
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

/** Paging is lenient in Gitea (a bad page is page 1), so the paging helper parses these, not joi. */
const LENIENT_QUERY = new Set(['page', 'limit']);

function parameterSchema(parameter: SwaggerParameter, converter: SchemaConverter): Joi.Schema {
    const { required: _required, ...typed } = parameter;
    let joi = converter.toJoi(parameter.schema ?? typed).label(parameter.name);
    if (parameter.type === 'array' && parameter.in === 'query') {
        joi = (joi as Joi.ArraySchema).single();
    }

    return parameter.required ? joi.required() : joi;
}

/** Builds hapi's validate options (path, query, headers, body) from an operation's parameters. */
export function buildValidation(operation: SwaggerOperation, converter: SchemaConverter): RouteOptionsValidate {
    const groups: Record<'path' | 'query' | 'header', Record<string, Joi.Schema>> = { path: {}, query: {}, header: {} };
    let body: SwaggerParameter | undefined;
    for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'body') {
            body = parameter;
            continue;
        }

        if (parameter.in === 'formData') {
            continue;
        }

        const schema = parameter.in === 'query' && LENIENT_QUERY.has(parameter.name) ? Joi.any() : parameterSchema(parameter, converter);
        groups[parameter.in][parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name] = schema;
    }

    // A group without parameters is not validated at all: joi would only check that it is an object.
    const validate: RouteOptionsValidate = { failAction: validationFailAction };
    if (Object.keys(groups.query).length > 0) {
        validate.query = Joi.object(groups.query).unknown(true);
    }

    if (Object.keys(groups.header).length > 0) {
        validate.headers = Joi.object(groups.header).unknown(true);
    }

    if (Object.keys(groups.path).length > 0) {
        validate.params = Joi.object(groups.path);
    }

    if (body) {
        validate.payload = bodyValidator(body, converter, operation.consumes ?? []);
    }

    return validate;
}

function bodyValidator(body: SwaggerParameter, converter: SchemaConverter, consumes: string[]) {
    const bodySchema = body.schema ?? { type: 'object' };
    const resolved = converter.resolve(bodySchema);
    const joi = converter.toJoi(bodySchema);
    const isText = consumes.includes('text/plain') || resolved.type === 'string';
    return async (value: unknown) => {
        let input: unknown;
        if (isText) {
            input = Buffer.isBuffer(value) ? value.toString('utf8') : (value ?? '');
        } else if (value === null || value === undefined) {
            // Go binds an empty body to the zero value, so the first required field is what fails.
            input = resolved.type === 'array' ? [] : {};
        } else {
            input = canonicaliseKeys(value, bodySchema, converter);
        }

        const { value: validated, error } = joi.validate(input, { abortEarly: true, convert: true });
        if (error) {
            throw error;
        }

        return validated;
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
    auth?: GitAuthOptions;
}

/** One hapi plugin per Swagger tag (`git-admin`, `git-miscellaneous`...), its handlers found by operationId. */
export async function registerGitApi(server: Server, { swaggerFile, handlersRoot, domainRoot, auth }: GitApiOptions): Promise<string[]> {
    if (domainRoot) {
        await setUpDomain(domainRoot, server);
    }

    const document = readSwagger(swaggerFile);
    const converter = new SchemaConverter(document.definitions);
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

function routeFor(
    document: SwaggerDocument,
    operation: GitOperation,
    converter: SchemaConverter,
    handler: Lifecycle.Method,
    auth: GitAuthOptions | undefined,
): ServerRoute {
    const acceptsText = operation.consumes?.includes('text/plain') ?? false;
    return {
        method: operation.method as ServerRoute['method'],
        path: `${document.basePath}${operation.path}`,
        options: {
            id: operation.operationId,
            description: operation.summary,
            tags: ['api', 'git', operation.tag],
            validate: buildValidation(operation, converter),
            // A raw body is read whatever its declared type, as Gitea reads it.
            payload: acceptsText ? { allow: ['text/plain', 'application/octet-stream'] } : undefined,
            plugins: { gatehouse: { operation } },
            auth: auth ? { strategy: auth.strategy, mode: 'optional' } : false,
            ext: auth ? { onPostAuth: { method: auth.accessCheck(operation['x-gatehouse-access']) } } : undefined,
            // Gitea renders an empty document as a 200 with an empty body, not as a 204.
            response: operation.produces?.includes('text/html') ? { emptyStatusCode: 200 as const } : undefined,
            handler,
        },
    };
}

function notImplemented(operationId: string): Lifecycle.Method {
    return () => {
        throw Boom.notImplemented(`not implemented: ${operationId}`);
    };
}
