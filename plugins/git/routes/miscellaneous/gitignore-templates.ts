import type { Lifecycle } from '@hapi/hapi';

import { templates } from '../../domain/templates/templates-service.ts';

export const listGitignoresTemplates: Lifecycle.Method = (request) => templates(request.server).gitignoreNames();

export const getGitignoreTemplateInfo: Lifecycle.Method = (request) => templates(request.server).gitignore(request.params.name as string);
