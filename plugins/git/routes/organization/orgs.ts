import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { pathOrg } from '../shared/access.ts';
import { credentialsOf, readsAsOf, signedInUser } from '../../domain/identity/auth.ts';
import { toApiOrganization } from '../../domain/identity/format.ts';
import { type CreateOrgInput, type EditOrgInput, organizations } from '../../domain/orgs/org-service.ts';

export const orgGetAll: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const viewer = credentialsOf(request)?.user;
    const { publicUrl } = request.server.app.config;
    const { items, total } = await organizations(request.server).list(viewer, paging, false, readsAsOf(request));
    return setPagingHeaders(request, h.response(items), publicUrl, { total, paging });
};

export const orgCreate: Lifecycle.Method = async (request, h) => {
    const doer = signedInUser(request);
    const org = await organizations(request.server).create(doer, request.payload as CreateOrgInput, doer);
    return h.response(toApiOrganization(org, doer, request.server.app.config.publicUrl)).code(201);
};

export const orgGet: Lifecycle.Method = async (request) => {
    return toApiOrganization(pathOrg(request).org, credentialsOf(request)?.user, request.server.app.config.publicUrl);
};

export const orgEdit: Lifecycle.Method = async (request) => {
    const edited = await organizations(request.server).edit(pathOrg(request).org, (request.payload ?? {}) as EditOrgInput);
    return toApiOrganization(edited, signedInUser(request), request.server.app.config.publicUrl);
};

export const orgDelete: Lifecycle.Method = async (request, h) => {
    await organizations(request.server).delete(pathOrg(request).org);
    return h.response().code(204);
};
