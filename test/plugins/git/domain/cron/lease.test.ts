import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { executeCronTask } from '../../../../../plugins/git/domain/cron/lease.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const EVERY_TWO_SECONDS = '*/2 * * * * *';

describe('cron: one run per tick across servers', () => {
    let first: TestServer;
    let second: TestServer;

    before(async () => {
        const environment = { CRON_DELETE_OLD_SYSTEM_NOTICES_ENABLED: 'true', CRON_DELETE_OLD_SYSTEM_NOTICES_SCHEDULE: EVERY_TWO_SECONDS };
        first = await createTestServer(environment);
        second = await createTestServer(environment, { dataDir: first.dataDir, database: first.database });
    });

    after(async () => {
        await second.server.stop();
        await first.cleanup();
    });

    it('lets one of two concurrent claims of the same tick run', async () => {
        const request = { task: 'cleanup_actions', cause: 'schedule' as const, schedule: { interval: 3_600_000 } };
        const outcomes = await Promise.all([
            executeCronTask(first.database.knex, first.config, request),
            executeCronTask(first.database.knex, first.config, request),
        ]);
        expect(outcomes.map((outcome) => outcome.status).sort()).to.equal(['skipped', 'success']);
        expect((await executeCronTask(first.database.knex, first.config, request)).status).to.equal('skipped');
    });

    it('runs a scheduled task once per tick with two servers on one database', { timeout: 60_000 }, async () => {
        const scheduled = () => first.database.knex('cron_executions').where({ task: 'delete_old_system_notices', cause: 'schedule' });
        await Promise.all([first.server.start(), second.server.start()]);
        await waitUntil(
            'two ticks of the schedule have run',
            async () => Number((await scheduled().where({ status: 'success' }).count({ count: '*' }).first())?.count ?? 0) >= 2,
            { timeoutMs: 45_000, intervalMs: 200 },
        );
        // Stopping waits for the task's workers to end, so no execution is left half done.
        await Promise.all([first.server.stop(), second.server.stop()]);
        const executions = await scheduled().select('slot', 'holder', 'status');
        const slots = executions.map((execution: { slot: number }) => Number(execution.slot));
        expect(executions.length).to.be.at.least(2);
        expect(new Set(slots).size).to.equal(slots.length);
        expect(slots.every((slot: number) => slot % 2_000 === 0)).to.be.true();
        expect(new Set(executions.map((execution: { status: string }) => execution.status))).to.equal(new Set(['success']));
        const [task] = await first.database.knex('cron_tasks').where({ name: 'delete_old_system_notices' });
        expect(Number(task.exec_times)).to.equal(executions.length);
    });
});
