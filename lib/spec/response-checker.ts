/**
 * Checks a deploy route's answer against the schema its spec declares (`response`), with Ajv: what the schemas say
 * of the answers (the OpenAPI document, the web UI's generated types) is then what the code answers, or the tests fail.
 */
import Boom from '@hapi/boom';
import type { RouteOptionsResponse } from '@hapi/hapi';
import { Ajv, type ValidateFunction } from 'ajv';

import { rewriteSchema } from './schema-rewrite.ts';
import type { Definitions, JsonSchema } from './schema-to-joi.ts';

const DEFINITIONS_ID = 'deploy-definitions';

/** An Ajv with the definitions added, and the validators it compiled, by the schema's text. */
interface Compiler {
    ajv: Ajv;
    compiled: Map<string, ValidateFunction>;
}

/**
 * One compiler per set of definitions in the process: every server made from the same specs (the tests make
 * hundreds) shares it, and the validators it has compiled.
 */
const compilers = new Map<string, Compiler>();

function compilerFor(definitions: Definitions): Compiler {
    const key = JSON.stringify(definitions);
    let compiler = compilers.get(key);
    if (!compiler) {
        // Not strict: the specs carry our own x- keywords; formats are the requests' business, not the answers'.
        const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
        ajv.addSchema({ $id: DEFINITIONS_ID, definitions: forAjv(definitions) });
        compiler = { ajv, compiled: new Map() };
        compilers.set(key, compiler);
    }

    return compiler;
}

export class ResponseChecker {
    readonly #compiler: Compiler;

    constructor(definitions: Definitions) {
        this.#compiler = compilerFor(definitions);
    }

    /**
     * The route's `response` options: an answer that does not match is a 500 that names where it differs. The schema
     * is compiled when the route first answers (compiling every route's at start took most of a server's start).
     */
    optionsFor(schema: JsonSchema): RouteOptionsResponse {
        let validate: ValidateFunction | undefined;
        return {
            schema: async (value: unknown) => {
                validate ??= this.#compiled(schema);
                if (!validate(value)) {
                    const where = (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`);
                    throw new Error(where.join('; '));
                }

                return value;
            },
            failAction: (request, _h, error) => {
                // The message names schema paths, never the values; the error handler logs a 500 with it.
                throw Boom.badImplementation(
                    `the answer does not match the schema of ${request.route.settings.id ?? request.path}: ${String((error as Error).message)}`,
                );
            },
        };
    }

    /** The same schema again (another server's route) is not compiled twice. */
    #compiled(schema: JsonSchema): ValidateFunction {
        const rewritten = forAjv(schema) as object;
        const key = JSON.stringify(rewritten);
        let validate = this.#compiler.compiled.get(key);
        if (!validate) {
            validate = this.#compiler.ajv.compile(rewritten);
            this.#compiler.compiled.set(key, validate);
        }

        return validate;
    }
}

/**
 * The same schemas as Ajv reads them: `#/definitions/<name>` references point at the shared definitions, and
 * OpenAPI 3.0's `nullable` (which Ajv takes only beside a `type`) becomes "or null".
 */
function forAjv<T>(value: T): T {
    return rewriteSchema(value, `${DEFINITIONS_ID}#/definitions/`, ({ nullable, ...rest }) =>
        nullable === true ? { anyOf: [rest, { type: 'null' }] } : rest,
    ) as T;
}
