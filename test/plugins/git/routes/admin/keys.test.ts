import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { ApiPublicKey } from '../../../../../plugins/git/routes/admin/keys.ts';
import sshpk from 'sshpk';

import { users } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { createTestServer, createTestUser, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';
import { giteaClient } from '../../../../helpers/git-client.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SWAGGER_URL = 'http://127.0.0.1:3000/api/swagger';
const ZERO_TIME = '0001-01-01T00:00:00Z';

type KeyKind = 'ed25519' | 'rsa' | 'rsa-2048' | 'ecdsa';

function generatePublicKey(kind: KeyKind): Crypto.KeyObject {
    switch (kind) {
        case 'ed25519':
            return Crypto.generateKeyPairSync('ed25519').publicKey;
        case 'rsa':
            return Crypto.generateKeyPairSync('rsa', { modulusLength: 3072 }).publicKey;
        case 'rsa-2048':
            return Crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
        case 'ecdsa':
            return Crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    }
}

/** A fresh key as an authorized_keys line (`type base64 [comment]`). */
function openSshKey(kind: KeyKind, comment = ''): { line: string; fingerprint: string } {
    const key = sshpk.parseKey(generatePublicKey(kind).export({ type: 'spki', format: 'pem' }), 'pem');
    key.comment = comment;
    return { line: key.toString('ssh'), fingerprint: key.fingerprint('sha256').toString() };
}

type ApiKey = ApiPublicKey;

describe('admin: SSH public keys', () => {
    let context: TestServer;
    let admin: TestUser;
    let alice: TestUser;

    before(async () => {
        context = await createTestServer();
        admin = await createTestUser(context.server, { admin: true });
        alice = await createTestUser(context.server, { name: 'alice' });
        await createTestUser(context.server, { name: 'bob' });
    });

    after(async () => {
        await context.cleanup();
    });

    const addKey = (username: string, payload: unknown, headers = admin.headers) =>
        context.server.inject({ method: 'POST', url: `/api/v1/admin/users/${username}/keys`, headers, payload: payload as object });

    const deleteKey = (username: string, id: number, headers = admin.headers) =>
        context.server.inject({ method: 'DELETE', url: `/api/v1/admin/users/${username}/keys/${id}`, headers });

    const keyCount = async (ownerId: number) =>
        Number((await context.server.app.knex('public_keys').where({ owner_id: ownerId }).count({ count: '*' }).first())?.count);

    describe('POST /admin/users/{username}/keys', () => {
        it('adds an ed25519 key and answers 201 with a PublicKey', async () => {
            const { line, fingerprint } = openSshKey('ed25519', 'alice@laptop');
            const response = await addKey('alice', { title: 'laptop', key: line });
            expect(response.statusCode).to.equal(201);
            expect(swaggerErrors('adminCreatePublicKey', 201, response.result)).to.equal([]);
            const body = response.result as ApiKey;
            expect(body.key).to.equal(line);
            expect(body.key).to.startWith('ssh-ed25519 AAAA');
            expect(body.key).to.endWith(' alice@laptop');
            expect(body.title).to.equal('laptop');
            expect(body.fingerprint).to.equal(fingerprint);
            expect(body.fingerprint).to.match(/^SHA256:[A-Za-z0-9+/]{43}$/);
            expect(body.url).to.equal(`http://127.0.0.1:3000/api/v1/user/keys/${body.id}`);
            expect(body.key_type).to.equal('user');
            expect(body.read_only).to.be.false();
            expect(body.last_used_at).to.equal(ZERO_TIME);
            expect(Date.parse(body.created_at)).to.be.about(Date.now(), 5000);
            expect(body.user.login).to.equal('alice');
            expect(body.user.email).to.equal('alice@example.com');
        });

        it('adds RSA (3072 bits) and ECDSA keys, named by their SSH algorithm', async () => {
            const rsa = await addKey('alice', { title: 'rsa', key: openSshKey('rsa').line });
            expect(rsa.statusCode).to.equal(201);
            expect((rsa.result as ApiKey).key).to.match(/^ssh-rsa AAAA[A-Za-z0-9+/=]+$/);
            const ecdsa = await addKey('alice', { title: 'ecdsa', key: openSshKey('ecdsa').line });
            expect(ecdsa.statusCode).to.equal(201);
            expect(swaggerErrors('adminCreatePublicKey', 201, ecdsa.result)).to.equal([]);
            expect((ecdsa.result as ApiKey).key).to.startWith('ecdsa-sha2-nistp256 AAAA');
        });

        it('normalises a key wrapped over lines, surrounded by blanks, or without its type', async () => {
            const wrapped = openSshKey('ed25519', 'wrapped');
            const [type, base64] = wrapped.line.split(' ') as [string, string];
            const response = await addKey('bob', {
                title: 'wrapped',
                key: `  ${type} ${base64.slice(0, 30)}\n${base64.slice(30)} wrapped\n`,
            });
            expect(response.statusCode).to.equal(201);
            expect((response.result as ApiKey).key).to.equal(wrapped.line);

            const bare = openSshKey('ed25519');
            const typeless = await addKey('bob', { title: 'typeless', key: bare.line.split(' ')[1] });
            expect(typeless.statusCode).to.equal(201);
            expect((typeless.result as ApiKey).key).to.equal(bare.line);
        });

        it('reads the SSH2 (RFC 4716) format that PuTTY exports', async () => {
            const { line, fingerprint } = openSshKey('ed25519');
            const base64 = line.split(' ')[1] ?? '';
            const ssh2 = [
                '---- BEGIN SSH2 PUBLIC KEY ----',
                'Comment: "a very long comment \\',
                'that continues"',
                base64.slice(0, 40),
                base64.slice(40),
                '---- END SSH2 PUBLIC KEY ----',
            ].join('\r\n');
            const response = await addKey('bob', { title: 'putty', key: ssh2 });
            expect(response.statusCode).to.equal(201);
            expect((response.result as ApiKey).key).to.equal(line);
            expect((response.result as ApiKey).fingerprint).to.equal(fingerprint);
        });

        it('ignores read_only for a user key, as Gitea does (it applies to deploy keys)', async () => {
            const response = await addKey('bob', { title: 'read-only?', key: openSshKey('ed25519').line, read_only: true });
            expect(response.statusCode).to.equal(201);
            expect((response.result as ApiKey).read_only).to.be.false();
        });

        it('refuses text that is no public key with 422', async () => {
            const privateKey = Crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' });
            for (const key of ['not a key', 'ssh-ed25519 AAAA%%%%', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5', String(privateKey)]) {
                const response = await addKey('alice', { title: `bad ${key.length}`, key });
                expect(response.statusCode, key).to.equal(422);
                expect(response.result).to.equal({ message: 'Invalid key content: invalid ssh public key', url: SWAGGER_URL });
            }
        });

        it('refuses a key whose declared type does not match its content', async () => {
            const base64 = openSshKey('ed25519').line.split(' ')[1] ?? '';
            const response = await addKey('alice', { title: 'mismatch', key: `ssh-rsa ${base64}` });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.equal(
                'Invalid key content: key type and content does not match: ssh-rsa - ssh-ed25519',
            );
        });

        it("refuses an RSA key below Gitea's minimum of 3071 bits", async () => {
            const response = await addKey('alice', { title: 'short', key: openSshKey('rsa-2048').line });
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.equal(
                'Invalid key content: key length is not enough: got 2048, needs 3071',
            );
        });

        it('refuses a key already added to any account, whatever its comment', async () => {
            const { line } = openSshKey('ed25519', 'first');
            expect((await addKey('alice', { title: 'shared', key: line })).statusCode).to.equal(201);
            for (const [username, key] of [
                ['alice', line],
                ['bob', line.replace(' first', ' second')],
            ] as const) {
                const response = await addKey(username, { title: 'again', key });
                expect(response.statusCode).to.equal(422);
                expect(response.result).to.equal({ message: 'Key content has been used as non-deploy key', url: SWAGGER_URL });
            }
        });

        it("refuses a title the user already uses, but not another user's title", async () => {
            expect((await addKey('alice', { title: 'desktop', key: openSshKey('ed25519').line })).statusCode).to.equal(201);
            const again = await addKey('alice', { title: 'desktop', key: openSshKey('ed25519').line });
            expect(again.statusCode).to.equal(422);
            expect(again.result).to.equal({ message: 'Key title has been used', url: SWAGGER_URL });
            expect((await addKey('bob', { title: 'desktop', key: openSshKey('ed25519').line })).statusCode).to.equal(201);
        });

        it('refuses a missing or empty title or key with 422 naming the field', async () => {
            const line = openSshKey('ed25519').line;
            const cases: Array<[object, string]> = [
                [{ title: '', key: line }, '[Title]: Required'],
                [{ title: 'x', key: '' }, '[Key]: Required'],
                [{ title: 'x' }, '[Key]: Required'],
                [{ key: line }, '[Title]: Required'],
            ];
            for (const [payload, message] of cases) {
                const response = await addKey('alice', payload);
                expect(response.statusCode).to.equal(422);
                expect((response.result as { message: string }).message).to.equal(message);
            }
        });

        it('answers 404 for an unknown user', async () => {
            const response = await addKey('nobody', { title: 'x', key: openSshKey('ed25519').line });
            expect(response.statusCode).to.equal(404);
            expect(response.result).to.equal({ message: 'user redirect does not exist [name: nobody]', url: SWAGGER_URL });
        });

        it('answers 403 to a caller who is not a site administrator, or whose token lacks write:admin', async () => {
            const notAdmin = await addKey('alice', { title: 'x', key: openSshKey('ed25519').line }, alice.headers);
            expect(notAdmin.statusCode).to.equal(403);
            expect(notAdmin.result).to.equal({ message: 'user should be the site admin', url: SWAGGER_URL });
            const readOnly = await createTestUser(context.server, { admin: true, scopes: ['read:admin'] });
            const scoped = await addKey('alice', { title: 'x', key: openSshKey('ed25519').line }, readOnly.headers);
            expect(scoped.statusCode).to.equal(403);
            expect((scoped.result as { message: string }).message).to.startWith('token does not have at least one of required scope(s)');
        });
    });

    describe('DELETE /admin/users/{username}/keys/{id}', () => {
        const addedKey = async (username: string) =>
            (await addKey(username, { title: `k${Crypto.randomUUID()}`, key: openSshKey('ed25519').line })).result as ApiKey;

        it("deletes the user's key with 204, then answers 404", async () => {
            const key = await addedKey('alice');
            const response = await deleteKey('alice', key.id);
            expect(response.statusCode).to.equal(204);
            expect(response.payload).to.equal('');
            const again = await deleteKey('alice', key.id);
            expect(again.statusCode).to.equal(404);
            expect(again.result).to.equal({ message: 'not found', url: SWAGGER_URL });
        });

        it('answers 404 for a key id that never existed, or an unknown user', async () => {
            expect((await deleteKey('alice', 999999)).statusCode).to.equal(404);
            const key = await addedKey('alice');
            const unknownUser = await deleteKey('nobody', key.id);
            expect(unknownUser.statusCode).to.equal(404);
            expect((unknownUser.result as { message: string }).message).to.equal('user redirect does not exist [name: nobody]');
        });

        it("refuses with 403 to delete another user's key through a user who is not an administrator", async () => {
            const key = await addedKey('alice');
            const response = await deleteKey('bob', key.id);
            expect(response.statusCode).to.equal(403);
            expect(response.result).to.equal({ message: 'You do not have access to this key', url: SWAGGER_URL });
            expect((await context.server.app.knex('public_keys').where({ id: key.id }).first()) !== undefined).to.be.true();
        });

        it("lets a path user who is an administrator delete anyone's key, as Gitea does", async () => {
            const key = await addedKey('bob');
            const response = await deleteKey(admin.user.name, key.id);
            expect(response.statusCode).to.equal(204);
            expect(await context.server.app.knex('public_keys').where({ id: key.id }).first()).to.not.exist();
        });

        it('answers 403 to a caller who is not a site administrator', async () => {
            const key = await addedKey('alice');
            const response = await deleteKey('alice', key.id, alice.headers);
            expect(response.statusCode).to.equal(403);
            expect(response.result).to.equal({ message: 'user should be the site admin', url: SWAGGER_URL });
        });

        it('refuses an id that is not an integer with 422', async () => {
            const response = await deleteKey('alice', 'abc' as unknown as number);
            expect(response.statusCode).to.equal(422);
            expect((response.result as { message: string }).message).to.startWith('[id]');
        });
    });

    it("removes a user's keys with the user", async () => {
        const carol = await createTestUser(context.server, { name: 'carol' });
        expect((await addKey('carol', { title: 'c', key: openSshKey('ed25519').line })).statusCode).to.equal(201);
        expect(await keyCount(carol.user.id)).to.equal(1);
        await users(context.server).delete(carol.user, admin.user, false);
        expect(await keyCount(carol.user.id)).to.equal(0);
    });

    it('works through the gitea-js client', async () => {
        await context.server.start();
        try {
            const api = giteaClient(context.server, admin);
            const created = await api.admin.adminCreatePublicKey('bob', { title: 'via gitea-js', key: openSshKey('ed25519').line });
            expect(created.status).to.equal(201);
            expect(swaggerErrors('adminCreatePublicKey', 201, created.data)).to.equal([]);
            expect(created.data.user?.login).to.equal('bob');
            const deleted = await api.admin.adminDeleteUserPublicKey('bob', created.data.id ?? 0);
            expect(deleted.status).to.equal(204);
            const failure = await api.admin.adminDeleteUserPublicKey('bob', created.data.id ?? 0).catch((error: unknown) => error);
            expect((failure as Response).status).to.equal(404);
        } finally {
            await context.server.stop();
        }
    });
});
