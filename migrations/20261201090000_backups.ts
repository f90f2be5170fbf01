import type { Knex } from 'knex';

/**
 * Apps' backups: each row is one restic snapshot of one app (its folder, site, volumes and dumps), with why it was
 * made and what it holds; and the generated password of each restic repository, sealed with the master key, for a
 * repository whose password BACKUP_PASSWORD does not give.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_backups', (table) => {
        table.increments('id').primary();
        table.string('app_name', 63).notNullable().index();
        table.string('repository_hash', 64).notNullable();
        table.string('snapshot', 64).notNullable();
        table.string('reason', 32).notNullable();
        table.text('holds').notNullable();
        table.bigInteger('size').notNullable();
        table.integer('run_id').nullable();
        table.bigInteger('created_at').notNullable();
    });
    await knex.schema.createTable('dp_backup_keys', (table) => {
        table.string('repository_hash', 64).primary();
        table.text('password_sealed').notNullable();
        table.bigInteger('created_at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_backup_keys');
    await knex.schema.dropTable('dp_backups');
}
