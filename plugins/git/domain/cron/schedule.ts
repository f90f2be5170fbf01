/**
 * Gitea's schedule specs (`@midnight`, `@every 72h`, cron expressions of 5 or 6 fields) turned into what Bree
 * takes, plus the times Bree does not tell: a cron expression's next and previous occurrences.
 */
export interface Schedule {
    cron?: string;
    hasSeconds?: boolean;
    interval?: number;
}

const DESCRIPTORS: Record<string, string> = {
    '@yearly': '0 0 1 1 *',
    '@annually': '0 0 1 1 *',
    '@monthly': '0 0 1 * *',
    '@weekly': '0 0 * * 0',
    '@daily': '0 0 * * *',
    '@midnight': '0 0 * * *',
    '@hourly': '0 * * * *',
};

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `@every 1h30m` in milliseconds. */
function durationMs(text: string): number {
    let total = 0;
    for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) {
        total += Number(amount) * (UNIT_MS[unit ?? 's'] ?? 0);
    }

    return total;
}

export function parseSchedule(spec: string): Schedule {
    const trimmed = spec.trim();
    if (trimmed.startsWith('@every')) {
        const interval = durationMs(trimmed.slice('@every'.length));
        if (interval <= 0) {
            throw new Error(`${spec}: the interval must be positive`);
        }

        return { interval };
    }

    const cron = DESCRIPTORS[trimmed] ?? trimmed;
    const fields = cron.split(/\s+/);
    if (fields.length !== 5 && fields.length !== 6) {
        throw new Error(`${spec}: a cron expression has 5 fields (or 6 with seconds)`);
    }

    parseFields(fields);
    return { cron: fields.join(' '), hasSeconds: fields.length === 6 };
}

interface Fields {
    seconds: number[];
    minutes: number[];
    hours: number[];
    days: Set<number>;
    months: Set<number>;
    weekdays: Set<number>;
    anyDay: boolean;
    anyWeekday: boolean;
}

function values(field: string, min: number, max: number): number[] {
    const found = new Set<number>();
    for (const part of field.split(',')) {
        const [range = '*', stepText] = part.split('/');
        const step = stepText === undefined ? 1 : Number(stepText);
        const everything = range === '*' || range === '?';
        const [from, to] = everything ? [min, max] : range.split('-').map(Number);
        const start = from ?? min;
        const end = everything || range.includes('-') || stepText !== undefined ? (to ?? max) : start;
        if (![start, end, step].every(Number.isInteger) || step < 1 || start < min || end > max || start > end) {
            throw new Error(`bad cron field ${field}`);
        }

        for (let value = start; value <= end; value += step) {
            found.add(value);
        }
    }

    return [...found].sort((a, b) => a - b);
}

function parseFields(fields: string[]): Fields {
    const [second, minute, hour, day, month, weekday] = fields.length === 6 ? fields : ['0', ...fields];
    return {
        seconds: values(second ?? '0', 0, 59),
        minutes: values(minute ?? '*', 0, 59),
        hours: values(hour ?? '*', 0, 23),
        days: new Set(values(day ?? '*', 1, 31)),
        months: new Set(values(month ?? '*', 1, 12)),
        weekdays: new Set(values(weekday ?? '*', 0, 7).map((value) => value % 7)),
        anyDay: day === '*' || day === '?',
        anyWeekday: weekday === '*' || weekday === '?',
    };
}

/** Cron's rule: when both day fields are restricted, either may match. */
function dayMatches(fields: Fields, date: Date): boolean {
    if (!fields.months.has(date.getMonth() + 1)) {
        return false;
    }

    const byDay = fields.days.has(date.getDate());
    const byWeekday = fields.weekdays.has(date.getDay());
    if (fields.anyDay || fields.anyWeekday) {
        return byDay && byWeekday;
    }

    return byDay || byWeekday;
}

const SEARCH_DAYS = 366 * 5;

/** The occurrences of one day (local time, as Bree schedules), in order. */
function occurrencesOn(fields: Fields, day: Date): number[] {
    const times: number[] = [];
    for (const hour of fields.hours) {
        for (const minute of fields.minutes) {
            for (const second of fields.seconds) {
                times.push(new Date(day.getFullYear(), day.getMonth(), day.getDate(), hour, minute, second).getTime());
            }
        }
    }

    return times;
}

/** The first occurrence after `after`, or undefined when none comes within five years. */
export function nextOccurrence(cron: string, after: number): number | undefined {
    const fields = parseFields(cron.split(/\s+/));
    const start = new Date(after);
    for (let offset = 0; offset < SEARCH_DAYS; offset += 1) {
        const day = new Date(start.getFullYear(), start.getMonth(), start.getDate() + offset);
        if (dayMatches(fields, day)) {
            const found = occurrencesOn(fields, day).find((time) => time > after);
            if (found !== undefined) {
                return found;
            }
        }
    }

    return undefined;
}

/** The last occurrence at or before `at`. */
export function previousOccurrence(cron: string, at: number): number | undefined {
    const fields = parseFields(cron.split(/\s+/));
    const start = new Date(at);
    for (let offset = 0; offset < SEARCH_DAYS; offset += 1) {
        const day = new Date(start.getFullYear(), start.getMonth(), start.getDate() - offset);
        if (dayMatches(fields, day)) {
            const found = occurrencesOn(fields, day)
                .reverse()
                .find((time) => time <= at);
            if (found !== undefined) {
                return found;
            }
        }
    }

    return undefined;
}

/**
 * The tick a scheduled run belongs to, the same on every server: a cron occurrence, or for intervals the
 * interval-long window since the epoch. A tick's run is claimed once in the database.
 */
export function slotOf(schedule: Schedule, at: number): number {
    if (schedule.interval) {
        return Math.floor(at / schedule.interval) * schedule.interval;
    }

    return previousOccurrence(schedule.cron ?? '', at) ?? at;
}

/** When Bree runs the job next: the cron's next occurrence, or the next interval since Bree started. */
export function nextRunAt(schedule: Schedule, startedAt: number | undefined, at: number): number | undefined {
    if (schedule.interval) {
        if (startedAt === undefined) {
            return undefined;
        }

        return startedAt + (Math.floor((at - startedAt) / schedule.interval) + 1) * schedule.interval;
    }

    return nextOccurrence(schedule.cron ?? '', at);
}
