import type { Knex } from 'knex';

/** Users' SSH public keys, and badges (defined once, given to users). */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('public_keys', (table) => {
        table.bigIncrements('id');
        table.bigInteger('owner_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.string('name', 191).notNullable();
        table.string('fingerprint', 191).notNullable().unique();
        table.text('content').notNullable();
        table.boolean('read_only').notNullable().defaultTo(false);
        table.string('type', 16).notNullable().defaultTo('user');
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.bigInteger('last_used_at').notNullable().defaultTo(0);
        table.unique(['owner_id', 'name']);
    });

    await knex.schema.createTable('badges', (table) => {
        table.bigIncrements('id');
        table.string('slug', 191).notNullable().unique();
        table.string('description', 255).notNullable().defaultTo('');
        table.string('image_url', 2048).notNullable().defaultTo('');
    });

    await knex.schema.createTable('user_badges', (table) => {
        table.bigIncrements('id');
        table.bigInteger('badge_id').unsigned().notNullable().references('id').inTable('badges').onDelete('CASCADE');
        table.bigInteger('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.unique(['user_id', 'badge_id']);
        table.index(['badge_id']);
    });
}

export async function down(knex: Knex): Promise<void> {
    for (const table of ['user_badges', 'badges', 'public_keys']) {
        await knex.schema.dropTable(table);
    }
}
