/**
 * Query parameters Gitea's handlers read themselves (ctx.FormString and friends: the first value of a repeated
 * parameter), with Gitea's own answers to bad ones. Not a Swagger tag: the loader never reads this folder for handlers.
 */
import { BadRequestError, ValidationError } from '../../../../lib/errors.ts';
import { goQuote, parseGoRfc3339, trimGoSpace } from '../../../../lib/spec/go-parse.ts';

/** ctx.FormString: the first value given, or '' when there is none. */
export function formString(query: Record<string, unknown>, name: string): string {
    const value = query[name];
    const first: unknown = Array.isArray(value) ? value[0] : value;
    return first === undefined || first === null ? '' : String(first);
}

/** ctx.FormStrings: every value given. */
export function formStrings(query: Record<string, unknown>, name: string): string[] {
    const value = query[name];
    if (value === undefined || value === null) {
        return [];
    }

    return (Array.isArray(value) ? value : [value]).map(String);
}

export interface SortOrder {
    sort: string;
    order: 'asc' | 'desc';
}

/**
 * Gitea's utils.ResolveSortOrder: no `sort` is the caller's default (whatever `order` says); otherwise `order`
 * (default asc), then `sort`, must be known, or the answer is 422 `Invalid sort order: "x"` / `Invalid sort mode: "x"`.
 */
export function resolveSortOrder(query: Record<string, unknown>, sorts: readonly string[]): SortOrder | undefined {
    const sort = formString(query, 'sort');
    if (sort === '') {
        return undefined;
    }

    const order = formString(query, 'order') || 'asc';
    if (order !== 'asc' && order !== 'desc') {
        throw new ValidationError(`Invalid sort order: ${goQuote(order)}`);
    }

    if (!sorts.includes(sort)) {
        throw new ValidationError(`Invalid sort mode: ${goQuote(sort)}`);
    }

    return { sort, order };
}

/**
 * An RFC 3339 time parameter as Gitea's handlers read one: trimmed, empty or the zero time meaning none, in Unix
 * seconds; a malformed one is refused with Go's time.Parse error, at the status the operation answers it with.
 */
export function formTime(query: Record<string, unknown>, name: string, status: 400 | 422): number | undefined {
    const value = trimGoSpace(formString(query, name));
    if (value === '') {
        return undefined;
    }

    const parsed = parseGoRfc3339(value);
    if ('error' in parsed) {
        throw status === 400 ? new BadRequestError(parsed.error) : new ValidationError(parsed.error);
    }

    return parsed.isZero ? undefined : parsed.unixSeconds;
}

/** The first and the last millisecond of a Unix second: Gitea compares times to the second. */
export function secondStart(unixSeconds: number): number {
    return unixSeconds * 1000;
}

export function secondEnd(unixSeconds: number): number {
    return unixSeconds * 1000 + 999;
}
