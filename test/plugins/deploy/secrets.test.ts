import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generate } from 'otplib';

import { renderSecretsFile } from '../../../plugins/deploy/domain/apps/app-files.ts';
import { Browser, type BrowserResponse } from '../../helpers/browser.ts';
import { deployTestServer } from '../../helpers/deploy-session.ts';
import { freePort, freshDatabase, startServerProcess, temporaryDirectory, waitForHealth } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const PASSWORDS = ['first-admin-password', 'second-admin-password', 'an-editor-password'];

describe('deploy manager: secrets stay secret', () => {
    it('leaves no password, TOTP secret or session id in a response or a log line where it was not meant to be', async () => {
        const dataDir = temporaryDirectory();
        const database = await freshDatabase(dataDir);
        await database.knex.destroy();
        const port = await freePort();
        const server = startServerProcess({
            PORT: String(port),
            DATA_DIR: dataDir,
            DATABASE_URL: database.databaseUrl,
            LOG_LEVEL: 'debug',
        });
        const responses: BrowserResponse[] = [];
        /** Sends one step, checks it did what it is there for (its status), and keeps its answer for the leak check. */
        const step = async (pending: Promise<BrowserResponse>, status: number) => {
            const response = await pending;
            expect(response.status, `${response.status} ${response.text}`).to.equal(status);
            responses.push(response);
            return response;
        };

        try {
            await waitForHealth(port, server);
            const browser = new Browser(`http://127.0.0.1:${port}`);
            await step(browser.get('/api/setup/status'), 200);
            const token = Fs.readFileSync(Path.join(dataDir, 'setup-token'), 'utf8').trim();
            await step(browser.post('/api/setup', { token, email: 'root@example.com', name: 'Root', password: PASSWORDS[0] }), 201);
            await step(browser.post('/api/auth/login', { email: 'root@example.com', password: 'a-wrong-password' }), 401);
            const login = await step(browser.post('/api/auth/login', { email: 'root@example.com', password: PASSWORDS[0] }), 200);
            expect(login.body).to.include({ mfaRequired: false });
            const sessionIds = new Set([browser.cookies.get('dp_session')]);
            // The secret is meant to be shown by the setup answer, and only there.
            const setup = await browser.post('/api/account/totp/setup');
            expect(setup.status, setup.text).to.equal(200);
            const secret = (setup.body as { secret: string }).secret;
            expect(secret).to.be.a.string().and.to.not.be.empty();
            await step(browser.post('/api/account/totp/enable', { code: await generate({ secret }) }), 200);
            await step(browser.post('/api/account/password', { currentPassword: PASSWORDS[0], newPassword: PASSWORDS[1] }), 200);
            await step(
                browser.post('/api/admin/users', { email: 'ed@example.com', name: 'Ed', password: PASSWORDS[2], role: 'editor' }),
                201,
            );
            const users = await step(browser.get('/api/admin/users'), 200);
            expect(users.text).to.contain('ed@example.com');
            const audit = await step(browser.get('/api/admin/audit?limit=50'), 200);
            expect(audit.text).to.contain('account.password');
            await step(browser.get('/api/auth/me'), 200);
            sessionIds.add(browser.cookies.get('dp_session'));
            await step(browser.post('/api/auth/logout'), 204);

            const secrets = [...PASSWORDS, secret, ...sessionIds].map((value) => value ?? '');
            // An empty value would be "found" everywhere; a step that left no session cookie fails here instead.
            expect(secrets.every((value) => value.length > 0)).to.be.true();
            for (const response of responses) {
                for (const value of secrets) {
                    expect(response.text, `a response leaked ${value}`).to.not.contain(value);
                }
            }

            server.child.kill('SIGTERM');
            await server.exited;
            const log = server.output();
            expect(log).to.contain('/api/auth/login');
            for (const value of secrets) {
                expect(log, `the log leaked ${value}`).to.not.contain(value);
            }
        } finally {
            server.child.kill('SIGKILL');
            await database.drop().catch(() => undefined);
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });
});

interface ShownFile {
    path: string;
    content: string;
    masked: boolean;
}

/** Values split by every character some reader takes for a line end: \n, \r, U+2028, U+2029, U+0085, \v, \f. */
const BROKEN_VALUES = {
    NL: 'nl-head\nnl-tail',
    CR: 'cr-head\rcr-tail',
    LS: 'ls-head\u2028ls-tail',
    PS: 'ps-head\u2029ps-tail',
    NEL: 'nel-head\u0085nel-tail',
    VT: 'vt-head\vvt-tail',
    FF: 'ff-head\fff-tail',
};

/** An env file written by hand: line breaks inside values, `export`, spaces around `=`, a multi-line quoted value, a comment. */
const HAND_WRITTEN_ENV = [
    'A=a-head\u2028a-tail',
    'export B = b-head\rb-tail\r',
    'C="c-head',
    'SOUNDS_LIKE_A_KEY=c-tail"',
    '# a comment with a-secret-note',
    "D='d-head\u0085d-tail'",
    '',
].join('\n');

describe('deploy manager: secret values are masked whole', () => {
    it('shows viewers and previews no part of a value, whatever line breaks it holds', async () => {
        const server = await deployTestServer();
        try {
            const editor = await server.signInAs('editor');
            const viewer = await server.signInAs('viewer');
            expect((await editor.post('/api/apps', { name: 'vault', image: 'nginx' })).status).to.equal(201);
            const saved = await editor.put('/api/apps/vault/draft', { secrets: BROKEN_VALUES });
            expect(saved.status, saved.text).to.equal(200);

            const preview = await editor.post('/api/apps/vault/preview');
            const shownDraft = (preview.body as { files: ShownFile[] }).files.find((file) => file.path.endsWith('secrets.env'));
            const maskedLines = Object.keys(BROKEN_VALUES).map((key) => `${key}=••••••••\n`);
            expect(shownDraft?.content).to.equal(maskedLines.join(''));

            const appDir = Path.join(server.context.config.apps.appsDir, 'vault');
            Fs.mkdirSync(appDir, { recursive: true });
            Fs.writeFileSync(Path.join(appDir, 'secrets.env'), renderSecretsFile(BROKEN_VALUES), { mode: 0o600 });
            Fs.writeFileSync(Path.join(appDir, 'extra.env'), HAND_WRITTEN_ENV, { mode: 0o600 });
            const forViewer = await viewer.get('/api/apps/vault/files');
            expect(forViewer.status).to.equal(200);
            for (const fragment of ['head', 'tail', 'secret-note', 'SOUNDS_LIKE']) {
                expect(forViewer.text, fragment).to.not.contain(fragment);
            }

            const files = (forViewer.body as { files: ShownFile[] }).files;
            expect(files.find((file) => file.path.endsWith('secrets.env'))?.content).to.equal(maskedLines.join(''));
            expect(files.find((file) => file.path.endsWith('extra.env'))?.content).to.equal(
                ['A=••••••••', 'export B =••••••••\r', 'C=••••••••', '••••••••', '••••••••', 'D=••••••••', ''].join('\n'),
            );
            const forEditor = (await editor.get('/api/apps/vault/files')).body as { files: ShownFile[] };
            expect(forEditor.files.find((file) => file.path.endsWith('extra.env'))?.content).to.equal(HAND_WRITTEN_ENV);
        } finally {
            await server.context.cleanup();
        }
    });
});
