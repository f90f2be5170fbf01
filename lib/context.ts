import type { Knex } from 'knex';

import type { Config } from './config.ts';
import type { Sealer } from './crypto.ts';

/** What every plugin may read from `server.app`. */
export interface AppState {
    config: Config;
    knex: Knex;
    sealer: Sealer;
    /** Operations of the specs that have no handler yet, by operationId or handler name. */
    missingOperations: string[];
}

declare module '@hapi/hapi' {
    /** Route settings the loaders put under `plugins.gatehouse` (the deploy routes' role and whether each is a run). */
    interface PluginSpecificConfiguration {
        gatehouse?: Record<string, unknown>;
    }

    // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merges AppState into hapi's type
    interface ServerApplicationState extends AppState {}
}
