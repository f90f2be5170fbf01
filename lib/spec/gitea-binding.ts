/**
 * Gitea's request binder (gitea.com/go-chi/binding's Bind, as routers/api/v1 `bind` calls it), read from the
 * Swagger definition of the option struct: JSON, or a form (urlencoded or multipart) read by each field's form name
 * (`x-gatehouse-form`), chosen by the Content-Type as Gitea chooses. A refusal is Gitea's 422 `[Fields]: message`:
 * `[]: Empty Content-Type`, `[]: unexpected EOF`, `[source_id]: Value could not be parsed as integer`...
 */
import { ValidationError } from '../errors.ts';
import { decodeGoJson, GoJsonError } from './go-json.ts';
import { parseGoBool, parseGoInt, parseGoQuery } from './go-parse.ts';
import type { JsonSchema, SchemaConverter } from './schema-to-joi.ts';

export interface BindInput {
    method: string;
    contentType: string | undefined;
    body: Buffer | null;
    /** The URL's query, which Go's ParseForm adds after a form body's values. */
    query: Record<string, unknown>;
}

/** Go prints the list of field names with `%s`: `[NewName]`, or `[]` for the body as a whole. */
function bindingError(fields: string[], message: string): ValidationError {
    return new ValidationError(`[${fields.join(' ')}]: ${message}`);
}

/** Go's ParseForm reads a form body for these methods only. */
const FORM_BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function mediaType(contentType: string): string {
    return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

export class GiteaBinder {
    readonly #schema: JsonSchema;
    readonly #converter: SchemaConverter;
    readonly #properties: Array<[string, JsonSchema]>;

    constructor(schema: JsonSchema, converter: SchemaConverter) {
        this.#schema = schema;
        this.#converter = converter;
        this.#properties = Object.entries(converter.resolve(schema).properties ?? {});
    }

    /** The body as the option struct Gitea would bind, keyed by the schema's (JSON) names. */
    async bind({ method, contentType = '', body, query }: BindInput): Promise<Record<string, unknown>> {
        const requiresType = method === 'POST' || method === 'PUT';
        if (!requiresType && contentType === '') {
            return this.#fromForm(queryValues(query));
        }

        // Go matches these case-sensitively anywhere in the header, in this order.
        if (contentType.includes('form-urlencoded')) {
            return this.#fromForm(this.#urlencoded(method, contentType, body, query));
        }

        if (contentType.includes('multipart/form-data')) {
            return this.#fromForm(await multipart(contentType, body));
        }

        if (contentType.includes('json')) {
            try {
                return decodeGoJson(body ?? Buffer.alloc(0), this.#schema, this.#converter);
            } catch (error) {
                if (error instanceof GoJsonError) {
                    throw bindingError([], error.message);
                }

                throw error;
            }
        }

        throw bindingError([], contentType === '' ? 'Empty Content-Type' : 'Unsupported Content-Type');
    }

    /** ParseForm: the body's pairs (when it is a form of a method that has one), then the URL's. */
    #urlencoded(method: string, contentType: string, body: Buffer | null, query: Record<string, unknown>): Map<string, string[]> {
        const values = new Map<string, string[]>();
        if (FORM_BODY_METHODS.has(method) && mediaType(contentType) === 'application/x-www-form-urlencoded') {
            const parsed = parseGoQuery((body ?? Buffer.alloc(0)).toString('utf8'));
            if (parsed.error !== undefined) {
                throw bindingError([], parsed.error);
            }

            for (const [key, list] of parsed.values) {
                values.set(key, list);
            }
        }

        for (const [key, list] of queryValues(query)) {
            values.set(key, [...(values.get(key) ?? []), ...list]);
        }

        return values;
    }

    /** mapForm: each field a form can fill, from its form name; a value Go cannot convert is refused by that name. */
    #fromForm(form: Map<string, string[]>): Record<string, unknown> {
        const result: Record<string, unknown> = {};
        for (const [name, property] of this.#properties) {
            const formName = property['x-gatehouse-form'];
            const values = formName === undefined ? undefined : form.get(formName);
            if (formName === undefined || values === undefined || values.length === 0) {
                continue;
            }

            const resolved = this.#converter.resolve(property);
            result[name] =
                resolved.type === 'array'
                    ? values.map((value) => formValue(value, resolved.items ?? {}, formName))
                    : formValue(values[0] as string, resolved, formName);
        }

        return result;
    }
}

/** Go's setWithProperType: an empty integer is 0 and an empty boolean false; `on` is true. */
function formValue(value: string, schema: JsonSchema, formName: string): unknown {
    if (schema.type === 'integer') {
        const parsed = parseGoInt(value === '' ? '0' : value);
        if (parsed === undefined) {
            throw bindingError([formName], 'Value could not be parsed as integer');
        }

        return parsed;
    }

    if (schema.type === 'boolean') {
        const parsed = value === 'on' ? true : parseGoBool(value === '' ? 'false' : value);
        if (parsed === undefined) {
            throw bindingError([formName], 'Value could not be parsed as boolean');
        }

        return parsed;
    }

    return value;
}

function queryValues(query: Record<string, unknown>): Map<string, string[]> {
    const values = new Map<string, string[]>();
    for (const [key, value] of Object.entries(query)) {
        values.set(key, (Array.isArray(value) ? value : [value]).map(String));
    }

    return values;
}

/** ParseMultipartForm: the parts' values (files are never a field of an option struct), with Go's errors. */
async function multipart(contentType: string, body: Buffer | null): Promise<Map<string, string[]>> {
    if (mediaType(contentType) !== 'multipart/form-data') {
        throw bindingError([], "request Content-Type isn't multipart/form-data");
    }

    if (!/;\s*boundary=/i.test(contentType)) {
        throw bindingError([], 'no multipart boundary param in Content-Type');
    }

    let form: FormData;
    try {
        form = await new Response(new Uint8Array(body ?? []), { headers: { 'content-type': contentType } }).formData();
    } catch {
        throw bindingError([], 'multipart: NextPart: EOF');
    }

    const values = new Map<string, string[]>();
    for (const [key, value] of form) {
        if (typeof value === 'string') {
            values.set(key, [...(values.get(key) ?? []), value]);
        }
    }

    return values;
}
