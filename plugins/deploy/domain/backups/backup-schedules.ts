/**
 * When each app is backed up by schedule: by its own cron expression, never (`off`), or, unset, at BACKUP_SCHEDULE's
 * times (`dp_app_backup_schedules`). Bree ticks at every time of any schedule in effect (jobs/scheduled-backups.ts);
 * at each tick the server looks at the times that came since it last looked and claims, app by app, the last of them
 * in the database, so that of the servers on the database one backs an app up at each of its times. What another
 * server changed is taken into Bree's ticks within a minute.
 */
import type { Server } from '@hapi/hapi';

import { now, toRfc3339 } from '../../../../lib/database.ts';
import { cronProblem, nextCronTime, previousCronTime } from '../../../../lib/cron.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { Service } from '../../../../lib/service.ts';
import { defineService } from '../../../../lib/services.ts';
import { audit } from '../accounts/audit-service.ts';
import type { DeployUser } from '../accounts/user-service.ts';
import type { AppRecord } from '../apps/app-service.ts';

export const SCHEDULED_BACKUPS_JOB = 'scheduled-backups';
const TABLE = 'dp_app_backup_schedules';
/** As long as the column: a cron expression is far shorter. */
const SCHEDULE_MAX = 100;
/** How often the server reads the schedules another server may have changed. */
export const SCHEDULES_REREAD_MS = 60_000;
/** A tick may come a moment before its time (timers round): times this close ahead count as come. */
const EARLY_MS = 1000;

export interface BackupSchedule {
    /** The app's own setting: a cron expression, `off`, or null (BACKUP_SCHEDULE's). */
    schedule: string | null;
    /** The cron expression that applies, or null: never by schedule. */
    effective: string | null;
    /** BACKUP_SCHEDULE, or null when it is `off`. */
    default: string | null;
    /** When the next scheduled backup is due. */
    nextAt: string | null;
}

/** The app of that name (404 when none): the apps are imported by the first call, as arming the schedules at start needs none. */
async function existingApp(server: Server, name: string): Promise<AppRecord> {
    const { apps } = await import('../apps/app-service.ts');
    return await apps(server).require(name);
}

/** `30  2 * * *` and ` 30 2 * * *` are one schedule. */
function tidy(schedule: string): string {
    return schedule.trim().split(/\s+/).join(' ');
}

export class BackupScheduleService extends Service {
    /** Times at or before this were looked at (none before the server started). */
    #lookedAt = now();
    #ticking = false;
    #tickedMeanwhile = false;
    #stopping = false;
    /** The scheduled backups under way, for a stopping server to wait for. */
    #backingUp: Promise<void> = Promise.resolve();
    /** The schedules Bree ticks at, as a key; undefined: no tick. */
    #armed: string | undefined;
    /** Arming is one at a time: Bree's job is removed and added again. */
    #arming: Promise<void> = Promise.resolve();

