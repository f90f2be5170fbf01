import { type ChildProcess, spawn } from 'node:child_process';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { giteaApi } from 'gitea-js';

import { organizations } from '../../../../../plugins/git/domain/orgs/org-service.ts';
import { secrets } from '../../../../../plugins/git/domain/secrets/secret-service.ts';
import type { UserRow } from '../../../../../plugins/git/domain/identity/user-service.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import { createTestServer, createTestUser, freePort, type TestServer, type TestUser } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { swaggerErrors } from '../../../../helpers/swagger.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SECRET_VALUE = 'hunter2-Sup3r-S3cret-Value-0f-the-acme-0rg';

interface ApiSecret {
    name: string;
    description: string;
    created_at: string;
}

/** Gatehouse as `npm start` runs it, on the test's database, with every log line kept. */
async function startLoggingServer(
    environment: Record<string, string>,
): Promise<{ url: string; output: () => string; stop(): Promise<void> }> {
    const port = await freePort();
    const chunks: Buffer[] = [];
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', Path.join(ROOT_DIR, 'server.ts')], {
        cwd: ROOT_DIR,
        env: { PATH: process.env.PATH ?? '', ...environment, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'trace', SERVICES: 'git' },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => chunks.push(chunk));
    const url = `http://127.0.0.1:${port}`;
    const healthy = () =>
        fetch(`${url}/api/health`).then(
            (response) => response.ok,
            () => false,
        );
    await waitUntil(`the server on port ${port} answers /api/health`, healthy, { timeoutMs: 30_000, intervalMs: 100 }).catch(
        (error: Error) => {
            child.kill('SIGKILL');
            throw new Error(`${error.message}; its output:\n${Buffer.concat(chunks).toString('utf8')}`);
        },
    );

    return {
        url,
        output: () => Buffer.concat(chunks).toString('utf8'),
        async stop() {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            await exited;
        },
    };
}

