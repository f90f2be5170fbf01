import type { Knex } from 'knex';

/** The deploy manager's own accounts: users with roles and two factors, server-side sessions, the audit log. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_users', (table) => {
        table.bigIncrements('id');
        table.string('email', 191).notNullable().unique();
        table.string('name', 255).notNullable().defaultTo('');
        table.string('password_hash', 255).notNullable().defaultTo('');
        table.string('role', 16).notNullable().defaultTo('viewer');
        table.boolean('disabled').notNullable().defaultTo(false);
        table.text('totp_secret_sealed').nullable();
        table.text('totp_pending_sealed').nullable();
        table.boolean('totp_enabled').notNullable().defaultTo(false);
        table.bigInteger('totp_last_step').notNullable().defaultTo(0);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.bigInteger('last_login_at').notNullable().defaultTo(0);
    });

    await knex.schema.createTable('dp_recovery_codes', (table) => {
        table.bigIncrements('id');
        table.bigInteger('user_id').unsigned().notNullable().references('id').inTable('dp_users').onDelete('CASCADE');
        table.string('code_hash', 64).notNullable();
        table.bigInteger('used_at').notNullable().defaultTo(0);
        table.index(['user_id']);
    });

    await knex.schema.createTable('dp_sessions', (table) => {
        table.bigIncrements('id');
        table.string('id_hash', 64).notNullable().unique();
        table.bigInteger('user_id').unsigned().notNullable().references('id').inTable('dp_users').onDelete('CASCADE');
        table.boolean('mfa_pending').notNullable().defaultTo(false);
        table.string('client_address', 64).notNullable().defaultTo('');
        table.bigInteger('created_at').notNullable();
        table.bigInteger('last_seen_at').notNullable();
        table.bigInteger('expires_at').notNullable();
        table.index(['user_id']);
    });

    await knex.schema.createTable('dp_audit', (table) => {
        table.bigIncrements('id');
        table.bigInteger('at').notNullable();
        table.bigInteger('actor_id').nullable();
        table.string('actor_email', 191).notNullable().defaultTo('');
        table.string('action', 64).notNullable();
        table.string('target', 191).notNullable().defaultTo('');
        table.string('outcome', 16).notNullable().defaultTo('success');
        table.string('client_address', 64).notNullable().defaultTo('');
        table.text('details').nullable();
        table.index(['at']);
        table.index(['action']);
    });
}

export async function down(knex: Knex): Promise<void> {
    for (const table of ['dp_audit', 'dp_sessions', 'dp_recovery_codes', 'dp_users']) {
        await knex.schema.dropTable(table);
    }
}
