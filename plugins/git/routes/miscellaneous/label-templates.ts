import type { Lifecycle } from '@hapi/hapi';

export const listLabelTemplates: Lifecycle.Method = (request) => request.server.app.services.templates.labelSetNames();

export const getLabelTemplateInfo: Lifecycle.Method = (request) =>
    request.server.app.services.templates.labelSet(request.params.name as string);
