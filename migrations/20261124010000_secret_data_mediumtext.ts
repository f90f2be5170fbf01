import type { Knex } from 'knex';

/**
 * A secret's value may be 65,536 bytes (Gitea's limit); sealed (IV, tag and base64) it takes about 87,400, more than
 * MariaDB's TEXT holds. SQLite's TEXT has no such bound.
 */
function onMysql(knex: Knex): boolean {
    return knex.client.config.client !== 'better-sqlite3';
}

export async function up(knex: Knex): Promise<void> {
    if (onMysql(knex)) {
        await knex.schema.alterTable('secrets', (table) => {
            table.text('data', 'mediumtext').notNullable().alter();
        });
    }
}

export async function down(knex: Knex): Promise<void> {
    if (onMysql(knex)) {
        await knex.schema.alterTable('secrets', (table) => {
            table.text('data').notNullable().alter();
        });
    }
}
