import Fs from 'node:fs';
import Path from 'node:path';

import Boom from '@hapi/boom';
import type { Lifecycle, Plugin, RouteOptions, RouteOptionsValidate, Server } from '@hapi/hapi';
import Joi from 'joi';

import { validationFailAction } from '../errors.ts';
import { parseYaml } from '../yaml-cache.ts';
import { deployOpenApiDocument } from './deploy-openapi.ts';
import { loadHandlers, setUpDomain } from './handlers.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { type Definitions, type JsonSchema, SchemaConverter } from './schema-to-joi.ts';

export const ROLES = ['public', 'signed-in', 'viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface DeployRouteSpec {
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
    path: string;
    handler: string;
    role: Role;
    run: boolean;
    summary?: string;
    params?: JsonSchema;
    query?: JsonSchema;
    payload?: JsonSchema;
    payloadType: 'json' | 'text';
    /** The answer's status when it succeeds (200 unless said), and its body's schema (none: no JSON body is declared). */
    status: number;
    response?: JsonSchema;
    /**
     * The audit entry the route makes once its handler has answered (its action), and whether a handler's error is
     * one too (failures); the deploy plugin writes it (see plugins/deploy/audit-trail.ts).
     */
    audit?: RouteAudit;
}

export interface RouteAudit {
    action: string;
    failures: boolean;
}

/** What a route's settings carry for the deploy plugin's extensions: `plugins.gatehouse`. */
export interface DeployRouteSettings {
    role: Role;
    run: boolean;
    audit?: RouteAudit;
}

export interface DeployGroupSpec {
    group: string;
    prefix: string;
    /** The role of the routes that do not name their own. */
    role?: Role;
    routes: DeployRouteSpec[];
}

const jsonSchema = Joi.object().unknown(true);
const AUDIT_ACTION = /^[a-z]+(\.[a-z][a-z-]*)+$/;

const groupSchema = Joi.object<DeployGroupSpec>({
    group: Joi.string()
        .pattern(/^[a-z][a-z0-9-]*$/)
        .required(),
    prefix: Joi.string()
        .pattern(/^\/[a-z0-9/-]*$/)
        .required(),
    role: Joi.string().valid(...ROLES),
    routes: Joi.array()
        .items(
            Joi.object({
                method: Joi.string().valid('GET', 'POST', 'PUT', 'PATCH', 'DELETE').required(),
                path: Joi.string()
                    .pattern(/^\/[\w{}/.*-]*$/)
                    .required(),
                handler: Joi.string()
                    .pattern(/^[a-zA-Z]\w*$/)
                    .required(),
                // A route's own role, or else the group's: one of them is required.
                role: Joi.string()
                    .valid(...ROLES)
                    .when('/role', { is: Joi.exist(), then: Joi.any().default(Joi.ref('/role')), otherwise: Joi.required() }),
                run: Joi.boolean().default(false),
                summary: Joi.string(),
                params: jsonSchema,
                query: jsonSchema,
                payload: jsonSchema,
                payloadType: Joi.string().valid('json', 'text').default('json'),
                status: Joi.number().valid(200, 201, 202, 204).default(200),
                response: jsonSchema,
                // `audit: apps.create`, or `audit: { action: apps.access, failures: true }`.
                audit: Joi.alternatives(
                    Joi.string().pattern(AUDIT_ACTION),
                    Joi.object({ action: Joi.string().pattern(AUDIT_ACTION).required(), failures: Joi.boolean().default(false) }),
                ),
            }),
        )
        .min(1)
        .required(),
});

/** Reads and checks one YAML route spec; a mistake stops start-up with the file's name. */
export function readDeploySpec(file: string): DeployGroupSpec {
    const { value, error } = groupSchema.validate(parseYaml(Fs.readFileSync(file, 'utf8')), { abortEarly: true });
    if (error) {
        throw new Error(`${file}: ${error.message}`);
    }

    if (value.group !== Path.basename(file, Path.extname(file))) {
        throw new Error(`${file}: group ${value.group} must match the file's name`);
    }

    for (const route of value.routes) {
        const audit = route.audit as RouteAudit | string | undefined;
        route.audit = typeof audit === 'string' ? { action: audit, failures: false } : audit;
    }

    return value;
}

