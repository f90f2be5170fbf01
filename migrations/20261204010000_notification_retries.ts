import type { Knex } from 'knex';

/**
 * Notification deliveries survive a restart: each keeps its event's details (plain facts, never a secret), when its
 * next attempt is due, and until when a server holds it (its attempt under way or its wait); a pending delivery no
 * server holds is taken up by any of them once due.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_notification_deliveries', (table) => {
        table.text('details').nullable();
        table.bigInteger('next_attempt_at').nullable();
        table.bigInteger('held_until').nullable();
        table.index(['status', 'next_attempt_at'], 'dp_notification_deliveries_due');
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_notification_deliveries', (table) => {
        table.dropIndex(['status', 'next_attempt_at'], 'dp_notification_deliveries_due');
        table.dropColumn('details');
        table.dropColumn('next_attempt_at');
        table.dropColumn('held_until');
    });
}
