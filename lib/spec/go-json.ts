/**
 * Go's encoding/json as Gitea's binder uses it (json.NewDecoder(body).Decode(&option)): the same syntax errors
 * (`invalid character 'x' looking for beginning of value`, `unexpected EOF`), the same type errors
 * (`json: cannot unmarshal number into Go struct field CreateOrgOption.username of type string`), the same leniency
 * (keys matched without regard to case, unknown keys and anything after the first value ignored, `null` a no-op).
 */
import { goQuote, parseGoInt, parseGoRfc3339 } from './go-parse.ts';
import type { JsonSchema, SchemaConverter } from './schema-to-joi.ts';

/** A number as written, so that `12.5` or `1e3` can be refused for an integer as Go refuses them. */
class GoNumber {
    constructor(readonly raw: string) {}
}

type GoJson = null | boolean | string | GoNumber | GoJson[] | Map<string, GoJson>;

/** Go's limit on nesting, past which the scanner stops. */
const MAX_DEPTH = 10_000;

export class GoJsonError extends Error {}

/** Go's quoteChar: the offending byte in single quotes. */
function quoteChar(byte: string): string {
    if (byte === "'") {
        return "'\\''";
    }

    return byte === '"' ? `'"'` : `'${goQuote(byte).slice(1, -1)}'`;
}

const SPACE = new Set([' ', '\t', '\r', '\n']);
const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '\\': '\\', '/': '/', '"': '"' };

type Frame = { value: Map<string, GoJson>; key: string } | { value: GoJson[] };

/** Reads the first JSON value of a body as Go's Decoder does; `undefined` for a body of white space only (io.EOF). */
export function parseGoJson(body: Buffer): GoJson | undefined {
    return new GoJsonReader(body.toString('latin1')).read();
}

/** Walks bytes (one character per byte) through the states of Go's scanner, with its error texts. */
class GoJsonReader {
    #at = 0;
    readonly #text: string;

    constructor(text: string) {
        this.#text = text;
    }

    read(): GoJson | undefined {
        this.#skipSpace();
        if (this.#at >= this.#text.length) {
            return undefined;
        }

        const stack: Frame[] = [];
        let state: 'value' | 'valueOrEnd' | 'keyOrEnd' | 'key' | 'afterKey' | 'afterValue' = 'value';
        for (;;) {
            this.#skipSpace();
            const char = this.#peek();
            const top = stack.at(-1);
            let done: GoJson;
            if ((state === 'valueOrEnd' && char === ']') || (state === 'keyOrEnd' && char === '}')) {
                this.#at += 1;
                stack.pop();
                done = top?.value ?? null;
            } else if (state === 'value' || state === 'valueOrEnd') {
                if (char === '{' || char === '[') {
                    if (stack.length >= MAX_DEPTH) {
                        this.#fail(char, 'exceeded max depth');
                    }

                    this.#at += 1;
                    stack.push(char === '{' ? { value: new Map(), key: '' } : { value: [] });
                    state = char === '{' ? 'keyOrEnd' : 'valueOrEnd';
                    continue;
                }

                done = this.#scalar(char);
            } else if (state === 'keyOrEnd' || state === 'key') {
                if (char !== '"') {
                    this.#fail(char, 'looking for beginning of object key string');
                }

                (top as { key: string }).key = this.#string();
                state = 'afterKey';
                continue;
            } else if (state === 'afterKey') {
                if (char !== ':') {
                    this.#fail(char, 'after object key');
                }

                this.#at += 1;
                state = 'value';
                continue;
            } else {
                const isObject = top !== undefined && !Array.isArray(top.value);
                if (char === ',') {
                    this.#at += 1;
                    state = isObject ? 'key' : 'value';
                    continue;
                }

                if (char !== (isObject ? '}' : ']')) {
                    this.#fail(char, isObject ? 'after object key:value pair' : 'after array element');
                }

                this.#at += 1;
                stack.pop();
                done = top?.value ?? null;
            }

            const parent = stack.at(-1);
            if (!parent) {
                // Go's Decoder reads one value: whatever follows it is left unread.
                return done;
            }

            if (Array.isArray(parent.value)) {
                parent.value.push(done);
            } else {
                // A repeated key counts where it last appears, as Go assigns each in turn.
                const frame = parent as { value: Map<string, GoJson>; key: string };
                frame.value.delete(frame.key);
                frame.value.set(frame.key, done);
            }

            state = 'afterValue';
        }
    }

