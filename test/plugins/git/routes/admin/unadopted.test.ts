import { execFileSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { readSwagger } from '../../../../../lib/spec/git-loader.ts';
import { GIT_SWAGGER_FILE } from '../../../../../server.ts';
import { createTestServer, createTestUser, temporaryDirectory, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

function git(args: string[], cwd?: string): string {
    return execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV });
}

/** A bare repository made as an administrator would leave one on disk; with commits on `branch` if given. */
function bareRepository(path: string, branch?: string): void {
    git(['init', '--quiet', '--bare', '--initial-branch=main', path]);
    if (!branch) {
        return;
    }

    const work = temporaryDirectory('gatehouse-work-');
    git(['init', '--quiet', `--initial-branch=${branch}`, work]);
    Fs.writeFileSync(Path.join(work, 'file.txt'), 'hello\n');
    git(['add', 'file.txt'], work);
    git(['-c', 'user.name=Test', '-c', 'user.email=test@example.com', 'commit', '--quiet', '-m', 'first'], work);
    git(['push', '--quiet', path, branch], work);
    Fs.rmSync(work, { recursive: true, force: true });
}

/**
 * What the shared fixture puts on disk under alice, bob and ghost, listed or not; no test adopts or deletes them.
 * The tests that do make theirs under dora, so a list of every owner is read for these names alone.
 */
const FIXTURE = ['alice/one', 'alice/two', 'alice/Upper', 'alice/not-a-repo', 'bob/three', 'bob/recorded', 'ghost/haunted'];
const fixtureOnly = (names: unknown) => (names as string[]).filter((name) => FIXTURE.includes(name));

