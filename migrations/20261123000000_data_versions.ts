import type { Knex } from 'knex';

/**
 * The tables whose reads are cached in memory (lib/read-cache.ts). Every insert, update and delete of one
 * bumps its counter, by trigger, so a write from any process or tool invalidates what every server cached.
 */
export const WATCHED_TABLES = ['users', 'access_tokens', 'org_users', 'repositories', 'issues', 'notifications', 'action_runs'];

const EVENTS = ['insert', 'update', 'delete'] as const;

function triggerName(table: string, event: string): string {
    return `${table}_${event}_version`;
}

function createTrigger(knex: Knex, table: string, event: string): Knex.Raw {
    const bump = `UPDATE data_versions SET version = version + 1 WHERE name = '${table}'`;
    const head = `CREATE TRIGGER ${triggerName(table, event)} AFTER ${event.toUpperCase()} ON ${table} FOR EACH ROW`;
    // SQLite wants a BEGIN ... END body; MariaDB takes the single statement as it is (no delimiter games).
    return knex.raw(knex.client.config.client === 'better-sqlite3' ? `${head} BEGIN ${bump}; END` : `${head} ${bump}`);
}

/** Gives each table its counter and the triggers that bump it; later migrations watch more tables with it. */
export async function watchTables(knex: Knex, tables: readonly string[]): Promise<void> {
    await knex('data_versions').insert(tables.map((name) => ({ name, version: 0 })));
    for (const table of tables) {
        for (const event of EVENTS) {
            await createTrigger(knex, table, event);
        }
    }
}

/** Drops the tables' triggers and counters. */
export async function unwatchTables(knex: Knex, tables: readonly string[]): Promise<void> {
    for (const table of tables) {
        for (const event of EVENTS) {
            await knex.raw(`DROP TRIGGER IF EXISTS ${triggerName(table, event)}`);
        }
    }

    await knex('data_versions').whereIn('name', tables).delete();
}

export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('data_versions', (table) => {
        table.string('name', 64).primary();
        table.bigInteger('version').notNullable().defaultTo(0);
    });
    await watchTables(knex, WATCHED_TABLES);
}

export async function down(knex: Knex): Promise<void> {
    await unwatchTables(knex, WATCHED_TABLES);
    await knex.schema.dropTable('data_versions');
}
