import type { Lifecycle, Request } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { signedInUser } from '../../domain/identity/auth.ts';
import { organizations } from '../../domain/orgs/org-service.ts';
import { type SecretInput, secrets } from '../../domain/secrets/secret-service.ts';

/** An organisation's secrets are its owners' (and site administrators') business. */
async function ownedOrgId(request: Request): Promise<number> {
    const doer = signedInUser(request);
    const service = organizations(request.server);
    const org = await service.visible(request.params.org as string, doer);
    await service.requireOwner(org, doer);
    return org.id;
}

export const orgListActionsSecrets: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const { rows, total } = await secrets(request.server).list(await ownedOrgId(request), paging);
    return setPagingHeaders(request, h.response(rows), request.server.app.config.publicUrl, { total, paging });
};

export const updateOrgSecret: Lifecycle.Method = async (request, h) => {
    const created = await secrets(request.server).put(
        await ownedOrgId(request),
        request.params.secretname as string,
        request.payload as SecretInput,
    );
    return h.response().code(created ? 201 : 204);
};

export const deleteOrgSecret: Lifecycle.Method = async (request, h) => {
    await secrets(request.server).delete(await ownedOrgId(request), request.params.secretname as string);
    return h.response().code(204);
};
