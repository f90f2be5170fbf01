import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { signedInUser } from '../../domain/identity/auth.ts';
import { toApiPackage } from '../../domain/packages/package-api.ts';
import { packages } from '../../domain/packages/package-service.ts';

export const adminListPackages: Lifecycle.Method = async (request, h) => {
    const query = request.query as Record<string, unknown>;
    const paging = parsePaging(query);
    const filters = { type: query.type as string | undefined, q: query.q as string | undefined };
    const { rows, total } = await packages(request.server).search(filters, paging);
    const { publicUrl } = request.server.app.config;
    const viewer = signedInUser(request);
    const response = h.response(rows.map((row) => toApiPackage(row, viewer, publicUrl)));
    return setPagingHeaders(request, response, publicUrl, { total, paging });
};