/** hapi's validate options from a route's spec; each joi schema is built by the first request it validates. */
function validationFor(route: DeployRouteSpec, converter: SchemaConverter): RouteOptionsValidate {
    const validate: RouteOptionsValidate = { failAction: validationFailAction };
    const { params, query, payload } = route;
    if (params) {
        validate.params = builtOnFirstUse(() => converter.toJoi(params));
    }

    if (query) {
        validate.query = builtOnFirstUse(() => converter.toJoi(query));
    }

    if (payload) {
        const schema = builtOnFirstUse(() => converter.toJoi(payload));
        validate.payload = route.payloadType === 'json' ? emptyAsObject(schema) : schema;
    }

    return validate;
}

/**
 * A JSON body that is missing or `null` is validated as `{}`, so that its required fields are still asked for:
 * Joi does not validate the defaults it fills in. `describe` is the schema's, for whoever lists a route's fields.
 */
function emptyAsObject(schema: Joi.Schema) {
    const validate = (value: unknown, options: Joi.ValidationOptions) => schema.validateAsync(value ?? {}, options);
    return Object.assign(validate, { describe: () => schema.describe() });
}

/**
 * The named schemas of `<specsDir>/schemas/*.yaml` (each file a map of name to schema), which the route specs name
 * with `$ref: '#/definitions/<name>'`: a field or an answer declared once, for the routes, the OpenAPI document and
 * the web UI's types alike.
 */
export function readDeploySchemas(specsDir: string): Definitions {
    const folder = Path.join(specsDir, 'schemas');
    const schemas: Definitions = {};
    const files = Fs.existsSync(folder)
        ? Fs.readdirSync(folder)
              .filter((file) => /\.ya?ml$/.test(file))
              .sort()
        : [];
    for (const file of files) {
        const named = parseYaml(Fs.readFileSync(Path.join(folder, file), 'utf8')) as Definitions | null;
        for (const [name, schema] of Object.entries(named ?? {})) {
            if (schemas[name]) {
                throw new Error(`${Path.join(folder, file)}: the schema ${name} is declared twice`);
            }

            schemas[name] = schema;
        }
    }

    return schemas;
}

/** Every route spec of the folder, in the order of their files. */
export function readDeploySpecs(specsDir: string): DeployGroupSpec[] {
    return Fs.readdirSync(specsDir)
        .filter((file) => /\.ya?ml$/.test(file))
        .sort()
        .map((file) => readDeploySpec(Path.join(specsDir, file)));
}

/** The folder's own schemas with those the service makes at start (which may not take a name the files use). */
export function deployDefinitions(specsDir: string, made: Definitions = {}): Definitions {
    const schemas = readDeploySchemas(specsDir);
    for (const name of Object.keys(made)) {
        if (schemas[name]) {
            throw new Error(`${specsDir}/schemas: the schema ${name} is made at start and may not be declared in a file`);
        }
    }

    return { ...schemas, ...made };
}

export interface DeployApiOptions {
    specsDir: string;
    /** Where the handlers live: one folder per YAML group. */
    handlersRoot: string;
    /** Where the domain lives: one folder per concept, each set up by its `setup.ts` before the routes. */
    domainRoot?: string;
    /** The concepts whose `setup.ts` runs, in this order (see setUpDomain). */
    setupOrder?: readonly string[];
    /**
     * Schemas the specs name with `$ref: '#/definitions/<name>'`, made by the service at start: what its drop-in
     * parts decide (the sign-in methods there are) is declared once, where they are found.
     */
    definitions?: Definitions;
    /** The files' schemas and those made, already read together (deployDefinitions): `definitions` is then not read again. */
    allDefinitions?: Definitions;
    /** The session strategy, tried on every route; the role check then decides. */
    authStrategy?: string;
    /** Extensions every deploy route runs besides the role check (the deploy manager's security checks). */
    extensions?: NonNullable<RouteOptions['ext']>;
    /** Where the OpenAPI document of these routes is served (none: not served). */
    documentPath?: string;
    /**
     * Whether each answer is checked against its route's `response` schema; one that does not match becomes a 500
     * naming the difference. The tests turn it on (GATEHOUSE_CHECK_RESPONSES=1), so a schema cannot drift from the code.
     */
    checkResponses?: boolean;
}

