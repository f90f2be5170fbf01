import type { Knex } from 'knex';

/**
 * A run's owner: the server process that executes it (`owner`, a random id per process) and how long its claim holds
 * (`lease_until`, epoch milliseconds), renewed by the owner while the run goes on. Another process takes a running
 * run over (marks it interrupted and frees the app) only once its lease has lapsed; runs from before this column have
 * no lease and are taken over at once, as before.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_runs', (table) => {
        table.string('owner', 64).nullable();
        table.bigInteger('lease_until').nullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_runs', (table) => {
        table.dropColumn('lease_until');
        table.dropColumn('owner');
    });
}
