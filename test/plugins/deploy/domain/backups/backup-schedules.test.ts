import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import type { Knex } from 'knex';

import { createKnex } from '../../../../../lib/database.ts';
import { backupSchedules, SCHEDULED_BACKUPS_JOB } from '../../../../../plugins/deploy/domain/backups/backup-schedules.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** A local time (as Bree schedules) on a day to come, so that no claim made before is newer. */
const on = (day: number, hours: number, minutes: number) => new Date(2031, 0, day, hours, minutes).getTime();

/** Apps made through the API, each with its own schedule if given, and marked deployed (only deployed apps are backed up). */
async function appsWith(server: DeployTestServer, prefix: string, schedules: Record<string, string | null>, deployed = true) {
    for (const [suffix, schedule] of Object.entries(schedules)) {
        const name = `${prefix}-${suffix}`;
        expect((await server.admin.post('/api/apps', { name, image: 'nginx' })).status).to.equal(201);
        if (schedule !== null) {
            const set = await server.admin.put(`/api/apps/${name}/backups/schedule`, { schedule });
            expect(set.status, set.text).to.equal(200);
        }

        if (deployed) await server.context.server.app.knex('dp_apps').where({ name }).update({ state: 'running' });
    }
}

const cronsOf = (server: TestServer) => server.server.app.jobs.scheduled(SCHEDULED_BACKUPS_JOB)?.crons;

describe('backup schedules: each app’s times, claimed once among the servers on a database', () => {
    let server: DeployTestServer;
    /** A second server on the same database, with a connection of its own. */
    let second: TestServer;
    let secondKnex: Knex;

    before(async () => {
        server = await deployTestServer({ BACKUP_SCHEDULE: '30 2 * * *' });
        secondKnex = createKnex(server.context.database.databaseUrl);
        second = await createTestServer(
            { BACKUP_SCHEDULE: '30 2 * * *' },
            { dataDir: server.context.dataDir, database: { ...server.context.database, knex: secondKnex, drop: async () => undefined } },
        );
    });

    after(async () => {
        await second?.server.stop();
        await secondKnex?.destroy();
        await server?.context.cleanup();
    });

    it('backs an app up at BACKUP_SCHEDULE’s times, or its own, or never; each time is one server’s', async () => {
        await appsWith(server, 'claim', { follows: null, own: '0 3 * * *', off: 'off' });
        await appsWith(server, 'claim', { draft: '0 3 * * *' }, false);
        const [one, other] = [backupSchedules(server.context.server), backupSchedules(second.server)];
        const ours = (names: string[]) => names.filter((name) => name.startsWith('claim-'));

        expect(ours(await one.claimDue(on(1, 2, 29), on(1, 2, 31)))).to.equal(['claim-follows']);
        expect(ours(await other.claimDue(on(1, 2, 29), on(1, 2, 31)))).to.equal([]);
        expect(ours(await other.claimDue(on(1, 2, 59), on(1, 3, 0)))).to.equal(['claim-own']);
        expect(ours(await one.claimDue(on(1, 2, 59), on(1, 3, 1)))).to.equal([]);
        // No time of theirs in the window: nothing.
        expect(ours(await one.claimDue(on(1, 3, 1), on(1, 23, 0)))).to.equal([]);
        // Several times in one window (a server that looked last long ago): one backup, of the last.
        expect(ours(await other.claimDue(on(1, 23, 0), on(4, 12, 0)))).to.equal(['claim-follows', 'claim-own']);
        expect(ours(await one.claimDue(on(1, 23, 0), on(4, 12, 0)))).to.equal([]);
        const slots = await server.context.server.app
            .knex('dp_app_backup_schedules')
            .whereIn('app_name', ['claim-follows', 'claim-own'])
            .orderBy('app_name')
            .select('last_slot');
        expect(slots.map((row: { last_slot: number | string }) => Number(row.last_slot))).to.equal([on(4, 2, 30), on(4, 3, 0)]);
    });

    it('ticks at every schedule in effect, and takes in another server’s change when it reads the schedules again', async () => {
        const own = '*/20 * * * * *';
        expect(cronsOf(server.context)).to.include('30 2 * * *');
        expect(cronsOf(server.context)).to.not.include(own);
        await appsWith(server, 'ticks', { own, off: 'off' });
        expect(cronsOf(server.context)).to.include([own, '30 2 * * *']);
        expect(cronsOf(second)).to.not.include(own);
        await backupSchedules(second.server).arm();
        expect(cronsOf(second)).to.include([own, '30 2 * * *']);
        expect(cronsOf(second)).to.not.include('off');

        expect((await server.admin.put('/api/apps/ticks-own/backups/schedule', { schedule: null })).status).to.equal(200);
        expect(cronsOf(server.context)).to.not.include(own);
        expect(cronsOf(server.context)).to.include('30 2 * * *');
    });
});

describe('backup schedules with BACKUP_SCHEDULE off', () => {
    let server: DeployTestServer;

    before(async () => {
        server = await deployTestServer({ BACKUP_SCHEDULE: 'off' });
    });

    after(async () => {
        await server?.context.cleanup();
    });

    it('backs up only the apps with a schedule of their own, and ticks only while one has', async () => {
        expect(cronsOf(server.context)).to.be.undefined();
        await appsWith(server, 'alone', { follows: null, own: '15 1 * * *' });
        expect(cronsOf(server.context)).to.equal(['15 1 * * *']);
        expect(await backupSchedules(server.context.server).claimDue(on(1, 0, 0), on(2, 0, 0))).to.equal(['alone-own']);

        expect((await server.admin.put('/api/apps/alone-own/backups/schedule', { schedule: 'off' })).status).to.equal(200);
        expect(cronsOf(server.context)).to.be.undefined();
        expect(await backupSchedules(server.context.server).claimDue(on(2, 0, 0), on(3, 0, 0))).to.equal([]);
    });
});
