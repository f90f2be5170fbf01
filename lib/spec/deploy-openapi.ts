/**
 * The deploy API's OpenAPI 3.0 document, made from the same YAML route specs and named schemas the routes are
 * registered and validated from (served at /api/openapi.json; the web UI's types are generated from it).
 */
import type { DeployGroupSpec, DeployRouteSpec } from './deploy-loader.ts';
import { rewriteSchema } from './schema-rewrite.ts';
import type { Definitions, JsonSchema } from './schema-to-joi.ts';

type OpenApiSchema = Record<string, unknown>;

export interface OpenApiDocument {
    openapi: '3.0.3';
    info: { title: string; version: string; description: string };
    paths: Record<string, Record<string, OpenApiSchema>>;
    components: { schemas: Record<string, OpenApiSchema> };
}

const ERROR_SCHEMA: JsonSchema = {
    type: 'object',
    required: ['error'],
    properties: { error: { type: 'string', description: 'what went wrong, in words' } },
};

export function deployOpenApiDocument(specs: readonly DeployGroupSpec[], definitions: Definitions): OpenApiDocument {
    const paths: OpenApiDocument['paths'] = {};
    for (const spec of specs) {
        for (const route of spec.routes) {
            const path = `${spec.prefix}${route.path}`.replace(/\{(\w+)\*?\d*\}/g, '{$1}');
            paths[path] ??= {};
            paths[path][route.method.toLowerCase()] = operation(spec.group, route);
        }
    }

    const schemas = Object.fromEntries(
        Object.entries({ ...definitions, Error: ERROR_SCHEMA }).map(([name, schema]) => [name, toOpenApi(schema)]),
    );
    return {
        openapi: '3.0.3',
        info: {
            title: 'Gatehouse deploy API',
            version: '1',
            description: 'The application deployment manager. Each operationId is the handler of plugins/deploy/routes/<tag>/handlers.ts.',
        },
        paths,
        components: { schemas },
    };
}

function operation(group: string, route: DeployRouteSpec): OpenApiSchema {
    const body = route.response ? { content: { 'application/json': { schema: toOpenApi(route.response) } } } : {};
    return {
        operationId: route.handler,
        tags: [group],
        ...(route.summary ? { summary: route.summary } : {}),
        'x-gatehouse-role': route.role,
        ...(route.run ? { 'x-gatehouse-run': true } : {}),
        ...(route.audit ? { 'x-gatehouse-audit': route.audit } : {}),
        parameters: [...parameters('path', route.params), ...parameters('query', route.query)],
        ...(route.payload ? { requestBody: requestBody(route) } : {}),
        responses: {
            [String(route.status)]: { description: route.status === 204 ? 'No content' : 'Success', ...body },
            default: { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
    };
}

function parameters(where: 'path' | 'query', schema: JsonSchema | undefined): OpenApiSchema[] {
    const required = new Set(schema?.required ?? []);
    return Object.entries(schema?.properties ?? {}).map(([name, property]) => ({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(property.description ? { description: property.description } : {}),
        schema: toOpenApi(property),
    }));
}

function requestBody(route: DeployRouteSpec): OpenApiSchema {
    const type = route.payloadType === 'text' ? 'text/plain' : 'application/json';
    return {
        required: (route.payload?.required ?? []).length > 0,
        content: { [type]: { schema: toOpenApi(route.payload as JsonSchema) } },
    };
}

/** A spec schema as OpenAPI 3.0 reads it: references point at components.schemas. */
function toOpenApi(value: unknown): OpenApiSchema {
    return rewriteSchema(value, '#/components/schemas/', nullableType) as OpenApiSchema;
}

/** JSON Schema's `type: [string, 'null']` is OpenAPI 3.0's `nullable`. */
function nullableType(schema: Record<string, unknown>): Record<string, unknown> {
    const { type } = schema;
    if (Array.isArray(type) && type.includes('null') && type.length === 2) {
        return { ...schema, type: type.find((name) => name !== 'null') as unknown, nullable: true };
    }

    return schema;
}
