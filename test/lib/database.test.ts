import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createKnex } from '../../lib/database.ts';
import { createTestServer, freshDatabase, temporaryDirectory } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function modeOf(path: string): string {
    return (Fs.statSync(path).mode & 0o777).toString(8);
}

/** Runs `work` with a umask that takes nothing away, so the modes seen are the ones the code asked for. */
async function withOpenUmask<T>(work: () => Promise<T>): Promise<T> {
    const previous = process.umask(0);
    try {
        return await work();
    } finally {
        process.umask(previous);
    }
}

describe('files at rest: the data folder and the SQLite files are private to the server', () => {
    it('creates DATA_DIR 0700 and the master key 0600, with the key configured or generated', async () => {
        const root = temporaryDirectory();
        const database = await freshDatabase(root);
        try {
            for (const [folder, environment] of [
                ['generated-key', {}],
                ['configured-key', { MASTER_KEY: 'ab'.repeat(32) }],
            ] as const) {
                const dataDir = Path.join(root, folder, 'data');
                const context = await withOpenUmask(() =>
                    createTestServer({ DATA_DIR: dataDir, ...environment }, { dataDir: root, database }),
                );
                await context.server.stop();
                expect(modeOf(dataDir), folder).to.equal('700');
                if (folder === 'generated-key') {
                    expect(modeOf(Path.join(dataDir, 'master.key'))).to.equal('600');
                }
            }
        } finally {
            await database.drop();
            Fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it('creates the database file, its -wal and -shm files 0600 and their folder 0700', async () => {
        const root = temporaryDirectory();
        const file = Path.join(root, 'fresh', 'gatehouse.sqlite');
        const knex = await withOpenUmask(async () => {
            const opened = createKnex(`sqlite:${file}`);
            await opened.schema.createTable('notes', (table) => table.increments('id'));
            await opened('notes').insert({});
            return opened;
        });
        try {
            expect(modeOf(Path.dirname(file))).to.equal('700');
            for (const path of [file, `${file}-wal`, `${file}-shm`]) {
                expect(modeOf(path), path).to.equal('600');
            }
        } finally {
            await knex.destroy();
            Fs.rmSync(root, { recursive: true, force: true });
        }
    });

    it('narrows the mode of database files an earlier version left readable by others', async () => {
        const root = temporaryDirectory();
        const file = Path.join(root, 'gatehouse.sqlite');
        const earlier = createKnex(`sqlite:${file}`);
        await earlier.schema.createTable('notes', (table) => table.increments('id'));
        await earlier.destroy();
        Fs.chmodSync(file, 0o644);

        const knex = createKnex(`sqlite:${file}`);
        try {
            await knex('notes').insert({});
            for (const path of [file, `${file}-wal`, `${file}-shm`]) {
                expect(modeOf(path), path).to.equal('600');
            }
        } finally {
            await knex.destroy();
            Fs.rmSync(root, { recursive: true, force: true });
        }
    });
});
