import { ValidationError } from '../../../../lib/errors.ts';
import { formatPath, type LineOf, type PathSegment } from './compose-path.ts';
import type { ComposeScalar } from './compose-types.ts';

export type Path = readonly PathSegment[];

/** A mistake in the shape of compose data: the path of the value, its line in the text when known, what is wrong. */
export interface ShapeProblem {
    path: PathSegment[];
    line?: number;
    message: string;
}

/** `services.web.ports (line 3): must be a list`: how a problem is named in a message. */
export function describeProblem(problem: ShapeProblem): string {
    const where = formatPath(problem.path);
    return `${problem.line === undefined ? where : `${where} (line ${problem.line})`}: ${problem.message}`;
}

/** Abandons the read of a value with a recorded problem; the nearest `attempt` goes on with the next value. */
class Abandoned extends Error {}

/**
 * Checks the types of plain data read from YAML or JSON. Every mistake is recorded in `problems` with its path
 * and line: a value with a mistake is abandoned, and reading goes on with the next field, entry or item, so that
 * one pass finds them all.
 */
export class ShapeReader {
    readonly problems: ShapeProblem[] = [];

    constructor(private readonly lineOf?: LineOf) {}

    /** Records a problem and goes on reading the value. */
    note(path: Path, message: string): void {
        const line = this.lineOf?.([...path]);
        this.problems.push({ path: [...path], ...(line === undefined ? {} : { line }), message });
    }

    /** Records a problem and abandons the value. */
    fail(path: Path, message: string): never {
        this.note(path, message);
        throw new Abandoned();
    }

    /** Reads one value; when it is abandoned, its problems stay recorded and the result is `undefined`. */
    attempt<T>(read: () => T): T | undefined {
        try {
            return read();
        } catch (error) {
            if (error instanceof Abandoned) {
                return undefined;
            }

            throw error;
        }
    }

    /** Runs a whole read; the first problem it recorded is a ValidationError naming its path and line. */
    strictly<T>(read: () => T): T {
        const result = this.attempt(read);
        const [first] = this.problems;
        if (first !== undefined) {
            throw new ValidationError(describeProblem(first));
        }

        // Only a recorded problem abandons a value, so without one the read came to its end.
        return result as T;
    }

    object(value: unknown, path: Path): Record<string, unknown> {
        if (!isPlainObject(value)) {
            this.fail(path, 'must be a mapping');
        }

        return value;
    }

    string(value: unknown, path: Path): string {
        if (typeof value !== 'string') {
            this.fail(path, 'must be a string');
        }

        return value;
    }

    number(value: unknown, path: Path): number {
        if (typeof value !== 'number' || !Number.isFinite(value)) {
            this.fail(path, 'must be a number');
        }

        return value;
    }

    boolean(value: unknown, path: Path): boolean {
        if (typeof value !== 'boolean') {
            this.fail(path, 'must be true or false');
        }

        return value;
    }

    stringList(value: unknown, path: Path): string[] {
        if (!Array.isArray(value)) {
            this.fail(path, 'must be a list of strings');
        }

        return this.items(value, path, (item, at) => this.string(item, at));
    }

    stringOrList(value: unknown, path: Path): string | string[] {
        return typeof value === 'string' ? value : this.stringList(value, path);
    }

    list(value: unknown, path: Path): unknown[] {
        if (!Array.isArray(value)) {
            this.fail(path, 'must be a list');
        }

        return value;
    }

    /** Reads each item of a list; when any is abandoned, so is the list, after every item has been read. */
    items<T>(value: unknown, path: Path, read: (item: unknown, path: Path) => T): T[] {
        return this.allOf(
            this.list(value, path).map((item, index) => ({ key: index, item })),
            path,
            (item, at) => read(item, at),
        );
    }

    /** Reads each value of a mapping, keeping its keys; when any is abandoned, so is the mapping, after every one has been read. */
    entries<T>(value: unknown, path: Path, read: (item: unknown, path: Path, key: string) => T): Record<string, T> {
        const entries = Object.entries(this.object(value, path)).map(([key, item]) => ({ key, item }));
        const values = this.allOf(entries, path, (item, at, key) => read(item, at, String(key)));
        return Object.fromEntries(entries.map(({ key }, index) => [key, values[index] as T]));
    }

    scalar(value: unknown, path: Path): ComposeScalar {
        if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
            return value as ComposeScalar;
        }

        this.fail(path, 'must be a string, a number, a boolean or empty');
    }

    /** A map whose values are written as text (labels, extra_hosts): numbers and booleans become strings. */
    textMap(value: unknown, path: Path): Record<string, string> {
        return this.entries(value, path, (item, at) => {
            const scalar = this.scalar(item, at);
            return scalar === null ? '' : String(scalar);
        });
    }

    /**
     * Checks the named optional fields of an object with the given readers, leaving its other keys as they were,
     * and that the required ones are there. Every field is read before an object with a mistake is abandoned.
     */
    fields<T extends object>(value: unknown, path: Path, readers: FieldReaders, required: Record<string, string> = {}): T {
        const raw = this.object(value, path);
        const object = { ...raw };
        const before = this.problems.length;
        for (const [key, read] of Object.entries(readers)) {
            if (object[key] !== undefined) {
                object[key] = this.attempt(() => read(object[key], [...path, key]));
            }
        }

        for (const [key, message] of Object.entries(required)) {
            if (raw[key] === undefined) {
                this.note([...path, key], message);
            }
        }

        if (this.problems.length > before) {
            throw new Abandoned();
        }

        return object as T;
    }

    /** Reads every item; abandons the whole when any item was abandoned. */
    private allOf<T>(
        items: Array<{ key: PathSegment; item: unknown }>,
        path: Path,
        read: (item: unknown, path: Path, key: PathSegment) => T,
    ): T[] {
        let abandoned = false;
        const values = items.map(({ key, item }) => {
            const result = this.attempt(() => ({ value: read(item, [...path, key], key) }));
            abandoned ||= result === undefined;
            return result?.value as T;
        });
        if (abandoned) {
            throw new Abandoned();
        }

        return values;
    }
}

export type FieldReaders = Record<string, (value: unknown, path: Path) => unknown>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
