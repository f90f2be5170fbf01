import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { type AuditFilters, audit } from '../../domain/accounts/audit-service.ts';

export const listAudit: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const { entries, total } = await audit(request.server).list(request.query as AuditFilters, paging);
    return setPagingHeaders(request, h.response({ entries, total }), request.server.app.config.publicUrl, { total, paging });
};
