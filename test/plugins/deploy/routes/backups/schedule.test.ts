import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface BackupSchedule {
    schedule: string | null;
    effective: string | null;
    default: string | null;
    nextAt: string | null;
}

interface AuditEntry {
    action: string;
    target: string;
    actor: { id: number; email: string } | null;
    details?: Record<string, unknown>;
}

const DEFAULT = '15 4 * * *';
const DAY_MS = 86_400_000;

describe('deploy manager: an app’s own backup schedule', () => {
    let server: DeployTestServer;
    let counter = 0;

    before(async () => {
        server = await deployTestServer({ BACKUP_SCHEDULE: DEFAULT });
    });

    after(async () => {
        await server.context.cleanup();
    });

    /** A new app (a draft: a schedule is kept whether or not the app is deployed yet). */
    async function newApp(): Promise<string> {
        counter += 1;
        const name = `timed-${counter}`;
        const created = await server.admin.post('/api/apps', { name, image: 'nginx' });
        expect(created.status, created.text).to.equal(201);
        return name;
    }

    const scheduleOf = async (app: string, browser = server.admin) => {
        const answer = await browser.get(`/api/apps/${app}/backups/schedule`);
        expect(answer.status, answer.text).to.equal(200);
        return answer.body as BackupSchedule;
    };

    const auditOf = async (app: string) =>
        ((await server.admin.get(`/api/admin/audit?action=backups.schedule&target=${app}`)).body as { entries: AuditEntry[] }).entries;

    /** The local time's fields of an ISO time, and how far ahead it is. */
    function timeOf(iso: string | null) {
        expect(iso).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        const time = new Date(String(iso));
        return {
            hours: time.getHours(),
            minutes: time.getMinutes(),
            seconds: time.getSeconds(),
            day: time.getDay(),
            ahead: time.getTime() - Date.now(),
        };
    }

    it('shows every role the schedule that applies: BACKUP_SCHEDULE’s while the app has none of its own, and when it is next due', async () => {
        const app = await newApp();
        for (const browser of [server.admin, await server.signInAs('editor'), await server.signInAs('viewer')]) {
            const shown = await scheduleOf(app, browser);
            expect(shown).to.include({ schedule: null, effective: DEFAULT, default: DEFAULT });
            const next = timeOf(shown.nextAt);
            expect(next).to.include({ hours: 4, minutes: 15, seconds: 0 });
            expect(next.ahead)
                .to.be.above(0)
                .and.below(DAY_MS + 3_600_000);
        }
    });

    it('lets an editor set an own schedule, then off, then back to the default, each audited', async () => {
        const app = await newApp();
        const editor = await server.signInAs('editor');
        const own = await editor.put(`/api/apps/${app}/backups/schedule`, { schedule: '0  3 * * 1-5' });
        expect(own.status, own.text).to.equal(200);
        const set = own.body as BackupSchedule;
        expect(set).to.include({ schedule: '0 3 * * 1-5', effective: '0 3 * * 1-5', default: DEFAULT });
        const next = timeOf(set.nextAt);
        expect(next).to.include({ hours: 3, minutes: 0, seconds: 0 });
        expect([1, 2, 3, 4, 5]).to.include(next.day);
        expect(next.ahead)
            .to.be.above(0)
            .and.below(4 * DAY_MS);
        expect(await scheduleOf(app)).to.equal(set);

        const off = await editor.put(`/api/apps/${app}/backups/schedule`, { schedule: 'off' });
        expect(off.status, off.text).to.equal(200);
        expect(off.body).to.equal({ schedule: 'off', effective: null, default: DEFAULT, nextAt: null });
        expect(await scheduleOf(app)).to.equal(off.body as BackupSchedule);

        const followed = await server.admin.put(`/api/apps/${app}/backups/schedule`, { schedule: null });
        expect(followed.status, followed.text).to.equal(200);
        expect(followed.body as BackupSchedule).to.include({ schedule: null, effective: DEFAULT });

        const entries = await auditOf(app);
        expect(entries.map((entry) => entry.details?.schedule)).to.equal([null, 'off', '0 3 * * 1-5']);
        const [byAdmin, ...byEditor] = entries.map((entry) => entry.actor?.email);
        expect(byAdmin).to.equal('admin@example.com');
        expect(byEditor).to.have.length(2);
        for (const email of byEditor) expect(email).to.match(/^editor\d+@example\.com$/);
    });

    it('refuses a schedule Bree would not take with a 422, writing nothing', async () => {
        const app = await newApp();
        expect((await server.admin.put(`/api/apps/${app}/backups/schedule`, { schedule: '45 1 * * *' })).status).to.equal(200);
        for (const schedule of ['daily', '* * * *', '30 2 * * * * *', '99 2 * * *', '*/0 * * * *', '30 2 * * MON;rm', 'OFF']) {
            const refused = await server.admin.put(`/api/apps/${app}/backups/schedule`, { schedule });
            expect(refused.status, schedule).to.equal(422);
            expect((refused.body as { error: string }).error, schedule).to.startWith('schedule: ');
        }

        expect((await scheduleOf(app)).schedule).to.equal('45 1 * * *');
        expect((await auditOf(app)).length).to.equal(1);
        // Not a string, or too long for any cron expression: the payload's own check.
        expect((await server.admin.put(`/api/apps/${app}/backups/schedule`, { schedule: 5 })).status).to.equal(422);
        expect((await server.admin.put(`/api/apps/${app}/backups/schedule`, { schedule: '1 '.repeat(60) })).status).to.equal(422);
        expect((await server.admin.put(`/api/apps/${app}/backups/schedule`, {})).status).to.equal(422);
        expect((await scheduleOf(app)).schedule).to.equal('45 1 * * *');
    });

    it('lets a viewer read the schedule and not change it; a caller not signed in gets 401 before the body is looked at', async () => {
        const app = await newApp();
        const viewer = await server.signInAs('viewer');
        const refused = await viewer.put(`/api/apps/${app}/backups/schedule`, { schedule: '0 5 * * *' });
        expect(refused.status).to.equal(403);
        expect(refused.body).to.equal({ error: 'your role does not allow this' });
        expect((await scheduleOf(app, viewer)).schedule).to.equal(null);
        expect(await auditOf(app)).to.equal([]);

        const anonymous = new Browser(server.baseUrl);
        await anonymous.get('/api/auth/me');
        expect((await anonymous.get(`/api/apps/${app}/backups/schedule`)).status).to.equal(401);
        expect((await anonymous.put(`/api/apps/${app}/backups/schedule`, { schedule: 'not a cron' })).status).to.equal(401);
        expect((await anonymous.put(`/api/apps/${app}/backups/schedule`, { schedule: 5 })).status).to.equal(401);
    });

    it('answers 404 for an app that does not exist, writing nothing', async () => {
        const missing = await server.admin.get('/api/apps/no-such-app/backups/schedule');
        expect(missing.status).to.equal(404);
        expect(missing.body).to.equal({ error: 'app no-such-app not found' });
        expect((await server.admin.put('/api/apps/no-such-app/backups/schedule', { schedule: '0 5 * * *' })).status).to.equal(404);
        const rows = await server.context.server.app.knex('dp_app_backup_schedules').where({ app_name: 'no-such-app' });
        expect(rows).to.equal([]);
        expect(await auditOf('no-such-app')).to.equal([]);
    });
});
