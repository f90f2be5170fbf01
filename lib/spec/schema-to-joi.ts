import Joi from 'joi';

import { APP_PATH_FORMAT, APP_PATH_RULE, isAppPath } from '../app-urls.ts';

/** The part of a Swagger 2.0 / JSON schema that route specs use. */
export interface JsonSchema {
    $ref?: string;
    type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'file';
    format?: string;
    enum?: unknown[];
    properties?: Record<string, JsonSchema>;
    required?: string[];
    additionalProperties?: boolean | JsonSchema;
    items?: JsonSchema;
    minimum?: number;
    maximum?: number;
    minLength?: number;
    maxLength?: number;
    /** Our own: a bound in UTF-8 bytes, for text stored in a column whose size is counted in bytes (MariaDB's TEXT). */
    'x-gatehouse-max-bytes'?: number;
    maxItems?: number;
    pattern?: string;
    default?: unknown;
    description?: string;
    /** OpenAPI 3.0's: null is a value too. */
    nullable?: boolean;
    /** The Go field's name, by which Gitea names the field in errors. */
    'x-go-name'?: string;
    /** The Go type's name where the JSON type does not tell it (`structs.VisibilityString`), for Go's decoding errors. */
    'x-go-type'?: string;
    /** Our own: the name Gitea's form binder reads the field by; a field without one cannot come from a form. */
    'x-gatehouse-form'?: string;
    /** Our own: the enum documents the values, the handler checks them (Gitea's binder does not). */
    'x-gatehouse-unchecked-enum'?: boolean;
}

export type Definitions = Record<string, JsonSchema>;

/** Go's strconv.ParseBool accepts these besides true and false. */
const TRUTHY = ['1', 't', 'T', 'TRUE', 'True', 'on'];
const FALSY = ['0', 'f', 'F', 'FALSE', 'False', 'off'];

/** The label a field gets in error messages: Gitea names fields by their Go name. */
export const FIELD_LABEL = 'x-go-name';

export interface ConverterOptions {
    /** Whether a schema's `default` fills in a missing value (true), or only documents what the server does (false). */
    fillDefaults?: boolean;
}

export class SchemaConverter {
    readonly #definitions: Definitions;
    readonly #fillDefaults: boolean;
    readonly #building = new Set<string>();

    constructor(definitions: Definitions = {}, { fillDefaults = true }: ConverterOptions = {}) {
        this.#definitions = definitions;
        this.#fillDefaults = fillDefaults;
    }

    resolve(schema: JsonSchema): JsonSchema {
        if (!schema.$ref) {
            return schema;
        }

        const name = schema.$ref.replace(/^#\/definitions\//, '');
        const target = this.#definitions[name];
        if (!target) {
            throw new Error(`Unknown schema reference ${schema.$ref}`);
        }

        return target;
    }

    /** `itemLabel` names a list's items in errors: Gitea names the list field, not the item. */
    toJoi(schema: JsonSchema, itemLabel?: string): Joi.Schema {
        if (schema.$ref) {
            // A cycle (Repository.parent) is only possible in responses; requests never nest that deep.
            if (this.#building.has(schema.$ref)) {
                return Joi.any();
            }

            this.#building.add(schema.$ref);
            try {
                return this.toJoi(this.resolve(schema), itemLabel);
            } finally {
                this.#building.delete(schema.$ref);
            }
        }

        const typed = this.#typed(schema, itemLabel);
        const joi = schema.nullable ? typed.allow(null) : typed;
        return schema.default === undefined || !this.#fillDefaults ? joi : joi.default(schema.default);
    }

    #typed(schema: JsonSchema, itemLabel?: string): Joi.Schema {
        switch (schema.type) {
            case 'object':
                return this.#object(schema);
            case 'array':
                return this.#array(schema, itemLabel);
            case 'string':
                return this.#string(schema);
            case 'integer':
                return this.#number(schema, Joi.number().integer());
            case 'number':
                return this.#number(schema, Joi.number());
            case 'boolean':
                return Joi.boolean()
                    .truthy(...TRUTHY)
                    .falsy(...FALSY);
            default:
                return schema.properties ? this.#object(schema) : Joi.any();
        }
    }

    #object(schema: JsonSchema): Joi.Schema {
        const keys: Record<string, Joi.Schema> = {};
        const required = new Set(schema.required ?? []);
        for (const [name, property] of Object.entries(schema.properties ?? {})) {
            const goName = property[FIELD_LABEL];
            const joi = this.toJoi(property, goName).label(goName ?? name);
            // Gitea's Required binding refuses an empty string as it refuses a missing field.
            const isString = this.resolve(property).type === 'string';
            keys[name] = required.has(name) ? (isString ? joi.required().invalid('') : joi.required()) : joi;
        }

        let object = Joi.object(keys);
        if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
            object = object.pattern(Joi.string(), this.toJoi(schema.additionalProperties));
        } else {
            // Like Go's encoding/json, unknown fields are ignored rather than refused.
            object = object.unknown(schema.additionalProperties !== false);
        }

        return object;
    }

    #array(schema: JsonSchema, itemLabel: string | undefined): Joi.Schema {
        const items = schema.items ? this.toJoi(schema.items) : Joi.any();
        const joi = Joi.array().items(itemLabel === undefined ? items : items.label(itemLabel));
        return schema.maxItems === undefined ? joi : joi.max(schema.maxItems);
    }

    #string(schema: JsonSchema): Joi.Schema {
        if (schema.enum && !schema['x-gatehouse-unchecked-enum']) {
            return Joi.string().valid(...(schema.enum as string[]));
        }

        if (schema.format === 'date-time') {
            return Joi.string().isoDate();
        }

        let joi = Joi.string().allow('');
        if (schema.minLength !== undefined) {
            joi = joi.min(schema.minLength).disallow('');
        }

        // joi keeps one `max` rule per schema: a bound in characters or one in bytes, never both.
        const maxBytes = schema['x-gatehouse-max-bytes'];
        if (schema.maxLength !== undefined && maxBytes !== undefined) {
            throw new Error('A string schema takes maxLength or x-gatehouse-max-bytes, not both');
        }

        if (schema.maxLength !== undefined) {
            joi = joi.max(schema.maxLength);
        } else if (maxBytes !== undefined) {
            joi = joi.max(maxBytes, 'utf8');
        }

        if (schema.pattern !== undefined) {
            joi = joi.pattern(new RegExp(schema.pattern));
        }

        if (schema.format === APP_PATH_FORMAT) {
            joi = joi
                .custom((value: string, helpers) => (value === '' || isAppPath(value) ? value : helpers.error('string.appPath')))
                .messages({ 'string.appPath': `{{#label}} ${APP_PATH_RULE}` });
        }

        // `format: email` documents the field only: Gitea checks addresses in the handler (400 or 422 by case).

        return joi;
    }

    #number(schema: JsonSchema, base: Joi.NumberSchema): Joi.Schema {
        let joi = base;
        if (schema.enum) {
            return joi.valid(...(schema.enum as number[]));
        }

        if (schema.minimum !== undefined) {
            joi = joi.min(schema.minimum);
        }

        if (schema.maximum !== undefined) {
            joi = joi.max(schema.maximum);
        }

        return joi;
    }
}
