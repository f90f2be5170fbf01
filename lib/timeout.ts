/** Thrown by `withTimeout` when the work did not settle in time; its message names what was waited for. */
export class TimeoutError extends Error {}

/**
 * The work's result, or a TimeoutError naming `what` once `milliseconds` have passed. The timer is cleared when the
 * work settles first, so it never keeps the process alive. The work itself is not cancelled.
 */
export async function withTimeout<T>(work: Promise<T>, milliseconds: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError(`${what} did not answer within ${milliseconds} ms`)), milliseconds);
    });
    try {
        return await Promise.race([work, timeout]);
    } finally {
        clearTimeout(timer);
    }
}

/** The work's result, or `fallback` once `milliseconds` have passed. */
export async function withFallbackAfter<T>(work: Promise<T>, milliseconds: number, fallback: T): Promise<T> {
    try {
        return await withTimeout(work, milliseconds, 'work');
    } catch (error) {
        if (error instanceof TimeoutError) {
            return fallback;
        }

        throw error;
    }
}
