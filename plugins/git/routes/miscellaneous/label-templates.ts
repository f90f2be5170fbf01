import type { Lifecycle } from '@hapi/hapi';

import { templates } from '../../domain/templates/templates-service.ts';

export const listLabelTemplates: Lifecycle.Method = (request) => templates(request.server).labelSetNames();

export const getLabelTemplateInfo: Lifecycle.Method = (request) => templates(request.server).labelSet(request.params.name as string);
