import { type ChildProcess, spawn } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ROOT_DIR } from '../server.ts';
import { freePort, freshDatabase, temporaryDirectory } from './helpers.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

interface RunningServer {
    child: ChildProcess;
    output: () => string;
    exited: Promise<number | null>;
}

/** `npm start` as a person runs it: a real process, configured only by the environment. */
function startServer(environment: Record<string, string>): RunningServer {
    let output = '';
    const child = spawn(process.execPath, ['--import', 'tsx', Path.join(ROOT_DIR, 'server.ts')], {
        cwd: ROOT_DIR,
        env: { PATH: process.env.PATH ?? '', ...environment },
        stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, output: () => output, exited };
}

async function waitForHealth(port: number, server: RunningServer): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
        try {
            const response = await fetch(`http://127.0.0.1:${port}/api/health`);
            if (response.ok) {
                return;
            }
        } catch {
            // not listening yet
        }

        await new Promise((resolve) => setTimeout(resolve, 100));
    }

    throw new Error(`server did not become healthy:\n${server.output()}`);
}

describe('the server process', () => {
    it('starts from the environment, logs requests without secrets, and stops cleanly on SIGTERM', async () => {
        const dataDir = temporaryDirectory();
        const database = await freshDatabase(dataDir);
        await database.knex.destroy();
        const port = await freePort();
        const server = startServer({ PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: database.databaseUrl, LOG_LEVEL: 'info' });
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
        const server = startServer({ PORT: 'eighty', DATA_DIR: temporaryDirectory() });
        expect(await server.exited).to.equal(2);
        expect(server.output()).to.contain('PORT');
    });
});
