import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { freePort, freshDatabase, startServerProcess, temporaryDirectory, waitForHealth } from './helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('the server process', () => {
    it('starts from the environment, logs requests without secrets, and stops cleanly on SIGTERM', async () => {
        const dataDir = temporaryDirectory();
        const database = await freshDatabase(dataDir);
        await database.knex.destroy();
        const port = await freePort();
        const server = startServerProcess({ PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: database.databaseUrl, LOG_LEVEL: 'info' });
        try {
            await waitForHealth(port, server);
            expect(await (await fetch(`http://127.0.0.1:${port}/api/health`)).json()).to.equal({ status: 'ok' });

            const secret = 'f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed';
            const response = await fetch(`http://127.0.0.1:${port}/api/v1/licenses/MIT?token=${secret}`, {
                headers: { Authorization: `token ${secret}`, Cookie: `dp_session=${secret}` },
            });
            expect(response.status).to.equal(401);

            const masterKey = Path.join(dataDir, 'master.key');
            expect(Fs.statSync(masterKey).mode & 0o777).to.equal(0o600);

            server.child.kill('SIGTERM');
            expect(await server.exited).to.equal(0);
            const log = server.output();
            expect(log).to.contain('/api/v1/licenses/MIT?token=%5Bredacted%5D');
            expect(log).to.not.contain(secret);
            expect(log).to.contain('SIGTERM');
        } finally {
            server.child.kill('SIGKILL');
            await database.drop().catch(() => undefined);
            Fs.rmSync(dataDir, { recursive: true, force: true });
        }
    });

    it('refuses to start with a bad variable, naming it', async () => {
        const server = startServerProcess({ PORT: 'eighty', DATA_DIR: temporaryDirectory() });
        expect(await server.exited).to.equal(2);
        expect(server.output()).to.contain('PORT');
    });
});
