import type { Lifecycle } from '@hapi/hapi';

export const listLicenseTemplates: Lifecycle.Method = (request, h) =>
    h.response(request.server.app.services.templates.licenseListJson()).type('application/json; charset=utf-8');

export const getLicenseTemplateInfo: Lifecycle.Method = (request) =>
    request.server.app.services.templates.license(request.params.name as string);
