import { ValidationError } from '../../../../lib/errors.ts';
import { formatPath, type LineOf, type PathSegment } from './compose-path.ts';
import type { ComposeScalar } from './compose-types.ts';

export type Path = readonly PathSegment[];

/** Checks the types of plain data read from YAML or JSON; the first mistake is a ValidationError naming its path and line. */
export class ShapeReader {
    constructor(private readonly lineOf?: LineOf) {}

    fail(path: Path, message: string): never {
        const line = this.lineOf?.([...path]);
        const where = line === undefined ? formatPath(path) : `${formatPath(path)} (line ${line})`;
        throw new ValidationError(`${where}: ${message}`);
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

        return value.map((item, index) => this.string(item, [...path, index]));
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

    scalar(value: unknown, path: Path): ComposeScalar {
        if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
            return value as ComposeScalar;
        }

        this.fail(path, 'must be a string, a number, a boolean or empty');
    }

    /** A map whose values are written as text (labels, extra_hosts): numbers and booleans become strings. */
    textMap(value: unknown, path: Path): Record<string, string> {
        const map: Record<string, string> = {};
        for (const [key, item] of Object.entries(this.object(value, path))) {
            const scalar = this.scalar(item, [...path, key]);
            map[key] = scalar === null ? '' : String(scalar);
        }

        return map;
    }

    /** Checks the named optional fields of an object with the given readers, leaving its other keys as they were. */
    fields<T extends object>(value: unknown, path: Path, readers: FieldReaders): T {
        const object = { ...this.object(value, path) };
        for (const [key, read] of Object.entries(readers)) {
            if (object[key] !== undefined) {
                object[key] = read(object[key], [...path, key]);
            }
        }

        return object as T;
    }
}

export type FieldReaders = Record<string, (value: unknown, path: Path) => unknown>;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
