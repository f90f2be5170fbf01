import type { Knex } from 'knex';

/** The apps that asked for automatic updates, and how far (patch versions, or minor ones too). */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_app_auto_updates', (table) => {
        table.string('app_name', 63).primary();
        table.string('mode', 8).notNullable();
        table.bigInteger('updated_at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_app_auto_updates');
}
