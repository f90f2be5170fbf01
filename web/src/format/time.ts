const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
];

/** "5 minutes ago", or the date for anything older than a week. */
export function relativeTime(iso: string | null | undefined, now: number = Date.now()): string {
    if (!iso) {
        return '';
    }

    const at = Date.parse(iso);
    if (Number.isNaN(at)) {
        return iso;
    }

    const elapsed = at - now;
    if (Math.abs(elapsed) > 7 * 86_400_000) {
        return DATE_TIME.format(at);
    }

    for (const [unit, size] of UNITS) {
        if (Math.abs(elapsed) >= size) {
            return RELATIVE.format(Math.round(elapsed / size), unit);
        }
    }

    return 'just now';
}

export function dateTime(iso: string | null | undefined): string {
    if (!iso) {
        return '';
    }

    const at = Date.parse(iso);
    return Number.isNaN(at) ? iso : DATE_TIME.format(at);
}

/** How long a run took (or has taken so far). */
export function duration(startIso: string, endIso: string | null, now: number = Date.now()): string {
    const seconds = Math.max(0, Math.round(((endIso ? Date.parse(endIso) : now) - Date.parse(startIso)) / 1000));
    if (Number.isNaN(seconds)) {
        return '';
    }

    return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
