import { execFileSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { users } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, temporaryDirectory, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface RepositoryBody {
    id: number;
    name: string;
    full_name: string;
    html_url: string;
    clone_url: string;
    url: string;
    empty: boolean;
    private: boolean;
    template: boolean;
    default_branch: string;
    description: string;
    size: number;
    owner: { login: string };
    permissions: { admin: boolean; push: boolean; pull: boolean };
    parent?: unknown;
}

function git(args: string[], cwd?: string): string {
    return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
}

describe('admin: create a repository for a user', () => {
    let context: TestServer;
    let admin: TestUser;
    let owner: TestUser;

    const create = async (username: string, payload: object, headers = admin.headers) =>
        await context.server.inject({ method: 'POST', url: `/api/v1/admin/users/${username}/repos`, headers, payload });
    const repoDirectory = (ownerName: string, name: string) => Path.join(context.config.repositoriesDir, ownerName, `${name}.git`);
    const recordCount = async (name: string) =>
        Number((await context.database.knex('repositories').where({ lower_name: name }).count({ count: '*' }).first())?.count ?? 0);

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { admin: true, name: 'repoadmin' });
        owner = await createTestUser(context.server, { name: 'Owner1' });
    });

    after(async () => {
        await context.cleanup();
    });

    it('creates an empty bare repository and answers 201 with a Repository', async () => {
        const response = await create('owner1', { name: 'Empty-One', description: 'nothing yet' });
        expect(response.statusCode).to.equal(201);
        expect(swaggerErrors('adminCreateRepo', 201, response.result)).to.equal([]);
        const body = response.result as RepositoryBody;
        expect(body.full_name).to.equal('Owner1/Empty-One');
        expect(body.html_url).to.equal('http://127.0.0.1:3000/Owner1/Empty-One');
        expect(body.clone_url).to.equal('http://127.0.0.1:3000/Owner1/Empty-One.git');
        expect(body.url).to.equal('http://127.0.0.1:3000/api/v1/repos/Owner1/Empty-One');
        expect(body.owner.login).to.equal('Owner1');
        expect(body.permissions).to.equal({ admin: true, push: true, pull: true });
        expect(body).to.include({ empty: true, private: false, template: false, default_branch: 'main', description: 'nothing yet' });
        expect(body.parent).to.not.exist();

        const directory = repoDirectory('owner1', 'empty-one');
        expect(git(['rev-parse', '--is-bare-repository'], directory).trim()).to.equal('true');
        expect(Fs.readFileSync(Path.join(directory, 'HEAD'), 'utf8').trim()).to.equal('ref: refs/heads/main');
    });

    it('writes a first commit with README, .gitignore and LICENSE that a clone sees', async () => {
        const payload = {
            name: 'starter',
            description: 'A starter',
            auto_init: true,
            gitignores: 'Node, Python',
            license: 'MIT',
            default_branch: 'trunk',
            private: true,
            template: true,
        };
        const response = await create('owner1', payload);
        expect(response.statusCode).to.equal(201);
        expect(swaggerErrors('adminCreateRepo', 201, response.result)).to.equal([]);
        expect(response.result).to.include({ empty: false, private: true, template: true, default_branch: 'trunk' });

        const directory = repoDirectory('owner1', 'starter');
        expect(Fs.existsSync(Path.join(directory, 'index'))).to.be.false();
        const clone = Path.join(temporaryDirectory(), 'starter');
        git(['clone', '--quiet', directory, clone]);
        expect(git(['rev-parse', '--abbrev-ref', 'HEAD'], clone).trim()).to.equal('trunk');
        expect(Fs.readFileSync(Path.join(clone, 'README.md'), 'utf8')).to.equal('# starter\n\nA starter\n');
        const gitignore = Fs.readFileSync(Path.join(clone, '.gitignore'), 'utf8');
        expect(gitignore).to.contain('# ---> Node\n');
        expect(gitignore).to.contain('# ---> Python\n');
        expect(gitignore).to.contain('node_modules');
        const license = Fs.readFileSync(Path.join(clone, 'LICENSE'), 'utf8');
        expect(license).to.contain('Permission is hereby granted');
        expect(license).to.contain(String(new Date().getUTCFullYear()));
        expect(git(['log', '--format=%an <%ae>|%s'], clone).trim()).to.equal('repoadmin <repoadmin@example.com>|Initial commit');
        Fs.rmSync(Path.dirname(clone), { recursive: true, force: true });
    });

    it('refuses an existing name, in any case, with 409', async () => {
        expect((await create('owner1', { name: 'taken' })).statusCode).to.equal(201);
        const response = await create('owner1', { name: 'TAKEN' });
        expect(response.statusCode).to.equal(409);
        expect((response.result as { message: string }).message).to.equal('The repository with the same name already exists.');
    });

    it('refuses with 409 when unrecorded files already hold the name, and leaves them alone', async () => {
        const directory = repoDirectory('owner1', 'leftover');
        Fs.mkdirSync(directory, { recursive: true });
        Fs.writeFileSync(Path.join(directory, 'keep'), 'x');
        const response = await create('owner1', { name: 'leftover' });
        expect(response.statusCode).to.equal(409);
        expect(Fs.readFileSync(Path.join(directory, 'keep'), 'utf8')).to.equal('x');
        expect(await recordCount('leftover')).to.equal(0);
        Fs.rmSync(directory, { recursive: true });
    });

    it('refuses invalid, reserved and missing names with 422', async () => {
        const refusals: Array<[string, string]> = [
            ['bad name', 'repository name is invalid [name: bad name]'],
            ['..', 'repo name is reserved [name: ..]'],
            ['thing.git', 'repo name pattern is not allowed [pattern: *.git]'],
        ];
        for (const [name, message] of refusals) {
            const response = await create('owner1', { name });
            expect(response.statusCode, name).to.equal(422);
            expect((response.result as { message: string }).message).to.equal(message);
        }

        const missing = await create('owner1', { description: 'no name' });
        expect(missing.statusCode).to.equal(422);
        expect((missing.result as { message: string }).message).to.equal('[Name]: Required');
    });

    it('refuses unknown ignore-file, licence and label templates with 422, leaving nothing behind', async () => {
        for (const option of [{ gitignores: 'Node,NoSuchThing' }, { license: 'NoSuchLicence' }, { issue_labels: 'Nope' }]) {
            const response = await create('owner1', { name: 'templated', auto_init: true, ...option });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.match(/NoSuchThing|NoSuchLicence|Nope/);
        }

        expect(Fs.existsSync(repoDirectory('owner1', 'templated'))).to.be.false();
        expect(await recordCount('templated')).to.equal(0);
    });

    it('refuses an unknown readme template with auto_init with 400', async () => {
        const response = await create('owner1', { name: 'readme', auto_init: true, readme: 'Fancy' });
        expect(response.statusCode).to.equal(400);
        expect((response.result as { message: string }).message).to.equal('readme template does not exist, available templates: [Default]');
    });

    it('refuses a default branch git would refuse with 422', async () => {
        const response = await create('owner1', { name: 'branchy', default_branch: 'bad..branch' });
        expect(response.statusCode).to.equal(422);
        expect(Fs.existsSync(repoDirectory('owner1', 'branchy'))).to.be.false();
    });

    it('answers 404 for an unknown owner and 403 for a caller who is not a site administrator', async () => {
        const unknown = await create('nobody-here', { name: 'x' });
        expect(unknown.statusCode).to.equal(404);
        expect((unknown.result as { message: string }).message).to.equal('user redirect does not exist [name: nobody-here]');
        const forbidden = await create('owner1', { name: 'x' }, owner.headers);
        expect(forbidden.statusCode).to.equal(403);
        expect((forbidden.result as { message: string }).message).to.equal('user should be the site admin');
    });

    it('removes the directory and the record when git fails half-way', async () => {
        const fakeBin = temporaryDirectory('gatehouse-fake-git-');
        const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
        Fs.writeFileSync(
            Path.join(fakeBin, 'git'),
            `#!/bin/sh\nfor a in "$@"; do [ "$a" = commit-tree ] && { echo boom >&2; exit 1; }; done\nexec ${realGit} "$@"\n`,
            { mode: 0o755 },
        );
        const originalPath = process.env.PATH;
        process.env.PATH = `${fakeBin}${Path.delimiter}${originalPath ?? ''}`;
        try {
            const response = await create('owner1', { name: 'halfway', auto_init: true });
            expect(response.statusCode).to.equal(500);
        } finally {
            process.env.PATH = originalPath;
            Fs.rmSync(fakeBin, { recursive: true, force: true });
        }

        expect(Fs.existsSync(repoDirectory('owner1', 'halfway'))).to.be.false();
        expect(await recordCount('halfway')).to.equal(0);
        expect((await create('owner1', { name: 'halfway' })).statusCode).to.equal(201);
    });

    it("moves the owner's directory when the owner is renamed", async () => {
        const mover = await createTestUser(context.server, { name: 'mover' });
        expect((await create('mover', { name: 'luggage', auto_init: true })).statusCode).to.equal(201);
        await users(context.server).rename(mover.user, 'Moved');
        expect(Fs.existsSync(repoDirectory('mover', 'luggage'))).to.be.false();
        expect(git(['rev-parse', '--is-bare-repository'], repoDirectory('moved', 'luggage')).trim()).to.equal('true');
        const record = await context.database.knex('repositories').where({ owner_id: mover.user.id }).first();
        expect(record.owner_name).to.equal('Moved');
    });

    it('refuses to delete an owner of repositories without purge, and removes the directory with it', async () => {
        const leaving = await createTestUser(context.server, { name: 'leaving' });
        expect((await create('leaving', { name: 'gone' })).statusCode).to.equal(201);
        const refused = await users(context.server)
            .delete(leaving.user, admin.user, false)
            .catch((error: unknown) => error);
        expect((refused as Error).message).to.equal(`user still has ownership of repositories [uid: ${leaving.user.id}]`);

        await users(context.server).delete(leaving.user, admin.user, true);
        expect(Fs.existsSync(Path.join(context.config.repositoriesDir, 'leaving'))).to.be.false();
        expect(await context.database.knex('repositories').where({ owner_id: leaving.user.id })).to.equal([]);
    });

    it('works through the gitea-js client', async () => {
        await context.server.start();
        try {
            const api = giteaClient(context.server, admin);
            const created = await api.admin.adminCreateRepo('owner1', { name: 'via-client', auto_init: true });
            expect(created.status).to.equal(201);
            expect(swaggerErrors('adminCreateRepo', 201, created.data)).to.equal([]);
            expect(created.data.full_name).to.equal('Owner1/via-client');
        } finally {
            await context.server.stop();
        }
    });
});
