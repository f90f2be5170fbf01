const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** A size in bytes for people: 1024-based, one decimal below 10 of a unit ("3.4 MB", "512 KB"). */
export function bytes(value: number): string {
    let size = Math.max(0, value);
    let unit = 0;
    while (size >= 1024 && unit < UNITS.length - 1) {
        size /= 1024;
        unit += 1;
    }

    return `${unit === 0 || size >= 10 ? Math.round(size) : size.toFixed(1)} ${UNITS[unit]}`;
}

/** A CPU share as `docker stats` gives it (100 is one CPU's worth). */
export function percent(value: number): string {
    return `${value >= 10 ? Math.round(value) : value.toFixed(1)} %`;
}
