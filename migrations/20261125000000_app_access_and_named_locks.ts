import type { Knex } from 'knex';

/**
 * Who may pass the identity provider in front of an app (`dp_apps.access`, JSON: the chosen groups), and named locks
 * that serialise work across runs (each run is its own worker with its own connection): authentik replaces an
 * outpost's whole provider list on every write, so two deploys that add their provider at once must take turns.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_apps', (table) => {
        table.text('access').nullable();
    });
    await knex.schema.createTable('named_locks', (table) => {
        table.string('name', 191).primary();
        table.string('holder', 64).notNullable();
        table.bigInteger('expires_at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('named_locks');
    await knex.schema.alterTable('dp_apps', (table) => {
        table.dropColumn('access');
    });
}
