import type { Knex } from 'knex';

/**
 * The updates last found for each app (the daily check's, or an app page's look): what the app's tag was then, the
 * updates, and the one last told of, so that every server on the database tells of an update once.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_app_updates', (table) => {
        table.string('app_name', 63).primary();
        table.string('tag', 128).notNullable();
        table.text('updates').notNullable();
        table.string('told', 200).nullable();
        table.bigInteger('checked_at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_app_updates');
}
