import type { Lifecycle } from '@hapi/hapi';

import { pathUser } from '../shared/access.ts';
import { signedInUser } from '../../domain/identity/auth.ts';
import { toApiRepository } from '../../domain/repositories/format.ts';
import { type CreateRepositoryInput, repositories } from '../../domain/repositories/repository-service.ts';

export const adminCreateRepo: Lifecycle.Method = async (request, h) => {
    const owner = pathUser(request);
    const doer = signedInUser(request);
    const repository = await repositories(request.server).create(owner, request.payload as CreateRepositoryInput, doer);
    return h.response(toApiRepository(repository, owner, doer, request.server.app.config.publicUrl)).code(201);
};
