import type { Knex } from 'knex';

/** Cron tasks: their counters and lease (shared by every server on the database), executions, and system notices. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('cron_tasks', (table) => {
        table.string('name', 64).primary();
        table.bigInteger('exec_times').notNullable().defaultTo(0);
        table.bigInteger('last_run_at').notNullable().defaultTo(0);
        // The schedule slot last claimed: a tick runs on one server only.
        table.bigInteger('last_slot').notNullable().defaultTo(0);
        table.string('lease_holder', 64).notNullable().defaultTo('');
        table.bigInteger('lease_expires_at').notNullable().defaultTo(0);
    });

    await knex.schema.createTable('cron_executions', (table) => {
        table.bigIncrements('id');
        table.string('task', 64).notNullable();
        table.string('cause', 16).notNullable();
        table.bigInteger('slot').notNullable().defaultTo(0);
        table.string('holder', 64).notNullable();
        table.string('status', 16).notNullable();
        table.text('message').notNullable();
        table.bigInteger('started_at').notNullable();
        table.bigInteger('finished_at').notNullable().defaultTo(0);
        table.index(['task', 'id']);
    });

    await knex.schema.createTable('system_notices', (table) => {
        table.bigIncrements('id');
        // Gitea's notice types: 1 repository, 2 task.
        table.integer('type').notNullable();
        table.text('description').notNullable();
        table.bigInteger('created_at').notNullable();
        table.index(['created_at']);
    });
}

export async function down(knex: Knex): Promise<void> {
    for (const table of ['system_notices', 'cron_executions', 'cron_tasks']) {
        await knex.schema.dropTable(table);
    }
}
