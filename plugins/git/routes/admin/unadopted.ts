import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { unadoptedRepositories } from '../../domain/repositories/unadopted.ts';

interface UnadoptedQuery {
    query?: string;
    pattern?: string;
}

// Gitea's handler reads `query` while its Swagger document names `pattern`: both are accepted.
export const adminUnadoptedList: Lifecycle.Method = async (request, h) => {
    const { query, pattern } = request.query as UnadoptedQuery;
    const paging = parsePaging(request.query);
    const { names, total } = await unadoptedRepositories(request.server).list(query ?? pattern ?? '', paging);
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
