import type { Lifecycle, Request } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { appAccess } from '../../domain/access/access-service.ts';
import { auditAs } from '../../audit-trail.ts';
import { filesOnDisk } from '../../domain/apps/app-files.ts';
import { appSummaries } from '../../domain/apps/app-list.ts';
import { appView } from '../../domain/apps/app-view.ts';
import { type AppFilters, apps, identityOf, type NewApp } from '../../domain/apps/app-service.ts';
import { checkAvailability } from '../../domain/apps/availability.ts';
import type { DraftInput } from '../../domain/apps/draft-shape.ts';
import { previewApp as preview } from '../../domain/apps/preview.ts';
import { mayReadSecrets, requestSnapshot, requireDeployCredentials } from '../../security.ts';

function appName(request: Request): string {
    return request.params.name as string;
}

export const checkName: Lifecycle.Method = async (request) =>
    await checkAvailability(request.server, (request.payload as { name: string }).name);

export const createApp: Lifecycle.Method = async (request, h) => {
    const { user } = requireDeployCredentials(request);
    const app = await apps(request.server).create(request.payload as NewApp, user.id);
    auditAs(request, { target: app.name, details: { image: app.image } });
    return h.response({ app: await apps(request.server).toApi(app, true) }).code(201);
};

export const listApps: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const { q, state } = request.query as AppFilters;
    const { items, total } = await appSummaries(request.server, { q, state }, paging, requestSnapshot(request));
    return setPagingHeaders(request, h.response({ apps: items, total }), request.server.app.config.publicUrl, { total, paging });
};

export const getApp: Lifecycle.Method = async (request) => ({
    app: await appView(request.server, appName(request), mayReadSecrets(request), requestSnapshot(request)),
});

export const saveDraft: Lifecycle.Method = async (request) => {
    const payload = request.payload as DraftInput;
    const app = await appAccess(request.server).saveDraft(appName(request), payload);
    // The audit names the fields changed, never their values.
    auditAs(request, { target: app.name, details: { fields: Object.keys(payload).sort().join(',') } });
    return { app: await apps(request.server).toApi(app, true), identity: identityOf(app) };
};

export const previewApp: Lifecycle.Method = async (request) =>
    await preview(request.server, await apps(request.server).require(appName(request)));

export const listFiles: Lifecycle.Method = async (request) => {
    await apps(request.server).require(appName(request));
    return { files: filesOnDisk(request.server, appName(request), mayReadSecrets(request)) };
};
