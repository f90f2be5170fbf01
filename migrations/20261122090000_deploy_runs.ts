import type { Knex } from 'knex';

/** Runs of the deploy manager (deploy, actions, updates, deletes) and their log lines, kept in order. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('dp_runs', (table) => {
        table.bigIncrements('id');
        table.string('app_name', 63).notNullable();
        table.string('kind', 32).notNullable();
        table.string('state', 16).notNullable().defaultTo('running');
        table.text('error').nullable();
        table.bigInteger('started_by').nullable();
        table.bigInteger('started_at').notNullable();
        table.bigInteger('ended_at').nullable();
        table.index(['app_name', 'state']);
    });

    await knex.schema.createTable('dp_run_events', (table) => {
        table.bigIncrements('id');
        table.bigInteger('run_id').unsigned().notNullable().references('id').inTable('dp_runs').onDelete('CASCADE');
        table.integer('seq').notNullable();
        table.string('step', 64).notNullable().defaultTo('');
        table.string('level', 16).notNullable().defaultTo('info');
        table.text('text').notNullable();
        table.bigInteger('at').notNullable();
        table.unique(['run_id', 'seq']);
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.dropTable('dp_run_events');
    await knex.schema.dropTable('dp_runs');
}
