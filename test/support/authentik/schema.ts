/**
 * authentik's own OpenAPI document, the schema.yml that `@goauthentik/api` ships (OpenAPI 3.0.3), read once per
 * process: its operations by method and path template, with their parameters, request and response schemas.
 * Parsing the YAML takes seconds, so the parsed document is also kept as JSON in the temporary folder, keyed by
 * the file's hash.
 */
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Os from 'node:os';
import Path from 'node:path';

import YAML from 'yaml';

export type JsonSchema = Record<string, unknown>;

export interface Parameter {
    name: string;
    in: 'query' | 'path' | 'header' | 'cookie';
    required: boolean;
    schema: JsonSchema;
}

export interface Operation {
    id: string;
    method: string;
    /** The path template below /api/v3, as the document spells it: `/providers/proxy/{id}/`. */
    template: string;
    parameters: Parameter[];
    body?: { schema: JsonSchema; required: boolean };
    /** The JSON schema of each declared status (null: declared without a body). */
    responses: Map<number, JsonSchema | null>;
    /** False when the operation may be called without a token (`security` lists `{}`). */
    needsToken: boolean;
}

export interface AuthentikDocument {
    version: string;
    operations: Operation[];
    /** `components.schemas`, unchanged. */
    schemas: Record<string, JsonSchema>;
}

interface RawOperation {
    operationId: string;
    parameters?: Array<Parameter | { $ref: string }>;
    requestBody?: { required?: boolean; content?: Record<string, { schema: JsonSchema }> };
    responses: Record<string, { $ref?: string; content?: Record<string, { schema: JsonSchema }> }>;
    security?: Array<Record<string, unknown>>;
}

interface RawDocument {
    info: { version: string };
    paths: Record<string, Record<string, RawOperation | unknown[]>>;
    components: {
        schemas: Record<string, JsonSchema>;
        parameters: Record<string, Parameter>;
        responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>;
    };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export const SCHEMA_FILE = Path.join(Path.dirname(createRequire(import.meta.url).resolve('@goauthentik/api/package.json')), 'schema.yml');

function readRawDocument(): RawDocument {
    const text = Fs.readFileSync(SCHEMA_FILE, 'utf8');
    const hash = Crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
    const cache = Path.join(Os.tmpdir(), `gatehouse-authentik-schema-${hash}.json`);
    if (Fs.existsSync(cache)) {
        return JSON.parse(Fs.readFileSync(cache, 'utf8')) as RawDocument;
    }

    const document = YAML.parse(text, { maxAliasCount: -1 }) as RawDocument;
    const partial = `${cache}.${process.pid}`;
    Fs.writeFileSync(partial, JSON.stringify(document));
    Fs.renameSync(partial, cache);
    return document;
}

function jsonSchemaOf(content: Record<string, { schema: JsonSchema }> | undefined): JsonSchema | null {
    return content?.['application/json']?.schema ?? null;
}

function toOperation(raw: RawDocument, template: string, method: string, operation: RawOperation): Operation {
    const parameters = (operation.parameters ?? []).map((parameter) => {
        const resolved = '$ref' in parameter ? raw.components.parameters[parameter.$ref.split('/').pop() ?? ''] : parameter;
        if (!resolved) {
            throw new Error(`${operation.operationId}: unknown parameter ${JSON.stringify(parameter)}`);
        }

        return { ...resolved, required: resolved.required === true };
    });
    const responses = new Map<number, JsonSchema | null>();
    for (const [status, response] of Object.entries(operation.responses)) {
        const named = response.$ref ? raw.components.responses[response.$ref.split('/').pop() ?? ''] : response;
        responses.set(Number(status), jsonSchemaOf(named?.content));
    }

    const bodySchema = jsonSchemaOf(operation.requestBody?.content);
    return {
        id: operation.operationId,
        method: method.toUpperCase(),
        template,
        parameters,
        body: bodySchema ? { schema: bodySchema, required: operation.requestBody?.required === true } : undefined,
        responses,
        needsToken: !(operation.security ?? []).some((scheme) => Object.keys(scheme).length === 0),
    };
}

let loaded: AuthentikDocument | undefined;

export function authentikDocument(): AuthentikDocument {
    if (!loaded) {
        const raw = readRawDocument();
        const operations: Operation[] = [];
        for (const [template, item] of Object.entries(raw.paths)) {
            for (const method of METHODS) {
                const operation = item[method];
                if (operation && !Array.isArray(operation)) {
                    operations.push(toOperation(raw, template, method, operation as RawOperation));
                }
            }
        }

        loaded = { version: raw.info.version, operations, schemas: raw.components.schemas };
    }

    return loaded;
}

export interface Route {
    operation: Operation;
    /** Path parameters, still as the raw (decoded) strings of the URL. */
    params: Record<string, string>;
}

function templatePattern(template: string): { pattern: RegExp; names: string[] } {
    const names: string[] = [];
    const source = template
        .split(/(\{[^}]+\})/)
        .map((part) => {
            const name = /^\{([^}]+)\}$/.exec(part)?.[1];
            if (name) {
                names.push(name);
                return '([^/]+)';
            }

            return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
        })
        .join('');
    return { pattern: new RegExp(`^${source}$`), names };
}

/** Finds operations by path below /api/v3: `match` answers the path's operations, so a wrong method is told apart. */
export class Router {
    readonly #templates: Array<{ pattern: RegExp; names: string[]; literal: number; operations: Operation[] }> = [];

    constructor(document: AuthentikDocument) {
        const byTemplate = new Map<string, Operation[]>();
        for (const operation of document.operations) {
            byTemplate.set(operation.template, [...(byTemplate.get(operation.template) ?? []), operation]);
        }

        for (const [template, operations] of byTemplate) {
            // A literal segment wins over a parameter (`/core/users/me/` before `/core/users/{id}/`).
            const literal = template.replace(/\{[^}]+\}/g, '').length;
            this.#templates.push({ ...templatePattern(template), literal, operations });
        }

        this.#templates.sort((a, b) => b.literal - a.literal);
    }

    match(path: string): Array<{ operations: Operation[]; params: Record<string, string> }> {
        const found = [];
        for (const { pattern, names, operations } of this.#templates) {
            const values = pattern.exec(path);
            if (values) {
                const params = Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(values[index + 1] ?? '')]));
                found.push({ operations, params });
            }
        }

        return found;
    }

    route(method: string, path: string): Route | 'no-path' | 'no-method' {
        const candidates = this.match(path);
        if (candidates.length === 0) {
            return 'no-path';
        }

        for (const { operations, params } of candidates) {
            const operation = operations.find((candidate) => candidate.method === method);
            if (operation) {
                return { operation, params };
            }
        }

        return 'no-method';
    }
}
