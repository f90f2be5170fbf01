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

export class ResponseChecker {
    readonly #ajv: Ajv;

    constructor(definitions: Definitions) {
        // Not strict: the specs carry our own x- keywords; formats are the requests' business, not the answers'.
        this.#ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
        this.#ajv.addSchema({ $id: DEFINITIONS_ID, definitions: forAjv(definitions) });
    }

    /** The route's `response` options: an answer that does not match is a 500 that names where it differs. */
    optionsFor(schema: JsonSchema): RouteOptionsResponse {
        const validate: ValidateFunction = this.#ajv.compile(forAjv(schema) as object);
        return {
            schema: async (value: unknown) => {
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
