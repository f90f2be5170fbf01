import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { ROOT_DIR } from '../../server.ts';
import { createTestServer, type TestServer } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ECHO = Path.join(ROOT_DIR, 'test', 'fixtures', 'jobs', 'echo.ts');

describe('jobs: Bree workers', () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer();
        await context.server.start();
    });

    after(async () => {
        await context.cleanup();
    });

    it('runs a TypeScript job once in a worker with its own database connection, and hears its messages', async () => {
        const messages: unknown[] = [];
        await context.server.app.jobs.runOnce(ECHO, { value: 21 }, (message) => messages.push(message));
        expect(messages).to.equal([{ doubled: 42, settings: 0 }]);
    });

    it('rejects when the job fails', async () => {
        await expect(context.server.app.jobs.runOnce(ECHO, { value: 1, fail: true })).to.reject(/failed on purpose|exited with code 1/);
    });

    it('runs several at once, each under its own name', async () => {
        const results: unknown[] = [];
        await Promise.all([1, 2, 3].map((value) => context.server.app.jobs.runOnce(ECHO, { value }, (message) => results.push(message))));
        expect(results.map((message) => (message as { doubled: number }).doubled).sort()).to.equal([2, 4, 6]);
    });
});
