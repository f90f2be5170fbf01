import type { Knex } from 'knex';

/** Key-value settings of this instance (first-run state, integration settings and the like). */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('instance_settings', (table) => {
        table.string('name', 191).primary();
        table.text('value').notNullable();
        table.bigInteger('updated_at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('instance_settings');
}