describe('organization: actions secrets', () => {
    let context: TestServer;
    let owner: TestUser;
    let member: TestUser;

    before(async () => {
        context = await createTestServer();
        owner = await createTestUser(context.server, { name: 'olga' });
        member = await createTestUser(context.server, { name: 'mia' });
    });

    after(async () => {
        await context.cleanup();
    });

    /** Every answer of every test is held to never showing a secret's value. */
    const request = async (method: string, url: string, payload?: object, headers: Record<string, string> = owner.headers) => {
        const response = await context.server.inject({ method, url: `/api/v1${url}`, payload, headers });
        expect(response.payload).to.not.contain(SECRET_VALUE);
        expect(JSON.stringify(response.headers)).to.not.contain(SECRET_VALUE);
        return response;
    };

    /** An organisation of olga's, with mia a member who is not an owner: each test has its own, so its secrets are its own. */
    const makeOrg = async (username: string): Promise<UserRow> => {
        const org = await organizations(context.server).create(owner.user, { username }, owner.user);
        await context.database.knex('org_users').insert({ org_id: org.id, uid: member.user.id, is_public: false });
        return org;
    };

    const putSecret = async (orgName: string, name: string, payload: object) => {
        const response = await request('PUT', `/orgs/${orgName}/actions/secrets/${name}`, payload);
        expect(response.statusCode).to.equal(201);
    };

    it('creates a secret (201), then updates it (204), names being case-insensitive and stored upper-cased', async () => {
        const org = await makeOrg('makers');
        const created = await request('PUT', '/orgs/makers/actions/secrets/deploy_key', { data: SECRET_VALUE, description: 'for deploys' });
        expect(created.statusCode).to.equal(201);
        expect(created.payload).to.equal('');
        const updated = await request('PUT', '/orgs/makers/actions/secrets/DEPLOY_KEY', { data: `${SECRET_VALUE}-2` });
        expect(updated.statusCode).to.equal(204);
        expect(await secrets(context.server).reveal(org.id, 'Deploy_Key')).to.equal(`${SECRET_VALUE}-2`);
        const rows = await context.database.knex('secrets').where({ owner_id: org.id });
        expect(rows).to.have.length(1);
        expect(rows[0].name).to.equal('DEPLOY_KEY');
        expect(String(rows[0].data)).to.startWith('v1:');
        expect(rows[0].data).to.not.contain(SECRET_VALUE);
    });

    it('refuses bad names (400), missing data (422), and data over 64 KiB (400); truncates long descriptions', async () => {
        const org = await makeOrg('checkers');
        for (const name of ['1ABC', 'GITEA_TOKEN', 'github_x', 'ci', 'has-dash']) {
            const refused = await request('PUT', `/orgs/checkers/actions/secrets/${name}`, { data: 'x' });
            expect(refused.statusCode, name).to.equal(400);
            expect((refused.result as { message: string }).message).to.equal('invalid variable or secret name');
        }

        for (const payload of [{}, { data: '' }]) {
            const missing = await request('PUT', '/orgs/checkers/actions/secrets/OK_NAME', payload);
            expect(missing.statusCode).to.equal(422);
            expect((missing.result as { message: string }).message).to.equal('[Data]: Required');
        }

        const tooLong = await request('PUT', '/orgs/checkers/actions/secrets/BIG', { data: 'x'.repeat(65_537) });
        expect(tooLong.statusCode).to.equal(400);
        expect((tooLong.result as { message: string }).message).to.equal('data too long');
        expect(await context.database.knex('secrets').where({ owner_id: org.id })).to.equal([]);
        expect(
            (await request('PUT', '/orgs/checkers/actions/secrets/_', { data: 'y', description: 'é'.repeat(5000) })).statusCode,
        ).to.equal(201);
        const row = await context.database.knex('secrets').where({ owner_id: org.id, name: '_' }).first();
        expect([...String(row.description)]).to.have.length(4096);
    });

    it('lists names, descriptions and creation times with paging headers, never values', async () => {
        await makeOrg('listers');
        await putSecret('listers', 'deploy_key', { data: SECRET_VALUE, description: 'for deploys' });
        await putSecret('listers', 'OTHER_KEY', { data: SECRET_VALUE });
        const listed = await request('GET', '/orgs/listers/actions/secrets?limit=1');
        expect(listed.statusCode).to.equal(200);
        expect(swaggerErrors('orgListActionsSecrets', 200, listed.result)).to.equal([]);
        expect(listed.headers['x-total-count']).to.equal('2');
        expect(listed.headers.link).to.contain('rel="next"');
        const [first] = listed.result as ApiSecret[];
        expect(Object.keys(first ?? {}).sort()).to.equal(['created_at', 'description', 'name']);
        expect(first).to.include({ name: 'DEPLOY_KEY', description: 'for deploys' });
    });

    it('deletes a secret (204), 404 when unknown, 400 for a bad name', async () => {
        const org = await makeOrg('deleters');
        await putSecret('deleters', '_', { data: 'y' });
        expect((await request('DELETE', '/orgs/deleters/actions/secrets/_')).statusCode).to.equal(204);
        expect(await context.database.knex('secrets').where({ owner_id: org.id })).to.equal([]);
        expect((await request('DELETE', '/orgs/deleters/actions/secrets/_')).statusCode).to.equal(404);
        expect((await request('DELETE', '/orgs/deleters/actions/secrets/9x')).statusCode).to.equal(400);
    });

    it('is for owners of the organisation', async () => {
        const org = await makeOrg('guarded');
        await putSecret('guarded', 'DEPLOY_KEY', { data: SECRET_VALUE });
        for (const [method, url, payload] of [
            ['GET', '/orgs/guarded/actions/secrets', undefined],
            ['PUT', '/orgs/guarded/actions/secrets/X', { data: 'x' }],
            ['DELETE', '/orgs/guarded/actions/secrets/DEPLOY_KEY', undefined],
        ] as const) {
            const refused = await request(method, url, payload, member.headers);
            expect(refused.statusCode).to.equal(403);
            expect((refused.result as { message: string }).message).to.equal('Must be an organization owner');
        }

        expect(await secrets(context.server).reveal(org.id, 'DEPLOY_KEY')).to.equal(SECRET_VALUE);
        expect((await context.database.knex('secrets').where({ owner_id: org.id })).map((row) => row.name)).to.equal(['DEPLOY_KEY']);
        expect((await request('GET', '/orgs/nowhere/actions/secrets')).statusCode).to.equal(404);
    });

    it('never shows the value in a response or a log line, through the gitea-js client over real HTTP', async () => {
        await makeOrg('acme');
        await putSecret('acme', 'deploy_key', { data: SECRET_VALUE, description: 'for deploys' });
        const seen: string[] = [];
        const running = await startLoggingServer({ DATA_DIR: context.dataDir, DATABASE_URL: context.config.databaseUrl });
        try {
            const api = giteaApi(running.url, { customFetch: fetch, token: owner.token });
            const put = await api.orgs.updateOrgSecret('acme', 'FROM_JS', { data: SECRET_VALUE });
            expect(put.status).to.equal(201);
            expect((await api.orgs.updateOrgSecret('acme', 'from_js', { data: SECRET_VALUE })).status).to.equal(204);
            const listed = await api.orgs.orgListActionsSecrets('acme', { limit: 50 });
            expect((listed.data as ApiSecret[]).map((secret) => secret.name)).to.equal(['DEPLOY_KEY', 'FROM_JS']);
            seen.push(JSON.stringify(listed.data));
            expect((await api.orgs.deleteOrgSecret('acme', 'FROM_JS')).status).to.equal(204);
            const failing = await fetch(`${running.url}/api/v1/orgs/acme/actions/secrets/BAD-NAME?token=${SECRET_VALUE}`, {
                method: 'PUT',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ data: SECRET_VALUE }),
            });
            seen.push(await failing.text());
        } finally {
            await running.stop();
        }

        const log = running.output();
        expect(log).to.contain('/api/v1/orgs/acme/actions/secrets');
        expect(log).to.not.contain(SECRET_VALUE);
        for (const text of seen) {
            expect(text).to.not.contain(SECRET_VALUE);
        }
    });
});