    #scalar(char: string): GoJson {
        if (char === '"') {
            return this.#string();
        }

        if (char === '-' || (char >= '0' && char <= '9')) {
            return this.#number();
        }

        const literal = { t: 'true', f: 'false', n: 'null' }[char];
        if (literal === undefined) {
            return this.#fail(char, 'looking for beginning of value');
        }

        for (const expected of literal.slice(1)) {
            this.#at += 1;
            const next = this.#peek();
            if (next !== expected) {
                this.#fail(next, `in literal ${literal} (expecting '${expected}')`);
            }
        }

        this.#at += 1;
        return literal === 'null' ? null : literal === 'true';
    }

    #number(): GoNumber {
        const start = this.#at;
        if (this.#peek() === '-') {
            this.#at += 1;
        }

        const first = this.#peek();
        if (first === '0') {
            this.#at += 1;
        } else if (first >= '1' && first <= '9') {
            this.#digits();
        } else {
            this.#fail(first, 'in numeric literal');
        }

        if (this.#peekOrEnd() === '.') {
            this.#at += 1;
            this.#requireDigit('after decimal point in numeric literal');
        }

        const exponent = this.#peekOrEnd();
        if (exponent === 'e' || exponent === 'E') {
            this.#at += 1;
            const sign = this.#peek();
            if (sign === '+' || sign === '-') {
                this.#at += 1;
            }

            this.#requireDigit('in exponent of numeric literal');
        }

        return new GoNumber(this.#text.slice(start, this.#at));
    }

    #requireDigit(context: string): void {
        const char = this.#peek();
        if (!(char >= '0' && char <= '9')) {
            this.#fail(char, context);
        }

        this.#digits();
    }

    #digits(): void {
        while (/[0-9]/.test(this.#text[this.#at] ?? '')) {
            this.#at += 1;
        }
    }

    /** A string literal, its escapes decoded as Go decodes them (a lone surrogate is U+FFFD). */
    #string(): string {
        this.#at += 1;
        const bytes: number[] = [];
        for (;;) {
            const char = this.#peek();
            this.#at += 1;
            if (char === '"') {
                return Buffer.from(bytes).toString('utf8');
            }

            if (char < ' ') {
                this.#fail(char, 'in string literal');
            }

            if (char !== '\\') {
                bytes.push(char.charCodeAt(0));
                continue;
            }

            const escape = this.#peek();
            this.#at += 1;
            if (escape === 'u') {
                bytes.push(...Buffer.from(this.#unicodeEscape(), 'utf8'));
            } else if (ESCAPES[escape] !== undefined) {
                bytes.push(ESCAPES[escape].charCodeAt(0));
            } else {
                this.#fail(escape, 'in string escape code');
            }
        }
    }

    #unicodeEscape(): string {
        const unit = this.#hex4();
        if (unit < 0xd800 || unit > 0xdfff) {
            return String.fromCharCode(unit);
        }

        const low = /^\\u([0-9a-fA-F]{4})/.exec(this.#text.slice(this.#at, this.#at + 6));
        const lowUnit = low ? Number.parseInt(low[1] as string, 16) : 0;
        if (unit < 0xdc00 && lowUnit >= 0xdc00 && lowUnit <= 0xdfff) {
            this.#at += 6;
            return String.fromCharCode(unit, lowUnit);
        }

        return '\ufffd';
    }

    #hex4(): number {
        let value = 0;
        for (let index = 0; index < 4; index += 1) {
            const char = this.#peek();
            if (!/[0-9a-fA-F]/.test(char)) {
                this.#fail(char, 'in \\u hexadecimal character escape');
            }

            value = value * 16 + Number.parseInt(char, 16);
            this.#at += 1;
        }

        return value;
    }

    #skipSpace(): void {
        while (this.#at < this.#text.length && SPACE.has(this.#text[this.#at] as string)) {
            this.#at += 1;
        }
    }

    /** The next byte; a value that ends with the body is cut short, which Go reports as `unexpected EOF`. */
    #peek(): string {
        if (this.#at >= this.#text.length) {
            throw new GoJsonError('unexpected EOF');
        }

        return this.#text[this.#at] as string;
    }

    /** The next byte, or '' at the end: a number may end the body. */
    #peekOrEnd(): string {
        return this.#text[this.#at] ?? '';
    }

    #fail(char: string, context: string): never {
        throw new GoJsonError(`invalid character ${quoteChar(char)} ${context}`);
    }
}

