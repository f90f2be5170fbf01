import { createRequire } from 'node:module';

import type { SwaggerParameter } from '../../lib/spec/git-loader.ts';

interface SchemaValidator {
    validate(document: unknown): { errors: Array<{ instancePath: string; message?: string }> };
}

// Swagger 2.0's and OpenAPI 3.0's JSON schemas ship with openapi-schema-validator, a dependency of our devDependency openapi-backend:
// it is resolved from there, so that it is found wherever npm puts it.
const fromOpenapiBackend = createRequire(createRequire(import.meta.url).resolve('openapi-backend'));
const { default: OpenApiSchemaValidator } = fromOpenapiBackend('openapi-schema-validator') as {
    default: new (options: { version: number }) => SchemaValidator;
};

type Node = Record<string, unknown>;
type Operation = { operationId?: string; parameters?: SwaggerParameter[] };
type Document = Node & { paths?: Record<string, Record<string, Operation>> };

/**
 * What Swagger 2.0 validation (`@apidevtools/swagger-parser`'s `validate`) finds wrong with a document: its JSON
 * schema, then the rules the schema cannot state (references that resolve, unique operationIds, path parameters that
 * match the path's placeholders, one body, required properties that exist).
 */
export function swaggerDocumentErrors(document: Document): string[] {
    return [
        ...new Set([
            ...openApiSchemaErrors(document, 2),
            ...referenceErrors(document),
            ...operationErrors(document),
            ...requiredErrors(document, ''),
        ]),
    ];
}

/** What the JSON schema of Swagger 2.0 (version 2) or OpenAPI 3.0 (version 3) finds wrong with a document. */
export function openApiSchemaErrors(document: unknown, version: 2 | 3): string[] {
    return new OpenApiSchemaValidator({ version }).validate(document).errors.map((error) => `${error.instancePath} ${error.message}`);
}

function isNode(value: unknown): value is Node {
    return value !== null && typeof value === 'object';
}

function referenceErrors(document: Document, node: unknown = document): string[] {
    if (!isNode(node)) {
        return [];
    }

    const errors = Object.values(node).flatMap((child) => referenceErrors(document, child));
    const ref = node.$ref;
    if (typeof ref === 'string') {
        const [hash, table = '', name = ''] = ref.split('/');
        const target = hash === '#' ? document[table] : undefined;
        if (!isNode(target) || !(name in target)) {
            errors.push(`${ref} does not resolve`);
        }
    }

    return errors;
}

function operationErrors(document: Document): string[] {
    const errors: string[] = [];
    const seen = new Set<string>();
    for (const [path, item] of Object.entries(document.paths ?? {})) {
        const placeholders = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
        for (const [method, operation] of Object.entries(item)) {
            const where = `${method.toUpperCase()} ${path}`;
            if (operation.operationId && seen.has(operation.operationId)) {
                errors.push(`${where}: operationId ${operation.operationId} is not unique`);
            }

            seen.add(operation.operationId ?? '');
            errors.push(...parameterErrors(where, placeholders, operation.parameters ?? []));
        }
    }

    return errors;
}

function parameterErrors(where: string, placeholders: Array<string | undefined>, parameters: SwaggerParameter[]): string[] {
    const errors: string[] = [];
    const keys = parameters.map((parameter) => `${parameter.in} ${parameter.name}`);
    if (new Set(keys).size !== keys.length) {
        errors.push(`${where}: a parameter is declared twice`);
    }

    const bodies = parameters.filter((parameter) => parameter.in === 'body').length;
    if (bodies > 1 || (bodies === 1 && parameters.some((parameter) => parameter.in === 'formData'))) {
        errors.push(`${where}: more than one body, or a body and form data`);
    }

    const inPath = parameters.filter((parameter) => parameter.in === 'path');
    const names = inPath.map((parameter) => parameter.name);
    if ([...names].sort().join() !== [...placeholders].sort().join()) {
        errors.push(`${where}: path parameters [${names.join(', ')}] do not match placeholders [${placeholders.join(', ')}]`);
    }

    for (const parameter of inPath.filter((candidate) => candidate.required !== true)) {
        errors.push(`${where}: path parameter ${parameter.name} is not required`);
    }

    return errors;
}

function requiredErrors(node: unknown, where: string): string[] {
    if (!isNode(node)) {
        return [];
    }

    const errors = Object.entries(node).flatMap(([key, child]) => requiredErrors(child, `${where}/${key}`));
    const { required, properties } = node;
    if (Array.isArray(required) && isNode(properties)) {
        for (const name of required.map(String).filter((candidate) => !(candidate in properties))) {
            errors.push(`${where}: required property ${name} is not declared`);
        }
    }

    return errors;
}
