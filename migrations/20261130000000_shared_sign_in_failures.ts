import type { Knex } from 'knex';

/**
 * Failed sign-ins and the addresses each account signs in from, kept where every Gatehouse process on the database
 * sees them (lib/throttle.ts, SharedFailures): N instances behind one balancer must not allow N times the guesses.
 * Keys are sha256 digests of the scope, account and address, so no e-mail or address is kept here in the clear.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('auth_failures', (table) => {
        table.increments('id').primary();
        table.string('key_hash', 64).notNullable().index();
        table.bigInteger('at').notNullable();
    });
    await knex.schema.createTable('auth_known_addresses', (table) => {
        table.string('key_hash', 64).primary();
        table.bigInteger('at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('auth_known_addresses');
    await knex.schema.dropTable('auth_failures');
}
