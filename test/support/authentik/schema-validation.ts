/**
 * Checks requests and responses against authentik's OpenAPI document with Ajv, and words a refused request as
 * Django REST framework does (`{"field": ["message"]}`). OpenAPI 3.0's `nullable` is rewritten into JSON Schema
 * first, since Ajv accepts it only beside a `type`.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';

import type { AuthentikDocument, JsonSchema, Operation, Parameter } from './schema.ts';

// ajv-formats is CommonJS: under ES modules its function is the default export's own `default`.
const addFormats = (ajvFormats as unknown as { default: (ajv: Ajv) => Ajv }).default;

export type FieldErrors = Record<string, string[]>;

const ROOT = 'authentik';
const SLUG_PATTERN = '^[-a-zA-Z0-9_]+$';

/** `nullable: true` as JSON Schema: the schema or null. Refs are pointed at the document added under ROOT. */
function toJsonSchema(value: unknown): unknown {
    if (Array.isArray(value)) {
        return value.map(toJsonSchema);
    }

    if (value === null || typeof value !== 'object') {
        return value;
    }

    const converted: JsonSchema = {};
    for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string') {
            converted.$ref = child.startsWith('#/') ? `${ROOT}${child}` : child;
        } else if (key !== 'nullable') {
            converted[key] = toJsonSchema(child);
        }
    }

    return (value as JsonSchema).nullable === true ? { anyOf: [converted, { type: 'null' }] } : converted;
}

function newAjv(document: AuthentikDocument): Ajv {
    const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    // authentik answers "" for a user without an e-mail address, although the schema says format email.
    ajv.addFormat('email', { type: 'string', validate: (value: string) => value === '' || /^[^\s@]+@[^\s@]+$/.test(value) });
    // URL fields are blank-able text in authentik's models (`internal_host`, `meta_launch_url` are "" when unset).
    ajv.addFormat('uri', { type: 'string', validate: (value: string) => value === '' || (URL.canParse(value) && !/\s/.test(value)) });
    for (const format of ['int32', 'int64', 'float', 'double', 'binary', 'byte', 'password']) {
        ajv.addFormat(format, true);
    }

    ajv.addSchema({ $id: ROOT, components: { schemas: toJsonSchema(document.schemas) } });
    return ajv;
}

function fieldOf(error: ErrorObject): string {
    // DRF nests the errors of nested fields; the top-level field is enough to point at the mistake.
    const first = error.instancePath.split('/')[1];
    if (first === undefined) {
        return error.keyword === 'required' ? String(error.params.missingProperty) : 'non_field_errors';
    }

    return first;
}

/** The Python type name DRF's messages use for a JSON value. */
function pythonType(value: unknown): string {
    if (Array.isArray(value)) return 'list';
    if (value === null) return 'NoneType';
    if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
    return { string: 'str', boolean: 'bool', object: 'dict' }[typeof value as string] ?? typeof value;
}

/** DRF's wording for one Ajv error, as closely as a schema keyword allows. */
function drfMessage(error: ErrorObject, value: unknown): string {
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
        case 'required':
            return 'This field is required.';
        case 'type':
            if (error.instancePath === '') return `Invalid data. Expected a dictionary, but got ${pythonType(value)}.`;
            if (value === null) return 'This field may not be null.';
            if (params.type === 'integer') return 'A valid integer is required.';
            if (params.type === 'number') return 'A valid number is required.';
            if (params.type === 'boolean') return 'Must be a valid boolean.';
            if (params.type === 'array') return `Expected a list of items but got type "${pythonType(value)}".`;
            if (params.type === 'object') return `Expected a dictionary of items but got type "${pythonType(value)}".`;
            return 'Not a valid string.';
        case 'format':
            if (params.format === 'uuid') return 'Must be a valid UUID.';
            if (params.format === 'uri') return 'Enter a valid URL.';
            if (params.format === 'email') return 'Enter a valid email address.';
            if (params.format === 'date-time')
                return 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].';
            return `Enter a valid ${String(params.format)}.`;
        case 'minLength':
            return Number(params.limit) === 1
                ? 'This field may not be blank.'
                : `Ensure this field has at least ${String(params.limit)} characters.`;
        case 'maxLength':
            return `Ensure this field has no more than ${String(params.limit)} characters.`;
        case 'pattern':
            return params.pattern === SLUG_PATTERN
                ? 'Enter a valid “slug” consisting of letters, numbers, underscores or hyphens.'
                : 'This value does not match the required pattern.';
        case 'enum':
            return `"${String(value)}" is not a valid choice.`;
        case 'minimum':
            return `Ensure this value is greater than or equal to ${String(params.limit)}.`;
        case 'maximum':
            return `Ensure this value is less than or equal to ${String(params.limit)}.`;
        default:
            return error.message ?? 'Invalid value.';
    }
}

