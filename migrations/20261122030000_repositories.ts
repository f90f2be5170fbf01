import type { Knex } from 'knex';

/** Repository records; the bare repositories themselves live under the repositories root on disk. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('repositories', (table) => {
        table.bigIncrements('id');
        table.bigInteger('owner_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.string('owner_name', 191).notNullable();
        table.string('lower_name', 191).notNullable();
        table.string('name', 191).notNullable();
        table.string('description', 2048).notNullable().defaultTo('');
        table.string('website', 2048).notNullable().defaultTo('');
        table.boolean('is_private').notNullable().defaultTo(false);
        table.boolean('is_empty').notNullable().defaultTo(true);
        table.boolean('is_template').notNullable().defaultTo(false);
        table.boolean('is_archived').notNullable().defaultTo(false);
        table.string('default_branch', 255).notNullable().defaultTo('main');
        table.bigInteger('size').notNullable().defaultTo(0);
        table.string('object_format_name', 16).notNullable().defaultTo('sha1');
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.unique(['owner_id', 'lower_name']);
        table.index(['lower_name']);
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('repositories');
}
