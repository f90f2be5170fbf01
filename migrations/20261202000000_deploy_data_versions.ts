import type { Knex } from 'knex';

import { unwatchTables, watchTables } from './20261123000000_data_versions.ts';

/**
 * The deploy manager's tables whose reads are cached in memory (lib/read-cache.ts): the session look-up of every
 * signed-in request, the dashboard, the apps list and an app's page. Each answer is stamped with the counters of every
 * table it reads, so a write from any process (another server, a run's worker, the CLI, a SQL console) makes the
 * next request read again.
 */
export const DEPLOY_WATCHED_TABLES = [
    'dp_sessions',
    'dp_users',
    'dp_apps',
    'dp_runs',
    'dp_run_events',
    'dp_app_resources',
    'dp_recipes',
    'instance_settings',
];

export async function up(knex: Knex): Promise<void> {
    await watchTables(knex, DEPLOY_WATCHED_TABLES);
}

export async function down(knex: Knex): Promise<void> {
    await unwatchTables(knex, DEPLOY_WATCHED_TABLES);
}
