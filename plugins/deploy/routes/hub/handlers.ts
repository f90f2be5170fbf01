import type { Lifecycle, Request, ResponseToolkit } from '@hapi/hapi';

import type { SearchSort } from '../../domain/hub/docker-hub-client.ts';
import { hub } from '../../domain/hub/hub-service.ts';
import { UpstreamFailure } from '../../domain/hub/upstream.ts';

/**
 * An upstream failure is a 502 with its reason. It is answered here rather than thrown: the error mapper shows
 * any 5xx as `internal server error`, and this reason is the caller's to read.
 */
async function answer(request: Request, h: ResponseToolkit, work: () => Promise<object>) {
    try {
        return await work();
    } catch (error) {
        if (error instanceof UpstreamFailure) {
            request.log(['warn', 'hub'], error.message);
            return h.response({ error: error.message }).code(502);
        }

        throw error;
    }
}

export const searchHub: Lifecycle.Method = async (request, h) => {
    const { q, page, sort, official } = request.query as { q: string; page: number; sort?: SearchSort; official: boolean };
    return await answer(request, h, () => hub(request.server).search({ q, page, sort, official }));
};

export const listHubTags: Lifecycle.Method = async (request, h) => {
    const { repo } = request.query as { repo: string };
    return await answer(request, h, () => hub(request.server).tags(repo));
};

export const inspectImage: Lifecycle.Method = async (request, h) => {
    const { ref, platform } = request.query as { ref: string; platform?: string };
    return await answer(request, h, () => hub(request.server).inspect(ref, platform));
};
