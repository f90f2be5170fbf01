import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { nextOccurrence, nextRunAt, parseSchedule, previousOccurrence, slotOf } from '../../../../../plugins/git/domain/cron/schedule.ts';
import { cronSettings } from '../../../../../plugins/git/domain/cron/cron-service.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const at = (text: string) => new Date(text).getTime();

describe('cron schedules', () => {
    it("reads Gitea's descriptors, @every durations and cron expressions", () => {
        expect(parseSchedule('@midnight')).to.equal({ cron: '0 0 * * *', hasSeconds: false });
        expect(parseSchedule('@annually')).to.equal({ cron: '0 0 1 1 *', hasSeconds: false });
        expect(parseSchedule('@every 72h')).to.equal({ interval: 72 * 3_600_000 });
        expect(parseSchedule('@every 1h30m')).to.equal({ interval: 90 * 60_000 });
        expect(parseSchedule('*/5 * * * * *')).to.equal({ cron: '*/5 * * * * *', hasSeconds: true });
        expect(() => parseSchedule('61 * * * *')).to.throw('bad cron field 61');
        expect(() => parseSchedule('* * *')).to.throw(/5 fields/);
    });

    it('finds the next and previous occurrences (local time, as Bree runs them)', () => {
        const now = at('2026-11-22T10:17:33');
        expect(nextOccurrence('0 0 * * *', now)).to.equal(at('2026-11-23T00:00:00'));
        expect(previousOccurrence('0 0 * * *', now)).to.equal(at('2026-11-22T00:00:00'));
        expect(nextOccurrence('30 4 * * 1-5', at('2026-11-21T12:00:00'))).to.equal(at('2026-11-23T04:30:00'));
        expect(nextOccurrence('0 0 13 * 5', now)).to.equal(at('2026-11-27T00:00:00'));
        expect(nextOccurrence('0 0 30 2 *', now)).to.be.undefined();
    });

    it('puts ticks of every server into the same slot', () => {
        const cron = parseSchedule('*/3 * * * * *');
        expect(slotOf(cron, at('2026-11-22T10:17:34.900'))).to.equal(at('2026-11-22T10:17:33'));
        const interval = parseSchedule('@every 10s');
        expect(slotOf(interval, 123_456)).to.equal(120_000);
        expect(nextRunAt(interval, 1_000, 25_500)).to.equal(31_000);
        expect(nextRunAt(interval, undefined, 25_500)).to.be.undefined();
    });

    it("applies CRON_<TASK>_* overrides to every one of Gitea's tasks, and refuses tasks it does not have", () => {
        const settings = cronSettings({
            git_gc_repos: { enabled: true, schedule: '@every 1h' },
            repo_health_check: { enabled: false },
            update_mirrors: { schedule: '@every 1h' },
            rebuild_issue_indexer: { enabled: true, runAtStart: true },
        });
        expect(settings).to.have.length(28);
        expect(settings.find((setting) => setting.name === 'git_gc_repos')).to.include({ enabled: true, spec: '@every 1h' });
        expect(settings.find((setting) => setting.name === 'repo_health_check')).to.include({ enabled: false, spec: '@midnight' });
        expect(settings.find((setting) => setting.name === 'update_mirrors')).to.include({ enabled: true, spec: '@every 1h' });
        expect(settings.find((setting) => setting.name === 'rebuild_issue_indexer')).to.include({ enabled: true, runAtStart: true });
        expect(settings.find((setting) => setting.name === 'check_repo_stats')).to.include({ runAtStart: true });
        expect(settings.find((setting) => setting.name === 'cleanup_actions')).to.include({ runAtStart: false });
        expect(() => cronSettings({ no_such_task: { enabled: true } })).to.throw('CRON_NO_SUCH_TASK_*: there is no cron task no_such_task');
        expect(() => cronSettings({ gc_lfs: { enabled: true } })).to.throw(
            'CRON_GC_LFS_*: there is no cron task gc_lfs: Gitea registers it only when it serves Git LFS, which Gatehouse does not',
        );
        expect(() => cronSettings({ git_gc_repos: { schedule: '99 * * * *' } })).to.throw(/CRON_GIT_GC_REPOS_SCHEDULE/);
    });
});
