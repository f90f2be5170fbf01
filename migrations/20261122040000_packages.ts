import type { Knex } from 'knex';

/** Gitea's package registry: packages, their versions and files, and the content-addressed blobs the files point at. */
export async function up(knex: Knex): Promise<void> {
    await knex.schema.createTable('packages', (table) => {
        table.bigIncrements('id');
        table.bigInteger('owner_id').unsigned().notNullable().references('id').inTable('users').onDelete('CASCADE');
        table.string('type', 32).notNullable();
        table.string('name', 191).notNullable();
        table.string('lower_name', 191).notNullable();
        table.bigInteger('created_at').notNullable();
        table.unique(['owner_id', 'type', 'lower_name']);
        table.index(['type', 'lower_name']);
    });

    await knex.schema.createTable('package_versions', (table) => {
        table.bigIncrements('id');
        table.bigInteger('package_id').unsigned().notNullable().references('id').inTable('packages').onDelete('CASCADE');
        // No foreign key: a version outlives its creator, who then shows as Gitea's ghost user.
        table.bigInteger('creator_id').notNullable().defaultTo(0);
        table.string('version', 191).notNullable();
        table.string('lower_version', 191).notNullable();
        table.bigInteger('created_at').notNullable();
        table.unique(['package_id', 'lower_version']);
        table.index(['created_at']);
    });

    await knex.schema.createTable('package_blobs', (table) => {
        table.bigIncrements('id');
        table.bigInteger('size').notNullable();
        table.string('hash_md5', 32).notNullable();
        table.string('hash_sha1', 40).notNullable();
        table.string('hash_sha256', 64).notNullable().unique();
        table.string('hash_sha512', 128).notNullable();
        table.bigInteger('created_at').notNullable();
    });

    await knex.schema.createTable('package_files', (table) => {
        table.bigIncrements('id');
        table.bigInteger('version_id').unsigned().notNullable().references('id').inTable('package_versions').onDelete('CASCADE');
        // Restricts: a blob is removed only once no file points at it.
        table.bigInteger('blob_id').unsigned().notNullable().references('id').inTable('package_blobs');
        table.string('name', 191).notNullable();
        table.string('lower_name', 191).notNullable();
        table.bigInteger('size').notNullable();
        table.bigInteger('created_at').notNullable();
        table.unique(['version_id', 'lower_name']);
        table.index(['blob_id']);
    });
}

export async function down(knex: Knex): Promise<void> {
    for (const table of ['package_files', 'package_blobs', 'package_versions', 'packages']) {
        await knex.schema.dropTable(table);
    }
}
