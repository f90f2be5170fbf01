/**
 * Image tags that are versions, and which of a repository's tags are newer in the same line. A tag is a version
 * when it reads `[v]MAJOR[.MINOR[.PATCH]][-suffix]` (`1.25`, `v2.4.1`, `16.2-alpine`); tags of one line share the
 * prefix, the suffix and the number of parts, so `16.2-alpine` moves to `16.3-alpine`, never to `16.3` or `16`.
 * Anything else (`latest`, `stable`, `bookworm`) is a moving tag, updated by its digest instead.
 */
export type VersionChange = 'patch' | 'minor' | 'major';

export interface VersionTag {
    prefix: string;
    numbers: number[];
    suffix: string;
}

export interface NewerTag {
    tag: string;
    change: VersionChange;
}

const VERSION_TAG = /^(v?)(\d{1,9}(?:\.\d{1,9}){0,2})(-[A-Za-z0-9][A-Za-z0-9._-]*)?$/;

export function parseVersionTag(tag: string): VersionTag | undefined {
    const match = VERSION_TAG.exec(tag);
    if (!match) {
        return undefined;
    }

    return { prefix: match[1] ?? '', numbers: (match[2] ?? '').split('.').map(Number), suffix: match[3] ?? '' };
}

function sameLine(a: VersionTag, b: VersionTag): boolean {
    return a.prefix === b.prefix && a.suffix === b.suffix && a.numbers.length === b.numbers.length;
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b` (same line). */
function compareNumbers(a: number[], b: number[]): number {
    for (const [index, part] of a.entries()) {
        const difference = part - (b[index] ?? 0);
        if (difference !== 0) return difference;
    }

    return 0;
}

function changeOf(from: number[], to: number[]): VersionChange {
    if (to[0] !== from[0]) return 'major';
    return to[1] !== from[1] ? 'minor' : 'patch';
}

/**
 * The tags newer than `current` in its line, newest first; other majors only when asked (a major version is where
 * apps break their data). None when `current` is not a version.
 */
export function newerTags(current: string, tags: readonly string[], options: { otherMajors?: boolean } = {}): NewerTag[] {
    const base = parseVersionTag(current);
    if (!base) {
        return [];
    }

    const newer: Array<{ tag: string; numbers: number[]; change: VersionChange }> = [];
    for (const tag of new Set(tags)) {
        const version = parseVersionTag(tag);
        if (!version || !sameLine(base, version) || compareNumbers(version.numbers, base.numbers) <= 0) continue;
        const change = changeOf(base.numbers, version.numbers);
        if (change === 'major' && !options.otherMajors) continue;
        newer.push({ tag, numbers: version.numbers, change });
    }

    return newer.sort((a, b) => compareNumbers(b.numbers, a.numbers)).map(({ tag, change }) => ({ tag, change }));
}

/** How far automatic updates go: none, patch versions, or minor versions too (never another major). */
export type AutomaticUpdates = 'off' | 'patch' | 'minor';

const AUTOMATIC_CHANGES: Record<AutomaticUpdates, ReadonlySet<string>> = {
    off: new Set(),
    patch: new Set(['patch', 'digest']),
    minor: new Set(['patch', 'minor', 'digest']),
};

/**
 * The update an automatic update takes: the newest of `updates` (newest first) within `mode`. A moving tag's new image
 * is taken in either mode: whoever chose a moving tag chose to follow it.
 */
export function automaticTarget<T extends { change: string }>(updates: readonly T[], mode: AutomaticUpdates): T | undefined {
    return updates.find((update) => AUTOMATIC_CHANGES[mode].has(update.change));
}
