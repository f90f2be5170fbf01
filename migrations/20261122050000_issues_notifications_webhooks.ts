import type { Knex } from 'knex';

/** Issues and their comments, notification threads, webhooks and their queued deliveries (Gitea's hook tasks). */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('issues', (table) => {
        table.bigIncrements('id');
        table.bigInteger('repo_id').unsigned().notNullable().references('id').inTable('repositories').onDelete('CASCADE');
        table.bigInteger('index').notNullable();
        // No foreign key: a deleted author's issues stay, shown as Gitea's Ghost user.
        table.bigInteger('poster_id').notNullable();
        table.string('title', 255).notNullable();
        table.text('body').notNullable();
        table.boolean('is_pull').notNullable().defaultTo(false);
        table.boolean('is_closed').notNullable().defaultTo(false);
        table.boolean('is_locked').notNullable().defaultTo(false);
        table.integer('num_comments').notNullable().defaultTo(0);
        table.string('ref', 255).notNullable().defaultTo('');
        table.integer('content_version').notNullable().defaultTo(0);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.bigInteger('closed_at').nullable();
        table.unique(['repo_id', 'index']);
    });

    await knex.schema.createTable('issue_comments', (table) => {
        table.bigIncrements('id');
        table.bigInteger('issue_id').unsigned().notNullable().references('id').inTable('issues').onDelete('CASCADE');
        table.bigInteger('poster_id').notNullable();
        table.text('body').notNullable();
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.index(['issue_id', 'poster_id']);
    });

    await knex.schema.createTable('notifications', (table) => {
        table.bigIncrements('id');
        table.bigInteger('user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.bigInteger('repo_id').unsigned().notNullable().references('id').inTable('repositories').onDelete('CASCADE');
        table.bigInteger('issue_id').unsigned().nullable().references('id').inTable('issues').onDelete('CASCADE');
        table.bigInteger('comment_id').nullable();
        table.string('commit_id', 64).notNullable().defaultTo('');
        /** 1 issue, 2 pull, 3 commit, 4 repository. */
        table.tinyint('source').notNullable();
        /** 1 unread, 2 read, 3 pinned. */
        table.tinyint('status').notNullable();
        table.bigInteger('updated_by').notNullable();
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.unique(['user_id', 'issue_id']);
        table.index(['user_id', 'status', 'updated_at']);
        table.index(['user_id', 'updated_at']);
    });

    await knex.schema.createTable('webhooks', (table) => {
        table.bigIncrements('id');
        /** Null for system and default hooks; default hooks are copied into each new repository. */
        table.bigInteger('repo_id').unsigned().nullable().references('id').inTable('repositories').onDelete('CASCADE');
        table.boolean('is_system_webhook').notNullable().defaultTo(false);
        table.string('type', 32).notNullable();
        table.string('name', 255).notNullable().defaultTo('');
        table.text('url').notNullable();
        table.string('content_type', 8).notNullable();
        table.string('http_method', 8).notNullable().defaultTo('POST');
        /** Sealed with the master key; never returned. */
        table.text('secret_sealed').nullable();
        table.text('authorization_header_sealed').nullable();
        /** JSON array of Gitea's event names. */
        table.text('events').notNullable();
        table.string('branch_filter', 255).notNullable().defaultTo('');
        table.boolean('is_active').notNullable().defaultTo(false);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.index(['repo_id']);
    });

    await knex.schema.createTable('hook_tasks', (table) => {
        table.bigIncrements('id');
        table.bigInteger('hook_id').unsigned().notNullable().references('id').inTable('webhooks').onDelete('CASCADE');
        table.bigInteger('repo_id').notNullable().defaultTo(0);
        table.string('uuid', 36).notNullable().unique();
        /** Gitea's event type (`issues`, `issue_comment`, `repository`...), sent as X-Gitea-Event-Type. */
        table.string('event_type', 64).notNullable();
        table.text('payload_content', 'mediumtext').notNullable();
        table.boolean('is_delivered').notNullable().defaultTo(false);
        table.boolean('is_succeed').notNullable().defaultTo(false);
        table.integer('attempts').notNullable().defaultTo(0);
        table.bigInteger('next_attempt_at').notNullable();
        table.text('request_info').nullable();
        table.text('response_info').nullable();
        table.integer('duration_ms').nullable();
        table.bigInteger('created_at').notNullable();
        table.bigInteger('delivered_at').nullable();
        table.index(['is_delivered', 'next_attempt_at']);
    });
}

export async function down(knex: Knex): Promise<void> {
    for (const table of ['hook_tasks', 'webhooks', 'notifications', 'issue_comments', 'issues']) {
        await knex.schema.dropTable(table);
    }
}
