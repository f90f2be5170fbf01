import type { Knex } from 'knex';

const INDEX = 'dp_runs_running_app_unique';

/**
 * One running run per app, held by the database: `running_app` is the app's name while the run is running and
 * NULL once it ended (NULLs never collide in a unique index). Generated from `state`, so every way a run ends,
 * including an update by hand, frees the app. Both SQLite and MariaDB index virtual generated columns.
 */
export async function up(knex: Knex): Promise<void> {
    await interruptAllButTheLatestRunningRun(knex);
    await knex.raw(
        "ALTER TABLE dp_runs ADD COLUMN running_app VARCHAR(63) GENERATED ALWAYS AS (CASE WHEN state = 'running' THEN app_name END) VIRTUAL",
    );
    await knex.raw(`CREATE UNIQUE INDEX ${INDEX} ON dp_runs (running_app)`);
}

/** Before the index can exist, an app may have several runs left running (the race this closes). */
async function interruptAllButTheLatestRunningRun(knex: Knex): Promise<void> {
    const running = (await knex('dp_runs').where({ state: 'running' }).orderBy('id', 'desc').select('id', 'app_name')) as Array<{
        id: number;
        app_name: string;
    }>;
    const seen = new Set<string>();
    const older: number[] = [];
    for (const run of running) {
        if (seen.has(run.app_name)) {
            older.push(Number(run.id));
        }

        seen.add(run.app_name);
    }

    if (older.length > 0) {
        await knex('dp_runs')
            .whereIn('id', older)
            .update({ state: 'interrupted', error: 'interrupted: another run of the app was in progress', ended_at: Date.now() });
    }
}

export async function down(knex: Knex): Promise<void> {
    await knex.raw(`DROP INDEX ${INDEX}${knex.client.config.client === 'better-sqlite3' ? '' : ' ON dp_runs'}`);
    await knex.raw('ALTER TABLE dp_runs DROP COLUMN running_app');
}
