import type { Lifecycle } from '@hapi/hapi';

import { templates } from '../../domain/templates/templates-service.ts';

export const listLicenseTemplates: Lifecycle.Method = (request, h) =>
    h.response(templates(request.server).licenseListJson()).type('application/json; charset=utf-8');

export const getLicenseTemplateInfo: Lifecycle.Method = (request) => templates(request.server).license(request.params.name as string);
