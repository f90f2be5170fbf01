import type { Knex } from 'knex';

/**
 * The per-app token nginx sends when it hands a visitor to the auto-login (`/__svc/autologin` to
 * `GET /api/autologin/{name}`): sealed here, and written in the clear only into the app's root-only site file.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_apps', (table) => {
        table.text('autologin_token_sealed').nullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_apps', (table) => {
        table.dropColumn('autologin_token_sealed');
    });
}
