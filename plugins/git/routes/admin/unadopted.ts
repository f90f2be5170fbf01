import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { unadoptedRepositories } from '../../domain/repositories/unadopted.ts';
import { formString } from '../shared/query.ts';

// Gitea's handler reads `query` while its Swagger document names `pattern` (which gitea-js sends): both are accepted.
export const adminUnadoptedList: Lifecycle.Method = async (request, h) => {
    const filter = formString(request.query, 'query') || formString(request.query, 'pattern');
    const paging = parsePaging(request.query);
    const { names, total } = await unadoptedRepositories(request.server).list(filter, paging);
    return setPagingHeaders(request, h.response(names), request.server.app.config.publicUrl, { total, paging, link: false });
};

export const adminAdoptRepository: Lifecycle.Method = async (request, h) => {
    await unadoptedRepositories(request.server).adopt(request.params.owner as string, request.params.repo as string);
    return h.response().code(204);
};

export const adminDeleteUnadoptedRepository: Lifecycle.Method = async (request, h) => {
    await unadoptedRepositories(request.server).delete(request.params.owner as string, request.params.repo as string);
    return h.response().code(204);
};
