import { BadRequestError } from '../../../../lib/errors.ts';

/** Gitea's run and job statuses, as stored. */
export const STATUS = {
    unknown: 0,
    success: 1,
    failure: 2,
    cancelled: 3,
    skipped: 4,
    waiting: 5,
    running: 6,
    blocked: 7,
} as const;

export type StatusName = keyof typeof STATUS;

const DONE = new Set<number>([STATUS.success, STATUS.failure, STATUS.cancelled, STATUS.skipped]);

/** What the API's `status` filter means in stored statuses (GitHub's vocabulary, as Gitea maps it). */
const FILTERS: Record<string, number[]> = {
    pending: [STATUS.blocked],
    waiting: [STATUS.blocked],
    requested: [STATUS.blocked],
    action_required: [STATUS.blocked],
    queued: [STATUS.waiting],
    in_progress: [STATUS.running],
    completed: [STATUS.success, STATUS.failure, STATUS.skipped, STATUS.cancelled],
    failure: [STATUS.failure],
    success: [STATUS.success],
    skipped: [STATUS.skipped],
    neutral: [STATUS.skipped],
    cancelled: [STATUS.cancelled],
    timed_out: [STATUS.cancelled],
};

export function statusFilter(value: string | undefined): number[] | undefined {
    if (value === undefined || value === '') {
        return undefined;
    }

    const statuses = FILTERS[value];
    if (!statuses) {
        throw new BadRequestError(`invalid status ${value}`);
    }

    return statuses;
}

const CONCLUSIONS: Record<number, string> = {
    [STATUS.success]: 'success',
    [STATUS.failure]: 'failure',
    [STATUS.cancelled]: 'cancelled',
    [STATUS.skipped]: 'skipped',
};

/** Gitea's ToActionsStatus: `queued`, `waiting`, `in_progress`, or `completed` with a conclusion. */
export function apiStatus(status: number): { status: string; conclusion: string } {
    if (DONE.has(status)) {
        return { status: 'completed', conclusion: CONCLUSIONS[status] ?? '' };
    }

    const names: Record<number, string> = { [STATUS.waiting]: 'queued', [STATUS.blocked]: 'waiting', [STATUS.running]: 'in_progress' };
    return { status: names[status] ?? '', conclusion: '' };
}

export function isDone(status: number): boolean {
    return DONE.has(status);
}

/** A run's status from its jobs': still going while any job is; otherwise failure, cancelled, success or skipped. */
export function aggregateStatus(statuses: number[]): number {
    for (const pending of [STATUS.running, STATUS.waiting, STATUS.blocked]) {
        if (statuses.includes(pending)) {
            return pending;
        }
    }

    for (const outcome of [STATUS.failure, STATUS.cancelled, STATUS.success]) {
        if (statuses.includes(outcome)) {
            return outcome;
        }
    }

    return statuses.length > 0 ? STATUS.skipped : STATUS.unknown;
}
