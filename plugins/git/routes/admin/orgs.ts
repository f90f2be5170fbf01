import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { pathUser } from '../shared/access.ts';
import { readsAsOf, signedInUser } from '../../domain/identity/auth.ts';
import { toApiOrganization } from '../../domain/identity/format.ts';
import { type CreateOrgInput, organizations } from '../../domain/orgs/org-service.ts';

export const adminGetAllOrgs: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const viewer = signedInUser(request);
    const { publicUrl } = request.server.app.config;
    const { items, total } = await organizations(request.server).list(viewer, paging, true, readsAsOf(request));
    return setPagingHeaders(request, h.response(items), publicUrl, { total, paging });
};

export const adminCreateOrg: Lifecycle.Method = async (request, h) => {
    const owner = pathUser(request);
    const doer = signedInUser(request);
    const org = await organizations(request.server).create(owner, request.payload as CreateOrgInput, doer);
    return h.response(toApiOrganization(org, doer, request.server.app.config.publicUrl)).code(201);
};
