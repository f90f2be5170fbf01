import type { Knex } from 'knex';

/**
 * Each app's own backup schedule (`schedule`: a cron expression, or `off`; null, or no row: BACKUP_SCHEDULE's), and
 * the time of the last scheduled backup claimed for it (`last_slot`, epoch milliseconds), so that of the servers on
 * the database one backs the app up at each of its times.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_app_backup_schedules', (table) => {
        table.string('app_name', 63).primary();
        table.string('schedule', 100).nullable();
        table.bigInteger('last_slot').notNullable().defaultTo(0);
        table.bigInteger('updated_at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_app_backup_schedules');
}
