import type { Server } from '@hapi/hapi';
import type { Knex } from 'knex';

import type { UserRow } from '../identity/user-service.ts';
import type { RepositoryRow } from './repository-service.ts';

/** What follows a repository's creation or deletion (default hooks copied, `repository` webhooks fired). */
export interface RepositoryListener {
    created(server: Server, repository: RepositoryRow, owner: UserRow, doer: UserRow): Promise<void>;
    /** Runs inside the deleting transaction, before an owner's repositories go; the result runs after commit. */
    deletingOwned(server: Server, owner: UserRow, trx: Knex.Transaction): Promise<() => Promise<void>>;
}

const listeners = new Map<string, RepositoryListener>();

export function onRepositoryEvents(name: string, listener: RepositoryListener): void {
    listeners.set(name, listener);
}

/** The repository service calls these; it knows nothing of what listens. */
export const repositoryEvents = {
    async created(server: Server, repository: RepositoryRow, owner: UserRow, doer: UserRow): Promise<void> {
        for (const listener of listeners.values()) {
            await listener.created(server, repository, owner, doer);
        }
    },

    async deletingOwned(server: Server, owner: UserRow, trx: Knex.Transaction): Promise<() => Promise<void>> {
        const afterCommit: Array<() => Promise<void>> = [];
        for (const listener of listeners.values()) {
            afterCommit.push(await listener.deletingOwned(server, owner, trx));
        }

        return async () => {
            for (const after of afterCommit) {
                await after();
            }
        };
    },
};
