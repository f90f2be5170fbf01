/**
 * Polls `check` until it returns a value other than undefined, null or false, and returns that value; fails with
 * `what` in the message after `timeoutMs`. Tests wait for conditions with this, never with fixed sleeps.
 */
export async function waitUntil<T>(
    what: string,
    check: () => T | undefined | null | false | Promise<T | undefined | null | false>,
    { timeoutMs = 15_000, intervalMs = 25 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = await check();
        if (value !== undefined && value !== null && value !== false) {
            return value;
        }

        if (Date.now() > deadline) {
            throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
        }

        await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
}
