import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';

import { GIT_SWAGGER_FILE } from '../../server.ts';
import { readSwagger } from '../../lib/spec/git-loader.ts';

// ajv-formats is CommonJS: under ES modules its function is the default export's own `default`.
const addFormats = (ajvFormats as unknown as { default: (ajv: Ajv) => Ajv }).default;

const document = readSwagger(GIT_SWAGGER_FILE);
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
// Gitea sends "" for an e-mail it hides or does not have, although the schema says format email.
const emailFormat = /^[^\s@]+@[^\s@]+$/;
ajv.addFormat('email', { type: 'string', validate: (value: string) => value === '' || emailFormat.test(value) });
ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isInteger(value) });
ajv.addSchema({ definitions: document.definitions }, 'swagger');

const validators = new Map<string, ValidateFunction>();

function rewriteRefs(schema: unknown): unknown {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/definitions/', '"swagger#/definitions/'));
}

function responseSchema(operationId: string, status: number): unknown {
    for (const item of Object.values(document.paths)) {
        for (const operation of Object.values(item)) {
            if (operation.operationId !== operationId) {
                continue;
            }

            const response = operation.responses[String(status)];
            if (!response) {
                throw new Error(`${operationId} declares no ${status} response`);
            }

            const named = response.$ref ? document.responses[response.$ref.replace('#/responses/', '')] : response;
            return named?.schema ?? null;
        }
    }

    throw new Error(`No operation ${operationId}`);
}

/** Checks a response body against the schema our Swagger document declares for that operation and status. */
export function swaggerErrors(operationId: string, status: number, body: unknown): string[] {
    const key = `${operationId}:${status}`;
    let validate = validators.get(key);
    if (!validate) {
        const schema = responseSchema(operationId, status);
        validate = ajv.compile(schema ? (rewriteRefs(schema) as object) : {});
        validators.set(key, validate);
    }

    return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
}
