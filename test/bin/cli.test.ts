import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ROOT_DIR } from '../../server.ts';
import { createTestServer, freshDatabase, temporaryDirectory } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the gatehouse command', () => {
    it('creates the first administrator and a token that the API accepts, as the README shows', async () => {
        const dataDir = temporaryDirectory();
        const database = await freshDatabase(dataDir);
        const run = (...args: string[]) =>
            spawnSync(process.execPath, [Path.join(ROOT_DIR, 'bin', 'gatehouse.js'), ...args], {
                cwd: ROOT_DIR,
                env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, DATABASE_URL: database.databaseUrl },
                encoding: 'utf8',
            });
        try {
            const created = run(
                'admin',
                'user',
                'create',
                '--username',
                'root',
                '--password',
                'root-password-1',
                '--email',
                'root@example.com',
                '--admin',
            );
            expect(created.status, created.stderr).to.equal(0);
            expect(created.stdout).to.contain("New user 'root' has been successfully created!");

            const generated = run(
                'admin',
                'user',
                'generate-access-token',
                '--username',
                'root',
                '--token-name',
                'ci',
                '--scopes',
                'all',
                '--raw',
            );
            expect(generated.status, generated.stderr).to.equal(0);
            const token = generated.stdout.trim();
            expect(token).to.match(/^[0-9a-f]{40}$/);

            const second = run(
                'admin',
                'user',
                'create',
                '--username',
                'bob',
                '--password',
                'bob-password-1',
                '--email',
                'bob@example.com',
            );
            expect(second.status).to.equal(0);
            const listed = run('admin', 'user', 'list');
            expect(listed.stdout).to.contain('root\troot@example.com\ttrue\ttrue');
            expect(listed.stdout).to.contain('bob\tbob@example.com\ttrue\tfalse');

            const duplicate = run(
                'admin',
                'user',
                'create',
                '--username',
                'root',
                '--password',
                'root-password-2',
                '--email',
                'x@example.com',
            );
            expect(duplicate.status).to.equal(1);
            expect(duplicate.stderr).to.contain('user already exists [name: root]');
            expect(run('admin', 'user', 'create', '--username', 'x').status).to.equal(2);
            expect(run('nonsense').status).to.equal(2);

            const changed = run(
                'admin',
                'user',
                'change-password',
                '--username',
                'bob',
                '--password',
                'bob-password-2',
                '--must-change-password=false',
            );
            expect(changed.status, changed.stderr).to.equal(0);

            const context = await createTestServer({ DATA_DIR: dataDir }, { dataDir, database });
            try {
                const asRoot = await context.server.inject({ url: '/api/v1/admin/users', headers: { authorization: `token ${token}` } });
                expect(asRoot.statusCode).to.equal(200);
                expect((asRoot.result as Array<{ login: string }>).map((user) => user.login)).to.equal(['bob', 'root']);
                const basic = Buffer.from('bob:bob-password-2').toString('base64');
                const asBob = await context.server.inject({ url: '/api/v1/orgs', headers: { authorization: `Basic ${basic}` } });
                expect(asBob.statusCode).to.equal(200);
            } finally {
                await context.cleanup();
            }
        } finally {
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});
