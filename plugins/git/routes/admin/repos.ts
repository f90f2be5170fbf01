import type { Lifecycle } from '@hapi/hapi';

import { signedInUser } from '../../domain/identity/auth.ts';
import { users } from '../../domain/identity/user-service.ts';
import { toApiRepository } from '../../domain/repositories/format.ts';
import { type CreateRepositoryInput, repositories } from '../../domain/repositories/repository-service.ts';

export const adminCreateRepo: Lifecycle.Method = async (request, h) => {
    const owner = await users(request.server).resolve(request.params.username as string);
    const doer = signedInUser(request);
    const repository = await repositories(request.server).create(owner, request.payload as CreateRepositoryInput, doer);
    return h.response(toApiRepository(repository, owner, doer, request.server.app.config.publicUrl)).code(201);
};
