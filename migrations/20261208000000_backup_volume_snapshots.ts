import type { Knex } from 'knex';

/**
 * The restic snapshots a backup keeps its volumes in, beside its own (JSON: volume name to snapshot id): a volume the
 * engine keeps in a folder of this host is backed up from that folder, in a snapshot of its own, so that restic
 * rereads only what changed since the volume's last backup. Null for a backup whose volumes are all in its own snapshot.
 */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_backups', (table) => {
        table.text('volume_snapshots').nullable();
    });
}

export async function down(knex: Knex): Promise<void> {
    await knex.schema.alterTable('dp_backups', (table) => {
        table.dropColumn('volume_snapshots');
    });
}
