import type { Lifecycle } from '@hapi/hapi';

export const listGitignoresTemplates: Lifecycle.Method = (request) => request.server.app.services.templates.gitignoreNames();

export const getGitignoreTemplateInfo: Lifecycle.Method = (request) =>
    request.server.app.services.templates.gitignore(request.params.name as string);
