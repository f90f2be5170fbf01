import type { Lifecycle, Request } from '@hapi/hapi';

import { ValidationError } from '../../../../lib/errors.ts';
import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { type CreateHookInput, type EditHookInput, type HookKind, toApiHook, webhooks } from '../../domain/webhooks/hook-service.ts';
import { formString } from '../shared/query.ts';

/** Gitea's webhook_service.IsValidHookTaskType: its own two types and every requester it registers. */
const HOOK_TYPES = ['gitea', 'gogs', 'dingtalk', 'discord', 'feishu', 'matrix', 'msteams', 'packagist', 'slack', 'telegram', 'wechatwork'];

function hookId(request: Request): number {
    return Number(request.params.id);
}

export const adminListHooks: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    // Anything but `default` or `all` lists the system hooks, as Gitea does.
    const type = formString(request.query, 'type');
    const kind: HookKind = type === 'default' || type === 'all' ? type : 'system';
    const { rows, total } = await webhooks(request.server).list(kind, paging);
    return setPagingHeaders(request, h.response(rows.map(toApiHook)), request.server.app.config.publicUrl, { total, paging });
};

export const adminCreateHook: Lifecycle.Method = async (request, h) => {
    const input = request.payload as CreateHookInput;
    if (!HOOK_TYPES.includes(input.type)) {
        throw new ValidationError(`Invalid hook type: ${input.type}`);
    }

    const hook = await webhooks(request.server).create(input);
    return h.response(toApiHook(hook)).code(201);
};

export const adminGetHook: Lifecycle.Method = async (request) => toApiHook(await webhooks(request.server).get(hookId(request)));

export const adminEditHook: Lifecycle.Method = async (request) =>
    toApiHook(await webhooks(request.server).edit(hookId(request), (request.payload ?? {}) as EditHookInput));

export const adminDeleteHook: Lifecycle.Method = async (request, h) => {
    await webhooks(request.server).delete(hookId(request));
    return h.response().code(204);
};
