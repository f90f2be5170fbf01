import type { Knex } from 'knex';

/**
 * Recipes saved from working apps (`POST /api/apps/{name}/recipe`), and what each app took from a recipe: which
 * recipe it was made with, and when the recipe's one-time `init` commands ran in it.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_recipes', (table) => {
        table.increments('id').primary();
        table.string('image', 255).notNullable().index();
        table.string('app_name', 63).notNullable();
        table.text('fields').notNullable();
        table.string('saved_by', 255).notNullable();
        table.bigInteger('saved_at').notNullable();
    });
    await knex.schema.alterTable('dp_apps', (table) => {
        table.string('recipe_id', 191).nullable();
        table.bigInteger('init_done_at').nullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_apps', (table) => {
        table.dropColumn('recipe_id');
        table.dropColumn('init_done_at');
    });
    await knex.schema.dropTable('dp_recipes');
}
