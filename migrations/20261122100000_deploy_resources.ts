import type { Knex } from 'knex';

/**
 * What the deploy runs made on the host for an app (images pulled, volumes, certificates, DNS records,
 * archives), so that deleting the app removes only what Gatehouse made unless told otherwise.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_app_resources', (table) => {
        table.bigIncrements('id');
        table.string('app_name', 63).notNullable();
        table.string('kind', 16).notNullable();
        table.string('name', 512).notNullable();
        table.bigInteger('created_at').notNullable();
        table.index(['app_name']);
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_app_resources');
}
