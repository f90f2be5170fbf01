import type { Knex } from 'knex';

/** Users and organisations (one table, as Gitea keeps them), their e-mails, tokens, old names, teams. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('users', (table) => {
        table.bigIncrements('id');
        table.string('lower_name', 191).notNullable().unique();
        table.string('name', 191).notNullable();
        table.string('full_name', 255).notNullable().defaultTo('');
        table.string('email', 255).notNullable().defaultTo('');
        table.string('passwd_hash', 255).notNullable().defaultTo('');
        table.boolean('must_change_password').notNullable().defaultTo(false);
        table.bigInteger('login_source').notNullable().defaultTo(0);
        table.string('login_name', 255).notNullable().defaultTo('');
        table.tinyint('type').notNullable().defaultTo(0);
        table.string('location', 255).notNullable().defaultTo('');
        table.string('website', 255).notNullable().defaultTo('');
        table.string('description', 255).notNullable().defaultTo('');
        table.string('language', 32).notNullable().defaultTo('');
        table.tinyint('visibility').notNullable().defaultTo(0);
        table.boolean('is_active').notNullable().defaultTo(true);
        table.boolean('is_admin').notNullable().defaultTo(false);
        table.boolean('is_restricted').notNullable().defaultTo(false);
        table.boolean('prohibit_login').notNullable().defaultTo(false);
        table.boolean('allow_git_hook').notNullable().defaultTo(false);
        table.boolean('allow_import_local').notNullable().defaultTo(false);
        table.boolean('allow_create_organization').notNullable().defaultTo(true);
        table.integer('max_repo_creation').notNullable().defaultTo(-1);
        table.boolean('repo_admin_change_team_access').notNullable().defaultTo(false);
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.bigInteger('last_login_at').notNullable().defaultTo(0);
        table.index(['type', 'lower_name']);
    });

    await knex.schema.createTable('email_addresses', (table) => {
        table.bigIncrements('id');
        table.bigInteger('uid').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.string('email', 255).notNullable();
        table.string('lower_email', 191).notNullable().unique();
        table.boolean('is_activated').notNullable().defaultTo(false);
        table.boolean('is_primary').notNullable().defaultTo(false);
        table.index(['uid']);
    });

    await knex.schema.createTable('access_tokens', (table) => {
        table.bigIncrements('id');
        table.bigInteger('uid').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.string('name', 191).notNullable();
        table.string('token_hash', 64).notNullable().unique();
        table.string('token_last_eight', 8).notNullable();
        table.string('scope', 512).notNullable().defaultTo('');
        table.bigInteger('created_at').notNullable();
        table.bigInteger('updated_at').notNullable();
        table.unique(['uid', 'name']);
    });

    await knex.schema.createTable('user_redirects', (table) => {
        table.bigIncrements('id');
        table.string('lower_name', 191).notNullable().unique();
        table.bigInteger('redirect_user_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
    });

    await knex.schema.createTable('teams', (table) => {
        table.bigIncrements('id');
        table.bigInteger('org_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.string('lower_name', 191).notNullable();
        table.string('name', 191).notNullable();
        table.string('authorize', 16).notNullable().defaultTo('read');
        table.boolean('includes_all_repositories').notNullable().defaultTo(false);
        table.boolean('can_create_org_repo').notNullable().defaultTo(false);
        table.unique(['org_id', 'lower_name']);
    });

    await knex.schema.createTable('team_users', (table) => {
        table.bigIncrements('id');
        table.bigInteger('org_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.bigInteger('team_id').unsigned().notNullable().references('id').inTable('teams').onDelete('CASCADE');
        table.bigInteger('uid').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.unique(['team_id', 'uid']);
        table.index(['uid']);
    });

    await knex.schema.createTable('org_users', (table) => {
        table.bigIncrements('id');
        table.bigInteger('org_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.bigInteger('uid').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.boolean('is_public').notNullable().defaultTo(false);
        table.unique(['uid', 'org_id']);
        table.index(['org_id']);
    });
}

export async function down(knex: Knex): Promise<void> {
    for (const table of ['org_users', 'team_users', 'teams', 'user_redirects', 'access_tokens', 'email_addresses', 'users']) {
        await knex.schema.dropTable(table);
    }
}
