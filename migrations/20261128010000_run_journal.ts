import type { Knex } from 'knex';

/**
 * A run's journal: each change a run makes to the host (a file written, a container made or set aside, a network
 * or volume made, an identity-provider object made), written before the change. A run that ends forgets its
 * journal; a run that was interrupted (its server killed) is undone from it, last change first, when it is taken over.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_run_journal', (table) => {
        table.increments('id').primary();
        table.integer('run_id').notNullable().index();
        table.text('entry').notNullable();
        table.bigInteger('at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_run_journal');
}
