import type { Knex } from 'knex';

/** The certificate expiry warnings sent: one per certificate (its domain) and day, whichever server sends it. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_certificate_warnings', (table) => {
        table.string('domain', 253).notNullable();
        table.string('day', 10).notNullable();
        table.bigInteger('created_at').notNullable();
        table.primary(['domain', 'day']);
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_certificate_warnings');
}
