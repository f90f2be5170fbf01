import type { Knex } from 'knex';

/**
 * The tickets that open an administrator's terminal (POST /api/apps/{name}/terminal): only a SHA-256 of each, with
 * whom, which app, service and container it is for, and when it lapses (30 s). Kept in the database, so that the
 * WebSocket may reach any server on it; a ticket is used once (the delete that takes it claims it).
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_terminal_tickets', (table) => {
        table.string('hash', 64).primary();
        table.integer('user_id').notNullable();
        table.string('app_name', 63).notNullable();
        table.string('service', 63).notNullable();
        table.string('container', 128).notNullable();
        table.string('client_address', 64).notNullable();
        table.bigInteger('expires_at').notNullable().index();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_terminal_tickets');
}