describe('admin: unadopted repositories', () => {
    let context: TestServer;
    let admin: TestUser;
    let plain: TestUser;
    let root: string;

    const request = async (method: string, url: string, headers = admin.headers) =>
        await context.server.inject({ method, url: `/api/v1/admin/unadopted${url}`, headers });
    const list = async (query = '') => {
        const response = await request('GET', query);
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('adminUnadoptedList', 200, response.result)).to.equal([]);
        return response;
    };

    before(async () => {
        context = await createTestServer();
        root = context.config.repositoriesDir;
        admin = await createTestUser(context.server, { admin: true, name: 'adoptadmin' });
        plain = await createTestUser(context.server, { name: 'plain' });
        await createTestUser(context.server, { name: 'Alice' });
        await createTestUser(context.server, { name: 'bob' });
        await createTestUser(context.server, { name: 'Dora' });
        bareRepository(Path.join(root, 'alice', 'one.git'), 'master');
        bareRepository(Path.join(root, 'alice', 'two.git'));
        bareRepository(Path.join(root, 'alice', 'Upper.git'));
        Fs.mkdirSync(Path.join(root, 'alice', 'not-a-repo'), { recursive: true });
        bareRepository(Path.join(root, 'bob', 'three.git'), 'feature');
        bareRepository(Path.join(root, 'ghost', 'haunted.git'));
        const recorded = await context.server.inject({
            method: 'POST',
            url: '/api/v1/admin/users/bob/repos',
            headers: admin.headers,
            payload: { name: 'recorded' },
        });
        expect(recorded.statusCode).to.equal(201);
    });

    after(async () => {
        await context.cleanup();
    });

    /** dora/kept, adopted: made on disk and adopted when no earlier test has. */
    const haveAdopted = async () => {
        const directory = Path.join(root, 'dora', 'kept.git');
        if (!Fs.existsSync(directory)) {
            bareRepository(directory, 'main');
            expect((await request('POST', '/dora/kept')).statusCode).to.equal(204);
        }

        return '/dora/kept';
    };

    it('lists, in lexical order, directories of known owners that have no record, without a Link header', async () => {
        const response = await list();
        const names = response.result as string[];
        expect(fixtureOnly(names)).to.equal(['alice/one', 'alice/two', 'bob/three']);
        expect(names).to.equal([...names].sort());
        expect(response.headers['x-total-count']).to.equal(String(names.length));
        expect(response.headers.link).to.not.exist();
    });

    it('pages the list', async () => {
        const all = (await list()).result as string[];
        expect(all.length).to.be.at.least(3);
        const response = await list('?limit=1&page=2');
        expect(response.result).to.equal([all[1]]);
        expect(response.headers['x-total-count']).to.equal(String(all.length));
        expect((await list(`?limit=2&page=${Math.ceil(all.length / 2) + 1}`)).result).to.equal([]);
    });

    it('filters with globs on owner and repository, from `query` or `pattern`', async () => {
        const cases: Array<[string, string[]]> = [
            ['?query=alice', ['alice/one', 'alice/two']],
            ['?pattern=alice/t*', ['alice/two']],
            ['?query=%7Balice,bob%7D/%3F%3F%3F', ['alice/one', 'alice/two']],
            ['?query=b*/th[a-z]ee', ['bob/three']],
            ['?query=carol', []],
        ];
        for (const [query, expected] of cases) {
            expect((await list(query)).result, query).to.equal(expected);
        }

        // Every owner's: dora's repositories, which other tests make, aside.
        const anyOwner = (await list('?query=*/[!o]*')).result as string[];
        expect(fixtureOnly(anyOwner)).to.equal(['alice/two', 'bob/three']);
        expect(anyOwner.filter((name) => name.split('/')[1]?.startsWith('o'))).to.equal([]);

        expect((await request('GET', '?query=%7Bunclosed')).statusCode).to.equal(422);
    });

    it('reads the first of repeated `query` or `pattern` values, as Gitea reads a form value, `query` first', async () => {
        const cases: Array<[string, string[]]> = [
            ['?query=bob&query=alice', ['bob/three']],
            ['?pattern=bob&pattern=alice', ['bob/three']],
            ['?query=bob&pattern=alice', ['bob/three']],
            ['?query=&pattern=bob', ['bob/three']],
        ];
        for (const [query, expected] of cases) {
            expect((await list(query)).result, query).to.equal(expected);
        }

        const document = readSwagger(GIT_SWAGGER_FILE);
        const names = document.paths['/admin/unadopted']?.get?.parameters?.map((parameter) => parameter.name);
        expect(names).to.include(['query', 'pattern']);
    });

    it('adopts a repository as private, taking the default branch from disk', async () => {
        bareRepository(Path.join(root, 'dora', 'first.git'), 'master');
        expect((await list('?query=dora/first')).result).to.equal(['dora/first']);
        const response = await request('POST', '/dora/first');
        expect(response.statusCode).to.equal(204);
        const record = await context.database.knex('repositories').where({ lower_name: 'first' }).first();
        expect(record).to.include({ name: 'first', owner_name: 'Dora', default_branch: 'master' });
        expect(Boolean(record.is_private)).to.be.true();
        expect(Boolean(record.is_empty)).to.be.false();
        expect(Number(record.size)).to.be.above(0);
        expect(git(['symbolic-ref', 'HEAD'], Path.join(root, 'dora', 'first.git')).trim()).to.equal('refs/heads/master');
        expect((await list('?query=dora/first')).result).to.equal([]);
    });

    it('adopts an empty repository as empty', async () => {
        bareRepository(Path.join(root, 'dora', 'empty.git'));
        expect((await request('POST', '/dora/empty')).statusCode).to.equal(204);
        const record = await context.database.knex('repositories').where({ lower_name: 'empty' }).first();
        expect(record.default_branch).to.equal('main');
        expect(Boolean(record.is_empty)).to.be.true();
    });

    it('answers 404 to adopt an unknown owner, a recorded repository or a missing directory', async () => {
        for (const path of ['/ghost/haunted', await haveAdopted(), '/bob/recorded', '/alice/missing']) {
            expect((await request('POST', path)).statusCode, path).to.equal(404);
        }
    });

    it('deletes unrecorded files, and never those of a recorded repository', async () => {
        bareRepository(Path.join(root, 'dora', 'doomed.git'), 'main');
        expect((await request('DELETE', '/dora/doomed')).statusCode).to.equal(204);
        expect(Fs.existsSync(Path.join(root, 'dora', 'doomed.git'))).to.be.false();
        for (const path of ['/bob/recorded', await haveAdopted(), '/dora/doomed', '/ghost/haunted']) {
            expect((await request('DELETE', path)).statusCode, path).to.equal(404);
        }

        expect(Fs.existsSync(Path.join(root, 'bob', 'recorded.git'))).to.be.true();
        expect(Fs.existsSync(Path.join(root, 'dora', 'kept.git'))).to.be.true();
        expect(Fs.existsSync(Path.join(root, 'ghost', 'haunted.git'))).to.be.true();
    });

    it('refuses path traversal in owner or repository names and touches nothing outside the root', async () => {
        const outside = Path.join(Path.dirname(root), 'outside.git');
        bareRepository(outside);
        bareRepository(Path.join(root, 'dora', 'victim.git'));
        // Dot segments are resolved by URL parsing before routing; the rest reach the service and are refused there.
        const attempts: Array<[string, number]> = [
            ['/dora/..%2F..%2Foutside', 422],
            ['/dora/..%5C..%5Coutside', 422],
            ['/dora/victim%00', 422],
            ['/dora/%2Ftmp%2Fvictim', 422],
            // The URL's dot segments are resolved first: what is left, `/admin/unadopted/`, is the list (GET only) to
            // Gitea's router, which drops the trailing slash.
            ['/dora/..', 405],
            ['/dora/%2E%2E', 405],
            ['/..%2Foutside/x', 404],
            ['/..%2Fdora/victim', 404],
            ['/dora%2F..%2Fdora/victim', 404],
        ];
        for (const [path, status] of attempts) {
            for (const method of ['POST', 'DELETE']) {
                const response = await request(method, path);
                expect(response.statusCode, `${method} ${path}`).to.equal(status);
            }
        }

        expect(Fs.existsSync(outside)).to.be.true();
        expect(Fs.existsSync(Path.join(root, 'dora', 'victim.git'))).to.be.true();
        expect(await context.database.knex('repositories').where({ lower_name: 'victim' })).to.equal([]);
        Fs.rmSync(outside, { recursive: true, force: true });
    });

    it('answers 403 to a caller who is not a site administrator', async () => {
        for (const [method, path] of [
            ['GET', ''],
            ['POST', '/alice/victim'],
            ['DELETE', '/alice/victim'],
        ] as const) {
            const response = await request(method, path, plain.headers);
            expect(response.statusCode).to.equal(403);
            expect((response.result as { message: string }).message).to.equal('user should be the site admin');
        }
    });

    it('works through the gitea-js client', async () => {
        bareRepository(Path.join(root, 'dora', 'client-adopt.git'), 'main');
        bareRepository(Path.join(root, 'dora', 'client-delete.git'));
        await context.server.start();
        try {
            const api = giteaClient(context.server, admin);
            const listed = await api.admin.adminUnadoptedList({ pattern: 'dora/client-*' });
            expect(listed.status).to.equal(200);
            expect(listed.data).to.equal(['dora/client-adopt', 'dora/client-delete']);
            expect((await api.admin.adminAdoptRepository('dora', 'client-adopt')).status).to.equal(204);
            expect((await api.admin.adminDeleteUnadoptedRepository('dora', 'client-delete')).status).to.equal(204);
            expect(Fs.existsSync(Path.join(root, 'dora', 'client-delete.git'))).to.be.false();
        } finally {
            await context.server.stop();
        }
    });
});
