import type { Lifecycle } from '@hapi/hapi';

import { ForbiddenError } from '../../../../lib/errors.ts';
import { pathOrg } from '../shared/access.ts';
import { signedInUser } from '../../domain/identity/auth.ts';
import { organizations } from '../../domain/orgs/org-service.ts';
import { toApiRepository } from '../../domain/repositories/format.ts';
import { type CreateRepositoryInput, repositories } from '../../domain/repositories/repository-service.ts';

/** The deprecated path of POST /orgs/{org}/repos: owners (and administrators) create repositories in the organisation. */
export const createOrgRepoDeprecated: Lifecycle.Method = async (request, h) => {
    const doer = signedInUser(request);
    const { org } = pathOrg(request);
    if (!doer.is_admin && !(await organizations(request.server).canCreateRepository(org, doer))) {
        throw new ForbiddenError('User is not allowed to create repositories in this organization.');
    }

    const repository = await repositories(request.server).create(org, request.payload as CreateRepositoryInput, doer);
    return h.response(toApiRepository(repository, org, doer, request.server.app.config.publicUrl)).code(201);
};
