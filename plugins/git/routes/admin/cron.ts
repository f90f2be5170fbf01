import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { cron } from '../../domain/cron/cron-service.ts';

// Gitea pages the task list in memory and sends X-Total-Count without a Link header.
export const adminCronList: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const { rows, total } = await cron(request.server).list(paging);
    return setPagingHeaders(request, h.response(rows), request.server.app.config.publicUrl, { total, paging, link: false });
};

// Synchronous, as in Gitea: 204 once the run has ended (a failure is recorded and logged, still 204).
export const adminCronRun: Lifecycle.Method = async (request, h) => {
    await cron(request.server).run(request.params.task as string);
    return h.response().code(204);
};
