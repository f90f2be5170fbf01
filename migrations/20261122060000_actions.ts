import type { Knex } from 'knex';

/** Gitea Actions: runners and their registration tokens, workflow runs, their jobs and logs, and secrets. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('action_runners', (table) => {
        table.bigIncrements('id');
        table.string('uuid', 36).notNullable().unique();
        table.string('name', 255).notNullable();
        // 0 is the instance's scope; otherwise the organisation (or user) owning the runner.
        table.bigInteger('owner_id').notNullable().defaultTo(0);
        table.bigInteger('repo_id').notNullable().defaultTo(0);
        table.string('version', 64).notNullable().defaultTo('');
        table.text('agent_labels').notNullable();
        table.boolean('ephemeral').notNullable().defaultTo(false);
        table.boolean('is_disabled').notNullable().defaultTo(false);
        table.string('token_hash', 64).notNullable().unique();
        table.bigInteger('last_online').notNullable().defaultTo(0);
        table.bigInteger('last_active').notNullable().defaultTo(0);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.index(['owner_id', 'last_online']);
        table.index(['last_online']);
    });

    await knex.schema.createTable('action_runner_tokens', (table) => {
        table.bigIncrements('id');
        table.string('token_hash', 64).notNullable().unique();
        // Sealed with the master key: the POST hands the active token out again.
        table.text('token_sealed').notNullable();
        table.bigInteger('owner_id').notNullable().defaultTo(0);
        table.bigInteger('repo_id').notNullable().defaultTo(0);
        table.boolean('is_active').notNullable().defaultTo(true);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.index(['owner_id', 'repo_id', 'id']);
    });

    await knex.schema.createTable('action_runs', (table) => {
        table.bigIncrements('id');
        table.string('title', 255).notNullable().defaultTo('');
        table.bigInteger('repo_id').unsigned().notNullable().references('id').inTable('repositories').onDelete('CASCADE');
        // The repository's owner, kept here so that an organisation's runs are listed without a join.
        table.bigInteger('owner_id').notNullable();
        table.string('workflow_id', 255).notNullable();
        table.bigInteger('run_index').notNullable();
        table.bigInteger('trigger_user_id').notNullable().defaultTo(0);
        table.string('ref', 255).notNullable().defaultTo('');
        table.string('commit_sha', 64).notNullable().defaultTo('');
        table.string('event', 64).notNullable();
        table.integer('status').notNullable();
        table.integer('attempt').notNullable().defaultTo(1);
        table.bigInteger('started').notNullable().defaultTo(0);
        table.bigInteger('stopped').notNullable().defaultTo(0);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.unique(['repo_id', 'run_index']);
        table.index(['owner_id', 'id']);
        table.index(['status', 'id']);
        table.index(['trigger_user_id']);
    });

    await knex.schema.createTable('action_run_jobs', (table) => {
        table.bigIncrements('id');
        table.bigInteger('run_id').unsigned().notNullable().references('id').inTable('action_runs').onDelete('CASCADE');
        table.bigInteger('repo_id').notNullable();
        table.bigInteger('owner_id').notNullable();
        table.string('name', 255).notNullable();
        table.integer('attempt').notNullable().defaultTo(1);
        table.text('runs_on').notNullable();
        table.bigInteger('runner_id').notNullable().defaultTo(0);
        table.integer('status').notNullable();
        table.text('steps').notNullable();
        table.bigInteger('started').notNullable().defaultTo(0);
        table.bigInteger('stopped').notNullable().defaultTo(0);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.index(['run_id']);
        table.index(['owner_id', 'id']);
        table.index(['status', 'id']);
    });

    await knex.schema.createTable('action_logs', (table) => {
        table.bigIncrements('id');
        table.bigInteger('job_id').unsigned().notNullable().references('id').inTable('action_run_jobs').onDelete('CASCADE');
        table.text('content').notNullable();
        table.bigInteger('created_at').notNullable();
        table.index(['job_id']);
        table.index(['created_at']);
    });

    await knex.schema.createTable('secrets', (table) => {
        table.bigIncrements('id');
        table.bigInteger('owner_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.bigInteger('repo_id').notNullable().defaultTo(0);
        table.string('name', 191).notNullable();
        table.text('description').notNullable();
        // AES-256-GCM under the master key, bound to owner and name; never handed out.
        table.text('data').notNullable();
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.unique(['owner_id', 'repo_id', 'name']);
    });
}

export async function down(knex: Knex): Promise<void> {
    for (const table of ['secrets', 'action_logs', 'action_run_jobs', 'action_runs', 'action_runner_tokens', 'action_runners']) {
        await knex.schema.dropTable(table);
    }
}
