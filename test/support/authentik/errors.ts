/** The API's refusals, in Django REST framework's shapes: `{"detail": ...}`, `{"field": [...]}`, `{"non_field_errors": [...]}`. */
import type { FieldErrors } from './schema-validation.ts';

export class ApiError extends Error {
    constructor(
        readonly status: number,
        readonly body: Record<string, unknown>,
        /** Set when the schema refused the request: it goes into the stand-in's violations. */
        readonly violation?: string,
    ) {
        super(JSON.stringify(body));
    }
}

export const notFound = (): ApiError => new ApiError(404, { detail: 'Not found.' });

export const forbidden = (detail = 'You do not have permission to perform this action.'): ApiError => new ApiError(403, { detail });

export const invalid = (errors: FieldErrors): ApiError => new ApiError(400, errors);

export const fieldError = (field: string, message: string): ApiError => invalid({ [field]: [message] });

export const nonFieldError = (message: string): ApiError => invalid({ non_field_errors: [message] });

/** DRF's words for a primary key that names nothing. */
export const unknownPkMessage = (pk: unknown): string => `Invalid pk "${String(pk)}" - object does not exist.`;

export const unknownPk = (field: string, pk: unknown): ApiError => fieldError(field, unknownPkMessage(pk));

/** DRF's UniqueValidator message for a model field declared unique. */
export const notUnique = (field: string, model: string): ApiError => fieldError(field, `${model} with this ${field} already exists.`);
