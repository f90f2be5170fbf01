import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import type { UserRow } from '../identity/user-service.ts';
import { type RepositoryRow, toRepositoryRow } from '../repositories/repository-service.ts';
import { webhooks } from './hook-service.ts';
import { repositoryPayload } from './payloads.ts';
import { onRepositoryEvents } from '../repositories/repository-events.ts';
import { deliveryScheduler } from './scheduler.ts';

async function repositoryCreated(server: Server, repository: RepositoryRow, owner: UserRow, doer: UserRow): Promise<void> {
    const hooks = webhooks(server);
    await server.app.knex.transaction(async (trx) => {
        await hooks.copyDefaultHooks(repository.id, trx);
        await hooks.enqueue(trx, repository.id, 'repository', 'repository', repositoryPayload(server, 'created', repository, owner, doer));
    });
    hooks.deliverSoon();
}

/** An owner's repositories go with the owner: system hooks hear of each (the repositories' own hooks go too). */
async function ownedRepositoriesDeleting(server: Server, owner: UserRow, trx: Knex.Transaction): Promise<() => Promise<void>> {
    const hooks = webhooks(server);
    const rows = await trx('repositories').where({ owner_id: owner.id });
    for (const raw of rows) {
        const payload = repositoryPayload(server, 'deleted', toRepositoryRow(raw), owner, owner);
        await hooks.enqueue(trx, null, 'repository', 'repository', payload);
    }

    return async () => hooks.deliverSoon();
}

/** System and default webhooks: repository events are heard, and the delivery worker is scheduled. */
export default async function setUpWebhooks(server: Server): Promise<void> {
    onRepositoryEvents('webhooks', { created: repositoryCreated, deletingOwned: ownedRepositoriesDeleting });
    await deliveryScheduler(server).setUp();
}
