/**
 * Cron expressions as Bree schedules them: five fields, or six with seconds first. One is checked as Bree checks a
 * job's cron (cron-validate, with seconds when there are six fields), and its times are worked out by Bree's own
 * scheduler (@breejs/later), in local time as Bree keeps it, so that what is shown is when the job runs.
 */
import later, { type ScheduleData } from '@breejs/later';
import cronValidate from 'cron-validate';

later.date.localTime();

/** Digits, `*`, `,`, `/` and `-` only, in five or six fields: no names, no `L`, nothing a shell would read. */
const CRON_FIELDS = /^[\d*,/-]+(?:\s+[\d*,/-]+){4,5}$/;
export const CRON_FORM = 'a cron expression such as "30 2 * * *" (five fields, or six with seconds first)';
/** Beyond this, a time is as good as never (`0 0 30 2 *` finds one five centuries on). */
const HORIZON_MS = 5 * 366 * 86_400_000;
const SECOND_MS = 1000;

export function hasSeconds(expression: string): boolean {
    return expression.trim().split(/\s+/).length === 6;
}

/** Why Bree would not take the expression as a job's cron (or it is not of the form above); undefined when it would. */
export function cronProblem(expression: string): string | undefined {
    const trimmed = expression.trim();
    if (!CRON_FIELDS.test(trimmed)) {
        return `must be ${CRON_FORM}`;
    }

    const checked = cronValidate.default(trimmed, hasSeconds(trimmed) ? { preset: 'default', override: { useSeconds: true } } : {});
    return checked.isValid() ? undefined : checked.getError().join('; ');
}

/** One schedule at every time of any of the expressions, as Bree takes it for a job (`interval`). */
export function cronSchedule(expressions: readonly string[]): ScheduleData {
    const schedules = expressions.flatMap((expression) => later.parse.cron(expression.trim(), hasSeconds(expression)).schedules);
    return { schedules, exceptions: [] };
}

function wholeSecond(time: number): Date {
    return new Date(Math.floor(time / SECOND_MS) * SECOND_MS);
}

/** The first time of any of the expressions after `after` (whole seconds); undefined when none comes within five years. */
export function nextCronTime(expressions: readonly string[], after: number): number | undefined {
    if (expressions.length === 0) return undefined;
    const found = later.schedule(cronSchedule(expressions)).next(1, wholeSecond(after + SECOND_MS));
    return found && found.getTime() - after <= HORIZON_MS ? found.getTime() : undefined;
}

/** The last time of the expression at or before `at`; undefined when there was none within five years. */
export function previousCronTime(expression: string, at: number): number | undefined {
    const found = later.schedule(cronSchedule([expression])).prev(1, wholeSecond(at));
    return found && at - found.getTime() <= HORIZON_MS ? found.getTime() : undefined;
}
