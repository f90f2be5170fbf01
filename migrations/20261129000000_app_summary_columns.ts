import type { Knex } from 'knex';

/**
 * What the apps list and a viewer's app page read without parsing the draft or opening the sealed secrets: the
 * draft's sign-in method (`account`) and the secrets as a viewer sees them (names, values masked). The account is
 * filled in here from each draft; the masked secrets are written by the next save, or on the app's first read.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_apps', (table) => {
        table.string('account', 16).notNullable().defaultTo('');
        table.text('secrets_masked').nullable();
    });
    const rows = (await knex('dp_apps').select('id', 'draft')) as Array<{ id: number; draft: string }>;
    for (const row of rows) {
        const account = storedAccount(row.draft);
        if (account !== '') {
            await knex('dp_apps').where({ id: row.id }).update({ account });
        }
    }
}

function storedAccount(draft: string): string {
    try {
        const { account } = JSON.parse(draft) as { account?: unknown };
        return typeof account === 'string' ? account.slice(0, 16) : '';
    } catch {
        return '';
    }
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_apps', (table) => {
        table.dropColumn('account');
        table.dropColumn('secrets_masked');
    });
}
