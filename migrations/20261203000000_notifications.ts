import type { Knex } from 'knex';

/**
 * Notifications: each user's choice of events per channel (e-mail on or off, a webhook URL with its signing secret
 * sealed with the master key), and every delivery made, with its outcome, for administrators to read.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_notification_settings', (table) => {
        table.bigInteger('user_id').unsigned().primary().references('id').inTable('dp_users').onDelete('CASCADE');
        table.boolean('email_enabled').notNullable().defaultTo(false);
        table.string('email_kinds', 1024).notNullable().defaultTo('');
        table.string('webhook_url', 2048).nullable();
        table.text('webhook_secret_sealed').nullable();
        table.string('webhook_kinds', 1024).notNullable().defaultTo('');
        table.bigInteger('updated_at').notNullable();
    });
    await knex.schema.createTable('dp_notification_deliveries', (table) => {
        table.increments('id').primary();
        table.string('event_kind', 64).notNullable();
        table.string('app_name', 63).nullable();
        table.string('summary', 255).notNullable();
        table.bigInteger('user_id').unsigned().nullable().index();
        table.string('user_email', 254).notNullable();
        table.string('channel', 16).notNullable();
        table.string('target', 2048).notNullable();
        table.string('status', 16).notNullable();
        table.integer('attempts').notNullable().defaultTo(0);
        table.string('error', 1024).nullable();
        table.bigInteger('created_at').notNullable().index();
        table.bigInteger('updated_at').notNullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_notification_deliveries');
    await knex.schema.dropTable('dp_notification_settings');
}