/** A Go type as the decoder sees it: its kind, and its name as errors print it. */
interface GoType {
    kind: 'string' | 'int' | 'bool' | 'float' | 'time' | 'slice' | 'map' | 'any';
    name: string;
    elem?: GoType;
}

function goType(schema: JsonSchema, converter: SchemaConverter): GoType {
    const named = (type: GoType): GoType => (schema['x-go-type'] ? { ...type, name: schema['x-go-type'] } : type);
    if (schema.$ref) {
        const resolved = converter.resolve(schema);
        const type = goType(resolved, converter);
        return type.kind === 'map' ? { ...type, name: `structs.${schema.$ref.replace(/^#\/definitions\//, '')}` } : type;
    }

    switch (schema.type) {
        case 'string':
            return named(schema.format === 'date-time' ? { kind: 'time', name: 'time.Time' } : { kind: 'string', name: 'string' });
        case 'integer':
            return named({ kind: 'int', name: schema.format === 'int32' ? 'int32' : 'int64' });
        case 'number':
            return named({ kind: 'float', name: 'float64' });
        case 'boolean':
            return named({ kind: 'bool', name: 'bool' });
        case 'array': {
            const elem = goType(schema.items ?? {}, converter);
            return named({ kind: 'slice', name: `[]${elem.name}`, elem });
        }

        default:
            if (typeof schema.additionalProperties === 'object') {
                const elem = goType(schema.additionalProperties, converter);
                return named({ kind: 'map', name: `map[string]${elem.name}`, elem });
            }

            return { kind: 'any', name: 'interface {}' };
    }
}

function jsonKind(value: GoJson): string {
    if (value instanceof GoNumber) {
        return 'number';
    }

    if (value instanceof Map) {
        return 'object';
    }

    if (Array.isArray(value)) {
        return 'array';
    }

    return typeof value === 'boolean' ? 'bool' : 'string';
}

function plain(value: GoJson): unknown {
    if (value instanceof GoNumber) {
        return Number(value.raw);
    }

    if (value instanceof Map) {
        return Object.fromEntries([...value].map(([key, item]) => [key, plain(item)]));
    }

    return Array.isArray(value) ? value.map(plain) : value;
}

const ZERO: Partial<Record<GoType['kind'], unknown>> = { string: '', int: 0, float: 0, bool: false };

/**
 * Decodes the first JSON value of a body into the Go struct a body schema describes, as json.Decoder.Decode does:
 * an object's keys matched to fields without regard to case (the last one given wins), unknown keys ignored, `null`
 * leaving a field unset. Returns the plain object, keyed by the schema's names, or throws a GoJsonError with Go's
 * text for the first error Go would return.
 */
