/**
 * A run killed half-way (kill -9), for the tests of its recovery: test/fixtures/jobs/deploy-and-pause.ts starts the
 * run in a server process of its own, on the test server's database and data directory, and waits at a step.
 */
import { spawn } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import { runs } from '../../plugins/deploy/domain/runs/run-service.ts';
import { ROOT_DIR } from '../../server.ts';
import type { TestServer } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';

const DEPLOY_AND_PAUSE = Path.join(ROOT_DIR, 'test', 'fixtures', 'jobs', 'deploy-and-pause.ts');

export interface KilledRun {
    /** What the server that takes the run over serves: its database, data directory and the rest of its environment. */
    context: TestServer;
    environment: Record<string, string>;
    app: string;
    /** A step the run says through RunContext.pauseIfAsked (files-written, access, site-written, check...). */
    step: string;
    /** deploy (the default), compose, sso or delete, with its request's body. */
    operation?: string;
    body?: unknown;
}

/** Starts the run, kills its process at the step, and answers the run's id once the test's server has taken it over. */
export async function killRunAt({ context, environment, app, step, operation = 'deploy', body = {} }: KilledRun): Promise<number> {
    const pauseFile = Path.join(context.dataDir, `paused-${app}`);
    // An earlier kill of the same app left its file: the step reached is this run's only once the file is made again.
    Fs.rmSync(pauseFile, { force: true });
    const owner = spawn(process.execPath, ['--import', 'tsx', DEPLOY_AND_PAUSE], {
        cwd: ROOT_DIR,
        env: {
            ...process.env,
            ...environment,
            DATA_DIR: context.dataDir,
            DATABASE_URL: context.database.databaseUrl,
            APP: app,
            OPERATION: operation,
            BODY: JSON.stringify(body),
            GATEHOUSE_TEST_PAUSE_AT: step,
            GATEHOUSE_TEST_PAUSE_FILE: pauseFile,
        },
        stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
        let printed = '';
        let exited: string | undefined;
        owner.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
        owner.once('exit', (code, signal) => (exited = signal ?? String(code)));
        // The run may reach an early step before the process has said its id: both are waited for.
        await waitUntil(
            `the ${operation} run of ${app} reached ${step}`,
            () => {
                const reached = Fs.existsSync(pauseFile) && /run \d+/.test(printed);
                // Refused before it started, or failed before the step: its error is above (the process's stderr).
                if (!reached && exited !== undefined)
                    throw new Error(`the process of the ${operation} run of ${app} ended (${exited}) before ${step}`);
                return reached;
            },
            { timeoutMs: 300_000, intervalMs: 100 },
        );
        const runId = Number(/run (\d+)/.exec(printed)?.[1]);
        owner.kill('SIGKILL');
        const service = runs(context.server);
        await waitUntil(`the killed run of ${app} is taken over`, async () => (await service.get(runId)).state === 'interrupted', {
            timeoutMs: 120_000,
            intervalMs: 100,
        });
        return runId;
    } finally {
        owner.kill('SIGKILL');
    }
}
