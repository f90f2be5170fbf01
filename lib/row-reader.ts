/**
 * One way to read database rows into records: each field names its column and how its cell is read. Cells come as
 * the two databases give them (a MariaDB BIGINT may be a string, a boolean 0 or 1), so each reader says what it wants.
 */
import { toRfc3339 } from './database.ts';

export type Row = Record<string, unknown>;
export type Cell<T> = (value: unknown) => T;

/** JSON text, parsed: the caller names what it holds. */
function json<T>(): Cell<T> {
    return (value) => JSON.parse(String(value)) as T;
}

/** A value the schema already constrains (an enum column): taken as the caller names it. */
function taken<T>(): Cell<T> {
    return (value) => value as T;
}

export const cell = {
    number: (value: unknown): number => Number(value),
    string: (value: unknown): string => String(value),
    boolean: (value: unknown): boolean => Boolean(value),
    /** Epoch milliseconds as RFC 3339 (the API's times). */
    time: (value: unknown): string => toRfc3339(Number(value)),
    json,
    as: taken,
};

/** NULL (or a column the query did not select) as null, anything else as `read` reads it. */
export function nullable<T>(read: Cell<T>): Cell<T | null> {
    return (value) => (value === null || value === undefined ? null : read(value));
}

/** A reader of rows into records of `T`: each field of `T` from its column, read by its cell reader. */
export function rowReader<T>(fields: { [K in keyof T]-?: readonly [column: string, read: Cell<T[K]>] }): (row: Row) => T {
    const entries = Object.entries(fields) as Array<[string, readonly [string, Cell<unknown>]]>;
    return (row) => Object.fromEntries(entries.map(([field, [column, read]]) => [field, read(row[column])])) as T;
}
