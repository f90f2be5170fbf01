import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';

import type { AppAction } from '../../domain/engine/run-context.ts';
import { requireDeployCredentials } from '../../security.ts';
import {
    type ComposeUpdate,
    type DeleteRequest,
    type SignInChange,
    type SiteUpdate,
    lifecycle,
} from '../../domain/lifecycle/lifecycle-service.ts';

function nameOf(request: Request): string {
    return String((request.params as { name: string }).name);
}

/** Long operations answer 202 with the run's id; its progress is read from the run's event stream. */
async function accepted(h: ResponseToolkit, start: Promise<number>) {
    return h.response({ runId: await start }).code(202);
}

export const deployApp: Lifecycle.Method = async (request, h) => {
    const { acceptRisks } = request.payload as { acceptRisks?: boolean };
    return await accepted(h, lifecycle(request.server).deploy(nameOf(request), requireDeployCredentials(request).user, acceptRisks));
};

export const changeSignIn: Lifecycle.Method = async (request, h) =>
    await accepted(
        h,
        lifecycle(request.server).changeSignIn(nameOf(request), requireDeployCredentials(request).user, request.payload as SignInChange),
    );

export const actOnApp: Lifecycle.Method = async (request, h) => {
    const { action } = request.payload as { action: AppAction };
    return await accepted(h, lifecycle(request.server).act(nameOf(request), requireDeployCredentials(request).user, action));
};

export const updateCompose: Lifecycle.Method = async (request, h) =>
    await accepted(
        h,
        lifecycle(request.server).updateCompose(nameOf(request), requireDeployCredentials(request).user, request.payload as ComposeUpdate),
    );

export const updateNginx: Lifecycle.Method = async (request, h) =>
    await accepted(
        h,
        lifecycle(request.server).updateSite(nameOf(request), requireDeployCredentials(request).user, request.payload as SiteUpdate),
    );

export const deleteApp: Lifecycle.Method = async (request, h) =>
    await accepted(
        h,
        lifecycle(request.server).remove(nameOf(request), requireDeployCredentials(request).user, request.payload as DeleteRequest),
    );