export function decodeGoJson(body: Buffer, schema: JsonSchema, converter: SchemaConverter): Record<string, unknown> {
    const value = parseGoJson(body);
    const structName = (schema.$ref ?? '').replace(/^#\/definitions\//, '');
    const resolved = converter.resolve(schema);
    if (value === undefined || value === null) {
        return {};
    }

    if (!(value instanceof Map)) {
        throw new GoJsonError(`json: cannot unmarshal ${jsonKind(value)} into Go value of type structs.${structName}`);
    }

    const decoder = new StructDecoder(structName, converter);
    const result = decoder.decode(value, resolved.properties ?? {});
    const error = decoder.fatal ?? decoder.saved;
    if (error) {
        throw new GoJsonError(error);
    }

    return result;
}

const SKIP = Symbol('skip');

class StructDecoder {
    /** The first type error: Go notes it and decodes the rest. */
    saved: string | undefined;
    /** An error a type's own UnmarshalJSON returned (time.Time): Go stops there, and it wins over a noted one. */
    fatal: string | undefined;

    constructor(
        readonly structName: string,
        readonly converter: SchemaConverter,
    ) {}

    decode(object: Map<string, GoJson>, properties: Record<string, JsonSchema>): Record<string, unknown> {
        const exact = new Map(Object.keys(properties).map((name) => [name, name]));
        const folded = new Map(Object.keys(properties).map((name) => [name.toLowerCase(), name]));
        const result: Record<string, unknown> = {};
        for (const [key, item] of object) {
            const name = exact.get(key) ?? folded.get(key.toLowerCase());
            if (name === undefined) {
                continue;
            }

            const decoded = this.#value(item, goType(properties[name] as JsonSchema, this.converter), name);
            if (this.fatal) {
                return result;
            }

            if (decoded !== SKIP) {
                result[name] = decoded;
            }
        }

        return result;
    }

    #value(value: GoJson, type: GoType, field: string): unknown {
        if (value === null) {
            return SKIP;
        }

        const mismatch = (description = jsonKind(value)): symbol => {
            this.saved ??= `json: cannot unmarshal ${description} into Go struct field ${this.structName}.${field} of type ${type.name}`;
            return SKIP;
        };
        switch (type.kind) {
            case 'string':
                return typeof value === 'string' ? value : mismatch();
            case 'bool':
                return typeof value === 'boolean' ? value : mismatch();
            case 'int': {
                if (!(value instanceof GoNumber)) {
                    return mismatch();
                }

                const parsed = parseGoInt(value.raw);
                const fits = parsed !== undefined && (type.name !== 'int32' || Math.abs(parsed) <= 2 ** 31);
                return fits ? parsed : mismatch(`number ${value.raw}`);
            }

            case 'float':
                return value instanceof GoNumber && Number.isFinite(Number(value.raw)) ? Number(value.raw) : mismatch();
            case 'time':
                return this.#time(value);
            case 'slice':
                return Array.isArray(value) ? this.#elements(value, type.elem as GoType, field) : mismatch();
            case 'map':
                return value instanceof Map ? this.#entries(value, type.elem as GoType, field) : mismatch();
            default:
                return plain(value);
        }
    }

    /** time.Time's UnmarshalJSON: a JSON string holding an RFC 3339 time, or Go's own error. */
    #time(value: GoJson): unknown {
        if (typeof value !== 'string') {
            this.fatal = 'Time.UnmarshalJSON: input is not a JSON string';
            return SKIP;
        }

        const parsed = parseGoRfc3339(value);
        if ('error' in parsed) {
            this.fatal = parsed.error;
            return SKIP;
        }

        return value;
    }

    /** A list's `null` items are the element's zero value; a refused item leaves the zero value too. */
    #elements(items: GoJson[], elem: GoType, field: string): unknown[] {
        return items.map((item) => {
            const decoded = this.#value(item, elem, field);
            return decoded === SKIP ? ZERO[elem.kind] : decoded;
        });
    }

    #entries(entries: Map<string, GoJson>, elem: GoType, field: string): Record<string, unknown> {
        const pairs = [...entries].map(([key, item]) => {
            const decoded = this.#value(item, elem, field);
            return [key, decoded === SKIP ? ZERO[elem.kind] : decoded];
        });
        return Object.fromEntries(pairs);
    }
}
