import Crypto from 'node:crypto';
import Fs from 'node:fs';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { packages } from '../../../../../plugins/git/domain/packages/package-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface ApiPackage {
    id: number;
    name: string;
    type: string;
    version: string;
    html_url: string;
    owner: { login: string };
    creator: { login: string };
}

const PUBLIC_URL = 'http://127.0.0.1:3000/';

describe('admin: packages', () => {
    let context: TestServer;
    let admin: TestUser;
    let alice: TestUser;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { name: 'pkgroot', admin: true });
        alice = await createTestUser(context.server, { name: 'Alice' });
        for (const [name, version] of [
            ['Tooling', '1.0.0'],
            ['tooling', '1.1.0'],
            ['widgets', '0.1'],
            ['widgets', '0.2'],
            ['other-tool', 'v3'],
        ] as const) {
            const url = `/api/packages/Alice/generic/${name}/${version}/${name}-${version}.tgz`;
            const response = await context.server.inject({ method: 'PUT', url, payload: `${name} ${version}`, headers: alice.headers });
            expect(response.statusCode).to.equal(201);
        }
    });

    after(async () => {
        await context.cleanup();
    });

    const list = async (query = '', headers: Record<string, string> = admin.headers) =>
        await context.server.inject({ url: `/api/v1/admin/packages${query}`, headers });

    it('lists every package version, newest first, in the spec shape', async () => {
        const response = await list();
        expect(response.statusCode).to.equal(200);
        expect(swaggerErrors('adminListPackages', 200, response.result)).to.equal([]);
        const rows = response.result as ApiPackage[];
        expect(rows.map((row) => `${row.name}@${row.version}`)).to.equal([
            'other-tool@v3',
            'widgets@0.2',
            'widgets@0.1',
            'Tooling@1.1.0',
            'Tooling@1.0.0',
        ]);
        expect(rows[0]).to.include({ type: 'generic', html_url: `${PUBLIC_URL}Alice/-/packages/generic/other-tool/v3` });
        expect(rows[0]?.owner.login).to.equal('Alice');
        expect(rows[0]?.creator.login).to.equal('Alice');
        expect(response.headers['x-total-count']).to.equal('5');
    });

    it('filters by a part of the name in any case, and by type', async () => {
        const byName = (await list('?q=TOOL')).result as ApiPackage[];
        expect(byName.map((row) => row.name)).to.equal(['other-tool', 'Tooling', 'Tooling']);
        const generic = await list('?type=generic&q=widget');
        expect((generic.result as ApiPackage[]).map((row) => row.version)).to.equal(['0.2', '0.1']);
        const npm = await list('?type=npm');
        expect(npm.result).to.equal([]);
        expect(npm.headers['x-total-count']).to.equal('0');
    });

    it('refuses an unknown type with 422', async () => {
        expect((await list('?type=bogus')).statusCode).to.equal(422);
    });

    it('pages with Link and X-Total-Count headers', async () => {
        const response = await list('?limit=2&page=2');
        expect((response.result as ApiPackage[]).map((row) => row.version)).to.equal(['0.1', '1.1.0']);
        expect(response.headers['x-total-count']).to.equal('5');
        const link = response.headers.link as string;
        expect(link).to.contain(`<${PUBLIC_URL}api/v1/admin/packages?limit=2&page=3>; rel="next"`);
        expect(link).to.contain(`<${PUBLIC_URL}api/v1/admin/packages?limit=2&page=1>; rel="first"`);
    });

    it('answers 403 to a user who is not a site admin', async () => {
        const response = await list('', alice.headers);
        expect(response.statusCode).to.equal(403);
    });

    it('answers through the gitea-js client (its generic request: it has no method for this operation)', async () => {
        await context.server.start();
        try {
            const api = giteaClient(context.server, admin);
            const response = await api.request<ApiPackage[]>({
                path: '/admin/packages',
                method: 'GET',
                query: { q: 'widgets' },
                secure: true,
                format: 'json',
            });
            expect(response.status).to.equal(200);
            expect(swaggerErrors('adminListPackages', 200, response.data)).to.equal([]);
            expect(response.data.map((row) => row.version)).to.equal(['0.2', '0.1']);
        } finally {
            await context.server.stop();
        }
    });

    describe('deleting a package owner', () => {
        /** Pia and her two packages, made by whichever of these tests runs first (the purge removes them). */
        const PIA_FILES = ['pia-a', 'pia-b'].map((name) => ({ name, content: `${name} 1.0.0, only Pia's` }));
        const havePackageOwner = async () => {
            if (await context.database.knex('users').where({ lower_name: 'pia' }).first()) return;
            const pia = await createTestUser(context.server, { name: 'Pia' });
            for (const { name, content } of PIA_FILES) {
                const url = `/api/packages/Pia/generic/${name}/1.0.0/${name}.tgz`;
                const response = await context.server.inject({ method: 'PUT', url, payload: content, headers: pia.headers });
                expect(response.statusCode).to.equal(201);
            }
        };
        const owners = async () => ((await list('?limit=50')).result as ApiPackage[]).map((row) => row.owner.login);

        it('is refused (422) without purge while the user owns packages', async () => {
            await havePackageOwner();
            const response = await context.server.inject({ method: 'DELETE', url: '/api/v1/admin/users/Pia', headers: admin.headers });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.contain('packages');
            expect(await owners()).to.include('Pia');
        });

        it('removes the packages, their rows and their blob files with purge', async () => {
            await havePackageOwner();
            const hashes = PIA_FILES.map(({ content }) => Crypto.createHash('sha256').update(content).digest('hex'));
            const stored = (await context.database.knex('package_blobs').pluck('hash_sha256')).map(String);
            expect(stored).to.include(hashes);
            const others = (await owners()).filter((owner) => owner !== 'Pia');
            const response = await context.server.inject({
                method: 'DELETE',
                url: '/api/v1/admin/users/Pia?purge=true',
                headers: admin.headers,
            });
            expect(response.statusCode).to.equal(204);
            expect(await owners()).to.equal(others);
            const left = (await context.database.knex('package_blobs').pluck('hash_sha256')).map(String);
            expect(left).to.not.include(hashes);
            expect(left).to.have.length(stored.length - hashes.length);
            for (const hash of hashes) {
                expect(Fs.existsSync(packages(context.server).blobPath(hash))).to.be.false();
            }
        });
    });
});
