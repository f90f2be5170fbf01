import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { readDeploySpec, readDeploySpecs } from '../../../lib/spec/deploy-loader.ts';
import { ROOT_DIR } from '../../../server.ts';
import type { Browser } from '../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SPECS_DIR = Path.join(ROOT_DIR, 'specs', 'deploy');
const ROUTES_DIR = Path.join(ROOT_DIR, 'plugins', 'deploy', 'routes');

interface Entry {
    action: string;
    target: string;
    outcome: string;
    actor: { email: string } | null;
    details: Record<string, unknown> | null;
}

describe('deploy manager: the audit entries the specs declare', () => {
    let server: DeployTestServer;
    let admin: Browser;

    const entries = async (action: string): Promise<Entry[]> => {
        const answer = await admin.get(`/api/admin/audit?action=${action}&limit=50`);
        expect(answer.status, answer.text).to.equal(200);
        return (answer.body as { entries: Entry[] }).entries;
    };

    before(async () => {
        server = await deployTestServer();
        admin = server.admin;
    });

    after(async () => {
        await server?.context.cleanup();
    });

    it('are written by no handler itself: every route that makes one says so in its spec, and the OpenAPI document shows it', async () => {
        const handlerFiles = Fs.readdirSync(ROUTES_DIR).map((group) => Path.join(ROUTES_DIR, group, 'handlers.ts'));
        for (const file of handlerFiles.filter((path) => Fs.existsSync(path))) {
            expect(Fs.readFileSync(file, 'utf8'), file).to.not.match(/audit\([^)]*\)\.record\(/);
        }

        const declared = readDeploySpecs(SPECS_DIR).flatMap((spec) =>
            spec.routes.filter((route) => route.audit).map((route) => [route.handler, route.audit?.action]),
        );
        expect(declared.length).to.be.at.least(18);
        const document = (await admin.get('/api/openapi.json')).body as {
            paths: Record<string, Record<string, { operationId: string; 'x-gatehouse-audit'?: { action: string } }>>;
        };
        const documented = Object.values(document.paths)
            .flatMap((methods) => Object.values(methods))
            .filter((operation) => operation['x-gatehouse-audit'])
            .map((operation) => [operation.operationId, operation['x-gatehouse-audit']?.action]);
        expect(documented.sort()).to.equal(declared.sort());
    });

    it('records what the handler acted on once it answered, and nothing for a request refused before it', async () => {
        const refused = await admin.post('/api/admin/users', {
            email: 'nobody@example.com',
            name: 'No One',
            password: 'pw-123456',
            role: 'owner',
        });
        expect(refused.status).to.equal(422);
        expect(await entries('users.create')).to.equal([]);

        const created = await admin.post('/api/admin/users', {
            email: 'clerk@example.com',
            name: 'Clerk',
            password: 'clerk-password-1',
            role: 'viewer',
        });
        expect(created.status, created.text).to.equal(201);
        const [entry, ...more] = await entries('users.create');
        expect(more).to.equal([]);
        expect(entry).to.include({ action: 'users.create', target: 'clerk@example.com', outcome: 'success', details: { role: 'viewer' } });
        expect(entry?.actor?.email).to.equal('admin@example.com');

        // users.delete does not record failures: a user that is not there is a 404 and no entry.
        expect((await admin.delete('/api/admin/users/999999')).status).to.equal(404);
        expect(await entries('users.delete')).to.equal([]);
    });

    it('records a failed attempt, with its reason, where the spec asks for failures', async () => {
        const wrong = await admin.post('/api/account/password', { currentPassword: 'not-the-password', newPassword: 'new-password-1' });
        expect(wrong.status).to.equal(403);
        const [entry] = await entries('account.password');
        expect(entry).to.include({ target: 'admin@example.com', outcome: 'failure', details: { reason: 'the current password is wrong' } });
    });

    it('refuses at start a spec whose audit action is not a dotted name, naming the file', () => {
        const folder = temporaryDirectory('gatehouse-audit-spec-');
        try {
            const file = Path.join(folder, 'notes.yaml');
            Fs.writeFileSync(
                file,
                [
                    'group: notes',
                    'prefix: /api',
                    'role: admin',
                    'routes:',
                    '  - { method: POST, path: /notes, handler: addNote, audit: Add Note }',
                    '',
                ].join('\n'),
            );
            expect(() => readDeploySpec(file)).to.throw(new RegExp(`${file}: .*audit`));
        } finally {
            Fs.rmSync(folder, { recursive: true, force: true });
        }
    });
});
