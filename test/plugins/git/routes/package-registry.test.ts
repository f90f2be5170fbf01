import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { isValidFilename, isValidGenericName } from '../../../../plugins/git/domain/packages/package-names.ts';
import { packages } from '../../../../plugins/git/domain/packages/package-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const sha256 = (content: Buffer | string) => Crypto.createHash('sha256').update(content).digest('hex');

/** Every blob file under the packages directory (its temporary folder left out). */
function blobFiles(packagesDir: string): string[] {
    if (!Fs.existsSync(packagesDir)) {
        return [];
    }

    return Fs.readdirSync(packagesDir, { recursive: true, encoding: 'utf8' })
        .filter((entry) => !entry.startsWith('.tmp'))
        .filter((entry) => Fs.statSync(Path.join(packagesDir, entry)).isFile())
        .map((entry) => Path.basename(entry))
        .sort();
}

describe('packages: the generic registry', () => {
    let context: TestServer;
    let owner: TestUser;
    let stranger: TestUser;
    let admin: TestUser;

    before(async () => {
        context = await createTestServer();
        owner = await createTestUser(context.server, { name: 'pkgowner', password: 'owner-password-1' });
        stranger = await createTestUser(context.server, { name: 'pkgstranger' });
        admin = await createTestUser(context.server, { name: 'pkgadmin', admin: true });
    });

    after(async () => {
        await context.cleanup();
    });

    const fileUrl = (name: string, version: string, filename: string, ownerName = 'pkgowner') =>
        `/api/packages/${ownerName}/generic/${name}/${version}/${filename}`;

    const upload = async (url: string, content: Buffer | string, headers: Record<string, string> = owner.headers) =>
        await context.server.inject({
            method: 'PUT',
            url,
            payload: content,
            headers: { ...headers, 'content-type': 'application/octet-stream' },
        });

    describe('upload and download', () => {
        it('stores a file (201) and serves the same bytes back (200), hashed as Gitea hashes', async () => {
            const content = Crypto.randomBytes(200_000);
            const uploaded = await upload(fileUrl('round-trip', '1.0.0', 'data.bin'), content);
            expect(uploaded.statusCode).to.equal(201);

            const downloaded = await context.server.inject({ url: fileUrl('round-trip', '1.0.0', 'data.bin') });
            expect(downloaded.statusCode).to.equal(200);
            expect(downloaded.headers['content-type']).to.equal('application/octet-stream');
            expect(downloaded.rawPayload.equals(content)).to.be.true();

            const blob = await context.database
                .knex('package_blobs')
                .where({ hash_sha256: sha256(content) })
                .first();
            expect(Number(blob.size)).to.equal(content.length);
            expect(blob.hash_md5).to.equal(Crypto.createHash('md5').update(content).digest('hex'));
            expect(blob.hash_sha1).to.equal(Crypto.createHash('sha1').update(content).digest('hex'));
            expect(blob.hash_sha512).to.equal(Crypto.createHash('sha512').update(content).digest('hex'));
            const onDisk = packages(context.server).blobPath(sha256(content));
            expect(onDisk).to.equal(
                Path.join(context.config.packagesDir, sha256(content).slice(0, 2), sha256(content).slice(2, 4), sha256(content)),
            );
            expect(Fs.readFileSync(onDisk).equals(content)).to.be.true();
        });

        it('accepts Basic credentials with the password', async () => {
            const basic = `Basic ${Buffer.from('pkgowner:owner-password-1').toString('base64')}`;
            const response = await upload(fileUrl('basic', '1', 'a.txt'), 'basic', { authorization: basic });
            expect(response.statusCode).to.equal(201);
        });

        it('keeps one blob on disk for the same content in several versions', async () => {
            const content = 'the same content, twice';
            expect((await upload(fileUrl('dedup', '1.0', 'same.txt'), content)).statusCode).to.equal(201);
            expect((await upload(fileUrl('dedup', '2.0', 'same.txt'), content)).statusCode).to.equal(201);
            const blobs = await context.database.knex('package_blobs').where({ hash_sha256: sha256(content) });
            expect(blobs).to.have.length(1);
            expect(blobFiles(context.config.packagesDir).filter((name) => name === sha256(content))).to.have.length(1);
        });

        it('stores identical content uploaded at once into several versions as one blob', async () => {
            const content = Crypto.randomBytes(50_000);
            const versions = ['1', '2', '3', '4', '5'];
            const responses = await Promise.all(
                versions.map(async (version) => await upload(fileUrl('parallel', version, 'p.bin'), content)),
            );
            expect(responses.map((response) => response.statusCode)).to.equal([201, 201, 201, 201, 201]);
            expect(await context.database.knex('package_blobs').where({ hash_sha256: sha256(content) })).to.have.length(1);
            expect(blobFiles(context.config.packagesDir).filter((name) => name === sha256(content))).to.have.length(1);
        });

        it('refuses a file name already in the version (409), in any case', async () => {
            expect((await upload(fileUrl('dup', '1', 'file.txt'), 'one')).statusCode).to.equal(201);
            const again = await upload(fileUrl('dup', '1', 'FILE.txt'), 'two');
            expect(again.statusCode).to.equal(409);
            expect(JSON.stringify(again.result)).to.contain('package file already exists');
        });

        it('answers 404 for an unknown owner, package, version or file', async () => {
            await upload(fileUrl('known', '1', 'known.txt'), 'known');
            for (const url of [
                fileUrl('known', '1', 'known.txt', 'nobody-here'),
                fileUrl('unknown', '1', 'known.txt'),
                fileUrl('known', '2', 'known.txt'),
                fileUrl('known', '1', 'other.txt'),
            ]) {
                expect((await context.server.inject({ url })).statusCode).to.equal(404);
            }
        });
    });

    describe('names', () => {
        it('refuses bad package names, versions (control characters included) and file names with 400', async () => {
            for (const url of [
                fileUrl('bad%20name', '1', 'a.txt'),
                fileUrl('-', '1', 'a.txt'),
                fileUrl('_', '1', 'a.txt'),
                fileUrl('good', '%201.0', 'a.txt'),
                fileUrl('good', '1.0%0A2', 'a.txt'),
                fileUrl('good', '1.0%0D2', 'a.txt'),
                fileUrl('good', '1.0%002', 'a.txt'),
                fileUrl('good', '1.0%092', 'a.txt'),
                fileUrl('good', '1.0%7F', 'a.txt'),
                fileUrl('good', '1.0%C2%85', 'a.txt'),
                fileUrl('good', '1'.repeat(192), 'a.txt'),
                fileUrl('good', '1', 'dir%2Fa.txt'),
                fileUrl('good', '1', '%20lead.txt'),
                fileUrl('good', '1', 'back%5Cslash.txt'),
            ]) {
                const response = await upload(url, 'x');
                expect(response.statusCode, url).to.equal(400);
            }

            expect(await context.database.knex('packages').where({ lower_name: 'good' })).to.have.length(0);
        });

        it('refuses the names a URL cannot carry as such (dot segments)', () => {
            expect(isValidGenericName('..')).to.be.false();
            expect(isValidFilename('..')).to.be.false();
            expect(isValidFilename('.')).to.be.false();
        });

        it("accepts Gitea's characters in names and file names", async () => {
            const response = await upload(fileUrl('My_Pkg+1.x', '1.0.0-rc.1+build', 'file (1) [x].tar.gz'), 'ok');
            expect(response.statusCode).to.equal(201);
        });
    });

    describe('access', () => {
        it('answers 401 to an upload or a delete without credentials', async () => {
            const uploaded = await context.server.inject({ method: 'PUT', url: fileUrl('anon', '1', 'a.txt'), payload: 'x' });
            expect(uploaded.statusCode).to.equal(401);
            expect(uploaded.headers['www-authenticate']).to.contain('Basic');
            const deleted = await context.server.inject({ method: 'DELETE', url: fileUrl('anon', '1', 'a.txt') });
            expect(deleted.statusCode).to.equal(401);
        });

        it('answers 401 to bad credentials', async () => {
            const response = await upload(fileUrl('bad', '1', 'a.txt'), 'x', { authorization: 'token not-a-token' });
            expect(response.statusCode).to.equal(401);
        });

        it("answers 403 to another user's upload or delete, and lets a site admin do both", async () => {
            expect((await upload(fileUrl('guarded', '1', 'a.txt'), 'x', stranger.headers)).statusCode).to.equal(403);
            expect((await upload(fileUrl('guarded', '1', 'a.txt'), 'x', admin.headers)).statusCode).to.equal(201);
            const byStranger = await context.server.inject({
                method: 'DELETE',
                url: fileUrl('guarded', '1', 'a.txt'),
                headers: stranger.headers,
            });
            expect(byStranger.statusCode).to.equal(403);
            const byAdmin = await context.server.inject({
                method: 'DELETE',
                url: fileUrl('guarded', '1', 'a.txt'),
                headers: admin.headers,
            });
            expect(byAdmin.statusCode).to.equal(204);
        });

        it("answers 403 to a token without the package scope's write level", async () => {
            const reader = await createTestUser(context.server, { name: 'pkgreader', scopes: ['read:package'] });
            const response = await upload(fileUrl('scoped', '1', 'a.txt', 'pkgreader'), 'x', reader.headers);
            expect(response.statusCode).to.equal(403);
        });

        it("serves a private owner's files only to the owner and admins", async () => {
            const hidden = await createTestUser(context.server, { name: 'pkghidden' });
            await context.database.knex('users').where({ id: hidden.user.id }).update({ visibility: 2 });
            const url = fileUrl('secret', '1', 's.txt', 'pkghidden');
            expect((await upload(url, 'secret', hidden.headers)).statusCode).to.equal(201);
            expect((await context.server.inject({ url })).statusCode).to.equal(401);
            expect((await context.server.inject({ url, headers: stranger.headers })).statusCode).to.equal(403);
            expect((await context.server.inject({ url, headers: hidden.headers })).payload).to.equal('secret');
            expect((await context.server.inject({ url, headers: admin.headers })).statusCode).to.equal(200);
        });
    });

    describe('delete', () => {
        it('deletes a file (204), and the version and package with their last file', async () => {
            await upload(fileUrl('shrink', '1', 'a.txt'), 'shrink a');
            await upload(fileUrl('shrink', '1', 'b.txt'), 'shrink b');
            const first = await context.server.inject({ method: 'DELETE', url: fileUrl('shrink', '1', 'a.txt'), headers: owner.headers });
            expect(first.statusCode).to.equal(204);
            expect(
                await context.database
                    .knex('package_versions')
                    .where({ lower_version: '1' })
                    .join('packages', 'packages.id', 'package_versions.package_id')
                    .where('packages.lower_name', 'shrink'),
            ).to.have.length(1);
            await context.server.inject({ method: 'DELETE', url: fileUrl('shrink', '1', 'b.txt'), headers: owner.headers });
            expect(await context.database.knex('packages').where({ lower_name: 'shrink' })).to.have.length(0);
            const again = await context.server.inject({ method: 'DELETE', url: fileUrl('shrink', '1', 'b.txt'), headers: owner.headers });
            expect(again.statusCode).to.equal(404);
        });

        it('removes a blob from disk once no file uses it, and keeps a shared one', async () => {
            const shared = 'shared between versions';
            const alone = 'used by one file only';
            await upload(fileUrl('blobs', '1', 'shared.txt'), shared);
            await upload(fileUrl('blobs', '2', 'shared.txt'), shared);
            await upload(fileUrl('blobs', '2', 'alone.txt'), alone);
            const service = packages(context.server);
            const versionUrl = '/api/packages/pkgowner/generic/blobs/2';
            const deleted = await context.server.inject({ method: 'DELETE', url: versionUrl, headers: owner.headers });
            expect(deleted.statusCode).to.equal(204);
            expect(Fs.existsSync(service.blobPath(sha256(alone)))).to.be.false();
            expect(Fs.existsSync(service.blobPath(sha256(shared)))).to.be.true();
            expect(await context.database.knex('package_blobs').where({ hash_sha256: sha256(alone) })).to.have.length(0);

            await context.server.inject({ method: 'DELETE', url: fileUrl('blobs', '1', 'shared.txt'), headers: owner.headers });
            expect(Fs.existsSync(service.blobPath(sha256(shared)))).to.be.false();
            expect(await context.database.knex('package_blobs').where({ hash_sha256: sha256(shared) })).to.have.length(0);
        });

        it('answers 404 to deleting an unknown version', async () => {
            const response = await context.server.inject({
                method: 'DELETE',
                url: '/api/packages/pkgowner/generic/none/1',
                headers: owner.headers,
            });
            expect(response.statusCode).to.equal(404);
        });

        it('leaves no temporary files behind', () => {
            const temporary = Path.join(context.config.packagesDir, '.tmp');
            expect(Fs.existsSync(temporary) ? Fs.readdirSync(temporary) : []).to.equal([]);
        });
    });
});