function valueAt(data: unknown, pointer: string): unknown {
    let current = data;
    for (const segment of pointer.split('/').slice(1)) {
        current = current !== null && typeof current === 'object' ? (current as Record<string, unknown>)[segment] : undefined;
    }

    return current;
}

/** The errors a person should read: the `{type: null}` branch of a nullable and the anyOf summary say nothing. */
function meaningful(errors: ErrorObject[]): ErrorObject[] {
    return errors.filter((error) => error.keyword !== 'anyOf' && !/\/anyOf\/1\/type$/.test(error.schemaPath));
}

function toFieldErrors(errors: ErrorObject[], data: unknown): FieldErrors {
    const fields: FieldErrors = {};
    for (const error of meaningful(errors)) {
        const field = fieldOf(error);
        const message = drfMessage(error, valueAt(data, error.instancePath));
        const messages = (fields[field] ??= []);
        if (!messages.includes(message)) {
            messages.push(message);
        }
    }

    return fields;
}

function describe(errors: ErrorObject[]): string {
    return meaningful(errors)
        .map((error) => `${error.instancePath || '(body)'} ${error.message ?? error.keyword}`)
        .join('; ');
}

const TRUE_WORDS = new Set(['true', '1']);
const FALSE_WORDS = new Set(['false', '0']);

/** A query or path value (always text on the wire) as the type its schema names, or the text itself. */
function coerce(text: string, schema: JsonSchema): unknown {
    const type = schema.type;
    if (type === 'boolean') {
        const word = text.toLowerCase();
        return TRUE_WORDS.has(word) ? true : FALSE_WORDS.has(word) ? false : text;
    }

    if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text)) {
        return Number(text);
    }

    return text;
}

export class SchemaValidator {
    readonly #ajv: Ajv;
    readonly #schemas: Record<string, JsonSchema>;
    readonly #compiled = new Map<string, ValidateFunction>();

    constructor(document: AuthentikDocument) {
        this.#ajv = newAjv(document);
        this.#schemas = document.schemas;
    }

    #compile(key: string, schema: JsonSchema): ValidateFunction {
        let validate = this.#compiled.get(key);
        if (!validate) {
            validate = this.#ajv.compile(toJsonSchema(schema) as JsonSchema);
            this.#compiled.set(key, validate);
        }

        return validate;
    }

    /** A path, query or header parameter from its raw values: the typed value, or DRF's message for it. */
    parameter(operation: Operation, parameter: Parameter, raw: string[]): { value: unknown } | { error: string } {
        const isArray = parameter.schema.type === 'array';
        const items = (parameter.schema.items ?? {}) as JsonSchema;
        const value = isArray ? raw.map((text) => coerce(text, items)) : coerce(raw[raw.length - 1] ?? '', parameter.schema);
        const validate = this.#compile(`${operation.id}:${parameter.in}:${parameter.name}`, parameter.schema);
        if (validate(value)) {
            return { value };
        }

        const first = meaningful(validate.errors ?? [])[0];
        return { error: first ? drfMessage(first, valueAt(value, first.instancePath)) : 'Invalid value.' };
    }

    /** The request body's field errors, or null when the schema takes it. */
    body(operation: Operation, body: unknown): FieldErrors | null {
        if (!operation.body) {
            return null;
        }

        const validate = this.#compile(`${operation.id}:body`, operation.body.schema);
        if (validate(body)) {
            return null;
        }

        return toFieldErrors(validate.errors ?? [], body);
    }

    /** Why a response does not match the schema declared for its status, or null when it does. */
    response(operation: Operation, status: number, body: unknown): string | null {
        if (!operation.responses.has(status)) {
            return `status ${status} is not declared`;
        }

        const schema = operation.responses.get(status);
        if (!schema) {
            return body === undefined ? null : `status ${status} is declared without a body`;
        }

        const validate = this.#compile(`${operation.id}:${status}`, schema);
        return validate(body) ? null : describe(validate.errors ?? []);
    }

    /** The names a request body may set: the request schema's properties. */
    writableFields(operation: Operation): string[] {
        const schema = operation.body?.schema;
        const ref = typeof schema?.$ref === 'string' ? schema.$ref.split('/').pop() : undefined;
        const resolved = ref ? this.#schemas[ref] : schema;
        return Object.keys((resolved?.properties ?? {}) as object);
    }
}