/** One hapi plugin per YAML file (`deploy-<group>`), its handlers found by name. Returns handlers still missing. */
export async function registerDeployApi(
    server: Server,
    {
        specsDir,
        handlersRoot,
        domainRoot,
        setupOrder = [],
        definitions = {},
        allDefinitions: given,
        authStrategy,
        extensions = {},
        documentPath,
        checkResponses = false,
    }: DeployApiOptions,
): Promise<string[]> {
    if (domainRoot) {
        await setUpDomain(domainRoot, server, setupOrder);
    }

    const allDefinitions = given ?? deployDefinitions(specsDir, definitions);
    const converter = new SchemaConverter(allDefinitions);
    // Imported only then: the answers are checked in the tests, and with ajv, which a start need not load.
    const responses = checkResponses ? new (await import('./response-checker.ts')).ResponseChecker(allDefinitions) : undefined;
    const missing: string[] = [];
    const specs = readDeploySpecs(specsDir);
    for (const spec of specs) {
        const handlers = await loadHandlers(
            Path.join(handlersRoot, spec.group),
            spec.routes.map((route) => route.handler),
        );
        const plugin: Plugin<undefined> = {
            name: `deploy-${spec.group}`,
            register(pluginServer) {
                for (const route of spec.routes) {
                    const handler = handlers.get(route.handler);
                    if (!handler) {
                        missing.push(`${spec.group}.${route.handler}`);
                    }

                    pluginServer.route({
                        method: route.method,
                        path: `${spec.prefix}${route.path}`,
                        options: {
                            id: `${spec.group}.${route.handler}`,
                            description: route.summary,
                            tags: ['api', 'deploy', spec.group],
                            validate: validationFor(route, converter),
                            response: responses && route.response ? responses.optionsFor(route.response) : undefined,
                            payload: route.payloadType === 'text' ? { allow: ['text/plain', 'application/octet-stream'] } : undefined,
                            plugins: { gatehouse: { role: route.role, run: route.run, audit: route.audit } satisfies DeployRouteSettings },
                            auth: authStrategy ? { strategy: authStrategy, mode: 'try' } : false,
                            // On the routes, not the server: a server-wide extension runs on the git API's requests too.
                            ext: withRoleCheck(extensions),
                            handler: handler ?? notImplemented(route.handler),
                        },
                    });
                }
            },
        };
        await server.register(plugin);
    }

    if (documentPath) {
        // Made for the first request that asks for it, then kept: the specs do not change while the server runs.
        let document: ReturnType<typeof deployOpenApiDocument> | undefined;
        server.route({
            method: 'GET',
            path: documentPath,
            options: { auth: false, id: 'deploy.openApiDocument', description: 'The OpenAPI document of the deploy API' },
            handler: () => (document ??= deployOpenApiDocument(specs, allDefinitions)),
        });
    }

    return missing.sort();
}

/**
 * The role check runs right after authentication, with the other checks of that point and before validation: an
 * anonymous caller gets 401 and a caller without the role 403, never the field messages of a 422.
 */
function withRoleCheck(extensions: NonNullable<RouteOptions['ext']>): NonNullable<RouteOptions['ext']> {
    const { onPostAuth = [] } = extensions;
    return { ...extensions, onPostAuth: [...(Array.isArray(onPostAuth) ? onPostAuth : [onPostAuth]), { method: enforceRole }] };
}

/** A route below `public` needs a signed-in caller; the accounts plugin sets the credentials and their role. */
const enforceRole: Lifecycle.Method = (request, h) => {
    const settings = request.route.settings.plugins as { gatehouse?: { role?: Role } };
    const role = settings.gatehouse?.role;
    if (!role || role === 'public') {
        return h.continue;
    }

    if (!request.auth.isAuthenticated) {
        throw Boom.unauthorized('not signed in');
    }

    const held = (request.auth.credentials as { role?: Role }).role ?? 'viewer';
    if (role !== 'signed-in' && ROLES.indexOf(held) < ROLES.indexOf(role)) {
        throw Boom.forbidden('your role does not allow this');
    }

    return h.continue;
};

function notImplemented(name: string): Lifecycle.Method {
    return () => {
        throw Boom.notImplemented(`not implemented: ${name}`);
    };
}
