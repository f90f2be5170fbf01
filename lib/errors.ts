import Boom from '@hapi/boom';
import type { Lifecycle, Request, ResponseToolkit, Server } from '@hapi/hapi';
import type Joi from 'joi';

/** Errors services throw; one mapper below turns them into HTTP answers. */
export class ServiceError extends Error {
    constructor(
        message: string,
        readonly statusCode: number,
    ) {
        super(message);
        this.name = new.target.name;
    }
}

export class BadRequestError extends ServiceError {
    constructor(message: string) {
        super(message, 400);
    }
}

export class ForbiddenError extends ServiceError {
    constructor(message: string) {
        super(message, 403);
    }
}

export class NotFoundError extends ServiceError {
    constructor(message = 'not found') {
        super(message, 404);
    }
}

export class ConflictError extends ServiceError {
    constructor(message: string) {
        super(message, 409);
    }
}

export class ValidationError extends ServiceError {
    constructor(message: string) {
        super(message, 422);
    }
}

/** Runs `work`, naming the request field in the message of a ValidationError it throws. */
export function forField<T>(field: string, work: () => T): T {
    try {
        return work();
    } catch (error) {
        if (error instanceof ValidationError) {
            throw new ValidationError(`${field}: ${error.message}`);
        }

        throw error;
    }
}

/** Too many attempts: 429, with Retry-After in seconds. */
export class TooManyRequestsError extends ServiceError {
    constructor(
        message: string,
        readonly retryAfterSeconds: number,
    ) {
        super(message, 429);
    }
}

/** The name was renamed: Gitea answers 307 to the same path with the new name. */
export class RenamedError extends ServiceError {
    constructor(
        readonly oldName: string,
        readonly newName: string,
    ) {
        super(`renamed to ${newName}`, 307);
    }
}

/** A middleware refusal that Gitea answers as `{message}` alone, without the `url` field. */
export class BareForbiddenError extends ServiceError {
    constructor(message: string) {
        super(message, 403);
    }
}

export const GIT_API_PREFIX = '/api/v1';

export type ErrorShape = 'gitea' | 'deploy';

/** Gitea's package registry lives beside its API, and answers in the same shape. */
const GIT_PACKAGES_PREFIX = '/api/packages/';

export function errorShapeFor(path: string): ErrorShape {
    const git = path === GIT_API_PREFIX || path.startsWith(`${GIT_API_PREFIX}/`) || path.startsWith(GIT_PACKAGES_PREFIX);
    return git ? 'gitea' : 'deploy';
}

/** Gitea names the first failing field by its Go name: `[Username]: Required`. */
export function giteaValidationMessage(error: Joi.ValidationError): string {
    const detail = error.details[0];
    if (!detail) {
        return error.message;
    }

    const field = detail.context?.label ?? detail.path.join('.');
    return `[${field}]: ${giteaRule(detail)}`;
}

function giteaRule(detail: Joi.ValidationErrorItem): string {
    const rules: Record<string, string> = {
        'any.required': 'Required',
        'any.invalid': 'Required',
        'string.empty': 'Required',
        'any.only': 'In',
        'string.email': 'Email',
        'string.max': 'MaxSize',
        'array.max': 'MaxSize',
        'string.min': 'MinSize',
        'string.pattern.base': 'Pattern',
        'string.isoDate': 'Date',
    };
    return rules[detail.type] ?? `${detail.message.replace(/"/g, '')}`;
}

/** Our own services name the field in plain words: `name: must be a lower-case DNS label`. */
export function deployValidationMessage(error: Joi.ValidationError): string {
    const detail = error.details[0];
    if (!detail) {
        return error.message;
    }

    return detail.message.replace(/"/g, '');
}

/** Used as `failAction` by generated routes: a bad request is a 422 naming the field, never a 500. */
export const validationFailAction: Lifecycle.Method = (request: Request, _h: ResponseToolkit, error?: Error) => {
    // A validator that refuses in the service's own words (Gitea's binder) keeps them.
    if (error instanceof ServiceError) {
        throw error;
    }

    const joiError = error as (Joi.ValidationError & { isJoi?: boolean }) | undefined;
    if (!joiError?.details) {
        throw Boom.badRequest('Invalid request');
    }

    const message = errorShapeFor(request.path) === 'gitea' ? giteaValidationMessage(joiError) : deployValidationMessage(joiError);
    throw Boom.badData(message);
};

function toBoom(error: Error): Boom.Boom {
    // hapi has already boomified a thrown ServiceError as a 500 by now: its own status wins.
    if (error instanceof ServiceError) {
        const boom = new Boom.Boom(error.message, { statusCode: error.statusCode });
        if (error instanceof TooManyRequestsError) {
            boom.output.headers['Retry-After'] = String(error.retryAfterSeconds);
        }

        return boom;
    }

    if (Boom.isBoom(error)) {
        return error;
    }

    return Boom.boomify(error);
}

/**
 * Every error leaves in its service's shape: `{message, url}` under /api/v1 as Gitea does,
 * `{error}` everywhere else. An unknown path with a known method elsewhere is a 405.
 */
export function registerErrorShapes(server: Server, swaggerUrl: string): void {
    server.ext('onPreResponse', (request, h) => {
        const response = request.response;
        if (!(response instanceof Error)) {
            return h.continue;
        }

        if (response instanceof RenamedError) {
            return h.redirect(renamedLocation(request, response)).code(307);
        }

        let boom = toBoom(response);
        if (boom.output.statusCode === 404 && (request.route.method as string) === '_special') {
            const allowed = allowedMethods(server, request);
            if (allowed.length > 0) {
                boom = Boom.methodNotAllowed(`method ${request.method.toUpperCase()} not allowed`, undefined, allowed);
            }
        }

        const statusCode = boom.output.statusCode;
        if (statusCode >= 500 && statusCode !== 501) {
            request.log(['error'], boom);
        }

        const message = statusCode >= 500 && statusCode !== 501 ? internalMessage(statusCode) : clientMessage(boom);
        const shape = errorShapeFor(request.path);
        const body =
            shape === 'deploy' ? { error: message } : response instanceof BareForbiddenError ? { message } : { message, url: swaggerUrl };
        const answer = h.response(body).code(statusCode);
        for (const [name, value] of Object.entries(boom.output.headers)) {
            if (name.toLowerCase() !== 'content-type' && value !== undefined) {
                answer.header(name, String(value));
            }
        }

        return answer;
    });
}

function renamedLocation(request: Request, renamed: RenamedError): string {
    const segments = request.path.split('/');
    const index = segments.findIndex((segment) => segment.toLowerCase() === renamed.oldName.toLowerCase());
    if (index >= 0) {
        segments[index] = renamed.newName;
    }

    return `${segments.join('/')}${request.url.search}`;
}

function clientMessage(boom: Boom.Boom): string {
    if (boom.output.statusCode === 404 && boom.message === 'Not Found') {
        return 'not found';
    }

    return boom.message || boom.output.payload.message;
}

function internalMessage(statusCode: number): string {
    return statusCode === 503 ? 'service unavailable' : 'internal server error';
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function allowedMethods(server: Server, request: Request): string[] {
    return METHODS.filter((method) => method !== request.method && server.match(method, request.path) !== null).map((method) =>
        method.toUpperCase(),
    );
}
