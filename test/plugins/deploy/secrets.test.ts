import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generate } from 'otplib';

import { Browser, type BrowserResponse } from '../../browser.ts';
import { freePort, freshDatabase, startServerProcess, temporaryDirectory, waitForHealth } from '../../helpers.ts';

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
        const record = async (pending: Promise<BrowserResponse>) => {
            const response = await pending;
            responses.push(response);
            return response;
        };

        try {
            await waitForHealth(port, server);
            const browser = new Browser(`http://127.0.0.1:${port}`);
            await record(browser.get('/api/setup/status'));
            const token = Fs.readFileSync(Path.join(dataDir, 'setup-token'), 'utf8').trim();
            await record(browser.post('/api/setup', { token, email: 'root@example.com', name: 'Root', password: PASSWORDS[0] }));
            await record(browser.post('/api/auth/login', { email: 'root@example.com', password: 'a-wrong-password' }));
            await record(browser.post('/api/auth/login', { email: 'root@example.com', password: PASSWORDS[0] }));
            const sessionIds = new Set([browser.cookies.get('dp_session') ?? '']);
            // The secret is meant to be shown by the setup answer, and only there.
            const setup = await browser.post('/api/account/totp/setup');
            const secret = (setup.body as { secret: string }).secret;
            await record(browser.post('/api/account/totp/enable', { code: await generate({ secret }) }));
            await record(browser.post('/api/account/password', { currentPassword: PASSWORDS[0], newPassword: PASSWORDS[1] }));
            await record(browser.post('/api/admin/users', { email: 'ed@example.com', name: 'Ed', password: PASSWORDS[2], role: 'editor' }));
            await record(browser.get('/api/admin/users'));
            await record(browser.get('/api/admin/audit?limit=50'));
            await record(browser.get('/api/auth/me'));
            sessionIds.add(browser.cookies.get('dp_session') ?? '');
            await record(browser.post('/api/auth/logout'));

            const secrets = [...PASSWORDS, secret, ...sessionIds].filter((value) => value.length > 0);
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