    get #default(): string | undefined {
        return this.server.app.config.backups.schedule;
    }

    #effective(own: string | null | undefined): string | undefined {
        return own === 'off' ? undefined : (own ?? this.#default);
    }

    async #own(app: string): Promise<string | null> {
        const row = (await this.knex(TABLE).where({ app_name: app }).first('schedule')) as { schedule: string | null } | undefined;
        return row?.schedule ?? null;
    }

    #view(own: string | null): BackupSchedule {
        const effective = this.#effective(own);
        const next = effective ? nextCronTime([effective], now()) : undefined;
        return {
            schedule: own,
            effective: effective ?? null,
            default: this.#default ?? null,
            nextAt: next === undefined ? null : toRfc3339(next),
        };
    }

    async of(name: string): Promise<BackupSchedule> {
        const app = await existingApp(this.server, name);
        return this.#view(await this.#own(app.name));
    }

    /** Sets the app's own schedule (null: BACKUP_SCHEDULE's again); a schedule Bree would not take is refused, nothing written. */
    async set(name: string, schedule: string | null, actor: DeployUser): Promise<BackupSchedule> {
        const own = schedule === null ? null : tidy(schedule);
        const problem =
            own === null || own === 'off' ? undefined : own.length > SCHEDULE_MAX ? `at most ${SCHEDULE_MAX} characters` : cronProblem(own);
        if (problem) {
            throw new ValidationError(`schedule: ${problem}`);
        }

        const app = await existingApp(this.server, name);
        await this.knex(TABLE)
            .insert({ app_name: app.name, schedule: own, updated_at: now() })
            .onConflict('app_name')
            .merge(['schedule', 'updated_at']);
        await audit(this.server).record({ actor, action: 'backups.schedule', target: app.name, details: { schedule: own } });
        // Saved either way: a failure is logged, and the next reading of the schedules tries again.
        await this.arm().catch((error: unknown) =>
            this.server.log(['error', 'deploy', 'backups'], `the backup schedules were not taken in: ${(error as Error).message}`),
        );
        return this.#view(own);
    }

    /** A deleted app leaves no schedule behind for an app of the same name to inherit. */
    async forgetApp(app: string): Promise<void> {
        await this.knex(TABLE).where({ app_name: app }).delete();
    }

    /** The cron expressions in effect for some app (BACKUP_SCHEDULE's whenever it is set), each once. */
    async #inEffect(): Promise<string[]> {
        const rows = (await this.knex(TABLE).whereNotNull('schedule').whereNot({ schedule: 'off' }).distinct('schedule')) as Array<{
            schedule: string;
        }>;
        return [...new Set([...(this.#default ? [this.#default] : []), ...rows.map((row) => row.schedule)])].sort();
    }

    /** Has Bree tick at every time of the schedules in effect (no tick when there are none); unchanged, nothing is done. */
    async arm(): Promise<void> {
        const armed = this.#arming.then(() => this.#armNow());
        this.#arming = armed.catch(() => undefined);
        await armed;
    }

    async #armNow(): Promise<void> {
        const crons = await this.#inEffect();
        const key = crons.join('\n') || undefined;
        if (key === this.#armed) {
            return;
        }

        if (key === undefined) {
            await this.server.app.jobs.unschedule(SCHEDULED_BACKUPS_JOB);
        } else {
            await this.server.app.jobs.schedule({ name: SCHEDULED_BACKUPS_JOB, crons });
        }

        this.#armed = key;
    }

    /**
     * Bree's tick: backs up the apps whose time came since the last look, one after the other. A tick that comes while
     * they are backed up is taken once they are, with the times that came meanwhile.
     */
    tick(): void {
        if (this.#stopping) {
            return;
        }

        if (this.#ticking) {
            this.#tickedMeanwhile = true;
            return;
        }

        this.#ticking = true;
        this.#tickedMeanwhile = false;
        this.#backingUp = this.#backUpDue()
            .catch((error: unknown) =>
                this.server.log(['error', 'deploy', 'backups'], `scheduled backups failed: ${(error as Error).message}`),
            )
            .finally(() => {
                this.#ticking = false;
                if (this.#tickedMeanwhile) this.tick();
            });
    }

    /**
     * The server stops: no tick is taken from now on, and the backups under way end (or are ended by the workers'
     * stop) before the server goes on to close its database.
     */
    async stopTicking(): Promise<void> {
        this.#stopping = true;
        await this.#backingUp;
    }

    async #backUpDue(): Promise<void> {
        const since = this.#lookedAt;
        const at = now() + EARLY_MS;
        this.#lookedAt = at;
        const due = await this.claimDue(since, at);
        if (due.length === 0) {
            return;
        }

        // Imported by the first tick with apps due, like the apps above.
        const { backups } = await import('./backup-service.ts');
        const { backedUp, skipped } = await backups(this.server).backUpScheduled(due);
        const failed = backedUp.filter((backup) => backup.state !== 'succeeded');
        this.server.log(
            ['deploy', 'backups'],
            `scheduled backups: ${backedUp.length - failed.length} made, ${failed.length} failed, ${skipped.length} not started`,
        );
        for (const { app, reason } of skipped) this.server.log(['deploy', 'backups'], `scheduled backup of ${app} not started: ${reason}`);
    }

    /**
     * The deployed apps whose schedule had a time in (since, at] that this server claimed: each app's last such time is
     * written as its claimed slot where the slot is older, which one server does.
     */
    async claimDue(since: number, at: number): Promise<string[]> {
        const rows = (await this.knex('dp_apps as a')
            .leftJoin(`${TABLE} as s`, 's.app_name', 'a.name')
            .whereNot('a.state', 'draft')
            .orderBy('a.name')
            .select('a.name', 's.schedule')) as Array<{ name: string; schedule: string | null }>;
        // Most apps share BACKUP_SCHEDULE's expression: each expression's last time is worked out once.
        const slots = new Map<string, number | undefined>();
        const slotOf = (expression: string) => {
            if (!slots.has(expression)) slots.set(expression, previousCronTime(expression, at));
            return slots.get(expression);
        };
        const claimed: string[] = [];
        for (const { name, schedule } of rows) {
            const effective = this.#effective(schedule);
            const slot = effective ? slotOf(effective) : undefined;
            if (slot !== undefined && slot > since && (await this.#claim(name, slot))) {
                claimed.push(name);
            }
        }

        return claimed;
    }

    async #claim(app: string, slot: number): Promise<boolean> {
        await this.knex(TABLE).insert({ app_name: app, schedule: null, updated_at: now() }).onConflict('app_name').ignore();
        const won = await this.knex(TABLE).where({ app_name: app }).where('last_slot', '<', slot).update({ last_slot: slot });
        return won === 1;
    }
}

export const backupSchedules = defineService<BackupScheduleService>('backup-schedules', (owner) => new BackupScheduleService(owner));
