import type { Knex } from 'knex';

/** Apps of the deploy manager: identity, the draft being edited, and its sealed secrets. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_apps', (table) => {
        table.bigIncrements('id');
        table.string('name', 63).notNullable().unique();
        table.string('title', 255).notNullable().defaultTo('');
        table.string('template_id', 191).nullable();
        table.string('image', 255).nullable();
        table.string('tag', 128).notNullable().defaultTo('latest');
        table.string('domain', 253).notNullable();
        table.string('state', 32).notNullable().defaultTo('draft');
        table.integer('host_port').notNullable();
        table.text('draft').notNullable();
        table.text('secrets_sealed').nullable();
        table.text('shared_password_sealed').nullable();
        table.bigInteger('created_by').nullable();
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.unique(['host_port']);
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_apps');
}
