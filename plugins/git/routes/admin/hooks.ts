import type { Lifecycle, Request } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { type CreateHookInput, type EditHookInput, type HookKind, toApiHook, webhooks } from '../../domain/webhooks/hook-service.ts';

function hookId(request: Request): number {
    return Number(request.params.id);
}

export const adminListHooks: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const kind = ((request.query as { type?: HookKind }).type ?? 'system') as HookKind;
    const { rows, total } = await webhooks(request.server).list(kind, paging);
    return setPagingHeaders(request, h.response(rows.map(toApiHook)), request.server.app.config.publicUrl, { total, paging });
};

export const adminCreateHook: Lifecycle.Method = async (request, h) => {
    const hook = await webhooks(request.server).create(request.payload as CreateHookInput);
    return h.response(toApiHook(hook)).code(201);
};

export const adminGetHook: Lifecycle.Method = async (request) => toApiHook(await webhooks(request.server).get(hookId(request)));

export const adminEditHook: Lifecycle.Method = async (request) =>
    toApiHook(await webhooks(request.server).edit(hookId(request), (request.payload ?? {}) as EditHookInput));

export const adminDeleteHook: Lifecycle.Method = async (request, h) => {
    await webhooks(request.server).delete(hookId(request));
    return h.response().code(204);
};
