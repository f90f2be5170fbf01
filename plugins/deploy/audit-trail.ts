/**
 * The audit entries the deploy specs declare: a route with `audit: <action>` makes one once its handler has answered,
 * and with `audit: { action, failures: true }` also when its handler fails (outcome failure, the error's message as
 * the reason). The handler only says what it acted on (auditAs); by default the app its path names, by the signed-in
 * user. A request refused before its handler (not signed in, no role, invalid) makes none.
 */
import Boom from '@hapi/boom';
import type { Lifecycle, Request, RouteOptions } from '@hapi/hapi';

import type { DeployRouteSettings } from '../../lib/spec/deploy-loader.ts';
import { type AuditEntry, audit } from './domain/accounts/audit-service.ts';
import { clientAddress, deployCredentials } from './security.ts';

/** What the handler acted on: the target, the facts worth keeping, and the actor when it is not the signed-in user. */
export type AuditNote = Pick<AuditEntry, 'target' | 'details' | 'actor'>;

/** Set once the handler is reached: a request without it was refused before and is not audited. */
interface AuditState {
    note: AuditNote;
}

const REASON_MAX = 500;

function declared(request: Request): DeployRouteSettings['audit'] {
    return (request.route.settings.plugins as { gatehouse?: DeployRouteSettings }).gatehouse?.audit;
}

function stateOf(request: Request): AuditState | undefined {
    return (request.plugins as { deployAudit?: AuditState }).deployAudit;
}

/** Tells the route's audit entry what the handler acted on; later notes add to earlier ones. */
export function auditAs(request: Request, note: AuditNote): void {
    const state = stateOf(request);
    if (!state) {
        throw new Error(`${request.route.settings.id ?? request.path} declares no audit entry in its spec`);
    }

    state.note = { ...state.note, ...note, details: { ...state.note.details, ...note.details } };
}

const beforeHandler: Lifecycle.Method = (request, h) => {
    if (declared(request)) {
        (request.plugins as { deployAudit?: AuditState }).deployAudit = { note: {} };
    }

    return h.continue;
};

const afterHandler: Lifecycle.Method = async (request, h) => {
    const route = declared(request);
    const state = stateOf(request);
    if (!route || !state) {
        return h.continue;
    }

    const failure = failureOf(request);
    if (failure !== undefined && !route.failures) {
        return h.continue;
    }

    const { note } = state;
    await audit(request.server).record({
        actor: note.actor ?? deployCredentials(request)?.user,
        action: route.action,
        target: note.target ?? (request.params.name as string | undefined),
        clientAddress: clientAddress(request),
        outcome: failure === undefined ? 'success' : 'failure',
        details: failure === undefined ? note.details : { reason: failure.slice(0, REASON_MAX) },
    });
    return h.continue;
};

/**
 * The reason the answer is a refusal or an error, or undefined when it succeeded: by now a domain error may already be
 * an answer in the service's error shape (lib/errors.ts maps them first), whose `error` says why.
 */
function failureOf(request: Request): string | undefined {
    const response = request.response;
    if (Boom.isBoom(response)) {
        return response.message;
    }

    if (response.statusCode < 400) {
        return undefined;
    }

    const body = response.source as { error?: unknown } | null;
    return typeof body?.error === 'string' ? body.error : `HTTP ${response.statusCode}`;
}

/** The route extensions that write the declared entries: after validation, and as the answer leaves. */
export function auditExtensions(): Pick<NonNullable<RouteOptions['ext']>, 'onPreHandler' | 'onPreResponse'> {
    return { onPreHandler: { method: beforeHandler }, onPreResponse: { method: afterHandler } };
}
