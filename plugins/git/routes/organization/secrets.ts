import type { Lifecycle, Request } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { pathOrg } from '../shared/access.ts';
import { type SecretInput, secrets } from '../../domain/secrets/secret-service.ts';

/** An organisation's secrets are its owners' (and site administrators') business: their operations declare `org: owner`. */
function ownedOrgId(request: Request): number {
    return pathOrg(request).org.id;
}

export const orgListActionsSecrets: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const { rows, total } = await secrets(request.server).list(ownedOrgId(request), paging);
    return setPagingHeaders(request, h.response(rows), request.server.app.config.publicUrl, { total, paging });
};

export const updateOrgSecret: Lifecycle.Method = async (request, h) => {
    const created = await secrets(request.server).put(
        ownedOrgId(request),
        request.params.secretname as string,
        request.payload as SecretInput,
    );
    return h.response().code(created ? 201 : 204);
};

export const deleteOrgSecret: Lifecycle.Method = async (request, h) => {
    await secrets(request.server).delete(ownedOrgId(request), request.params.secretname as string);
    return h.response().code(204);
};
