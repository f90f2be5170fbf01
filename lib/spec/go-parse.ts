/**
 * Go's own parsing of request values, with Go's error texts, for the APIs that answer as a Go server does (Gitea):
 * strconv.Quote (`%q`), strconv.ParseBool and ParseInt as its form binder uses them, url.ParseQuery, and
 * time.Parse(time.RFC3339, ...).
 */

/** Go's unicode.IsSpace: not JavaScript's white space, which has U+FEFF and lacks U+0085. */
const GO_SPACE = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const GO_TRIM = new RegExp(`^${GO_SPACE}+|${GO_SPACE}+$`, 'g');

/** Go's strings.TrimSpace. */
export function trimGoSpace(value: string): string {
    return value.replace(GO_TRIM, '');
}

const NAMED_ESCAPES: Record<string, string> = {
    '\x07': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
};

/** Go's strconv.Quote, as `%q` prints a string: printable characters as they are, the rest escaped. */
export function goQuote(value: string): string {
    let quoted = '"';
    for (const char of value) {
        const code = char.codePointAt(0) ?? 0;
        if (char === '"' || char === '\\') {
            quoted += `\\${char}`;
        } else if (NAMED_ESCAPES[char]) {
            quoted += NAMED_ESCAPES[char];
        } else if (code < 0x20 || code === 0x7f) {
            quoted += `\\x${code.toString(16).padStart(2, '0')}`;
        } else if (char === ' ' || /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(char)) {
            quoted += char;
        } else if (code < 0x10000) {
            quoted += `\\u${code.toString(16).padStart(4, '0')}`;
        } else {
            quoted += `\\U${code.toString(16).padStart(8, '0')}`;
        }
    }

    return `${quoted}"`;
}

/** strconv.ParseBool; `undefined` when Go would refuse the text. */
export function parseGoBool(value: string): boolean | undefined {
    if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) {
        return true;
    }

    return ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value) ? false : undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(value, 10, 64); `undefined` when Go would refuse the text. */
export function parseGoInt(value: string): number | undefined {
    if (!/^[+-]?\d+$/.test(value)) {
        return undefined;
    }

    const parsed = BigInt(value);
    return parsed < INT64_MIN || parsed > INT64_MAX ? undefined : Number(parsed);
}

export interface GoQuery {
    values: Map<string, string[]>;
    /** The first error url.ParseQuery met, in Go's words; the pairs it could read are in `values` all the same. */
    error?: string;
}

/** url.ParseQuery on a form body: `+` is a space, a bad escape or a semicolon is an error that skips its pair. */
export function parseGoQuery(text: string): GoQuery {
    const values = new Map<string, string[]>();
    let error: string | undefined;
    for (const pair of text.split('&')) {
        if (pair.includes(';')) {
            error ??= 'invalid semicolon separator in query';
            continue;
        }

        if (pair === '') {
            continue;
        }

        const equals = pair.indexOf('=');
        const key = queryUnescape(equals < 0 ? pair : pair.slice(0, equals));
        const value = queryUnescape(equals < 0 ? '' : pair.slice(equals + 1));
        const failed = [key, value].find((part) => part.error !== undefined)?.error;
        if (failed !== undefined) {
            error ??= failed;
            continue;
        }

        values.set(key.text, [...(values.get(key.text) ?? []), value.text]);
    }

    return { values, error };
}

function queryUnescape(text: string): { text: string; error?: string } {
    const bytes: number[] = [];
    for (let index = 0; index < text.length; index += 1) {
        const char = text[index] as string;
        if (char === '%') {
            const hex = text.slice(index + 1, index + 3);
            if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
                return { text: '', error: `invalid URL escape ${goQuote(text.slice(index, index + 3))}` };
            }

            bytes.push(Number.parseInt(hex, 16));
            index += 2;
        } else {
            bytes.push(...Buffer.from(char === '+' ? ' ' : char, 'utf8'));
        }
    }

    return { text: Buffer.from(bytes).toString('utf8') };
}

export const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';

export type GoTime = { unixSeconds: number; isZero: boolean } | { error: string };

/** The zero time.Time, 0001-01-01T00:00:00Z, in Unix seconds. */
const GO_ZERO_UNIX = -62135596800;

/** time.Parse's quoting: every byte outside printable ASCII as `\xNN`, quotes and backslashes escaped. */
function timeQuote(bytes: string): string {
    let quoted = '"';
    for (const char of bytes) {
        const code = char.charCodeAt(0);
        if (code < 0x20 || code >= 0x80) {
            quoted += `\\x${code.toString(16).padStart(2, '0')}`;
        } else {
            quoted += char === '"' || char === '\\' ? `\\${char}` : char;
        }
    }

    return `${quoted}"`;
}

class TimeParseError extends Error {}

const isDigit = (text: string, index: number): boolean => /[0-9]/.test(text[index] ?? '');

/** Go's getnum: one or two digits, exactly two when `fixed`. */
function getnum(text: string, fixed: boolean): [number, string] | undefined {
    if (!isDigit(text, 0)) {
        return undefined;
    }

    if (!isDigit(text, 1)) {
        return fixed ? undefined : [Number(text[0]), text.slice(1)];
    }

    return [Number(text.slice(0, 2)), text.slice(2)];
}

function daysIn(month: number, year: number): number {
    return new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
}

function isLeap(year: number): boolean {
    return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/**
 * time.Parse(time.RFC3339, value), element by element as Go walks the layout, so that a refusal reads as Go's:
 * `parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`.
 */
export function parseGoRfc3339(value: string): GoTime {
    // Go reads bytes: a string of one character per UTF-8 byte keeps its lengths and offsets.
    const original = Buffer.from(value, 'utf8').toString('latin1');
    const fail = (valueElem: string, layoutElem: string): never => {
        throw new TimeParseError(
            `parsing time ${timeQuote(original)} as ${timeQuote(RFC3339_LAYOUT)}: cannot parse ${timeQuote(valueElem)} as ${timeQuote(layoutElem)}`,
        );
    };
    const outOfRange = (what: string): never => {
        throw new TimeParseError(`parsing time ${timeQuote(original)}: ${what} out of range`);
    };

    try {
        let rest = original;
        const literal = (prefix: string): void => {
            if (!rest.startsWith(prefix)) {
                fail(rest, prefix);
            }

            rest = rest.slice(prefix.length);
        };
        const number = (layoutElem: string, fixed: boolean, max: number, name: string): number => {
            const parsed = getnum(rest, fixed) ?? fail(rest, layoutElem);
            rest = parsed[1];
            if (parsed[0] > max || (name === 'month' && parsed[0] === 0)) {
                outOfRange(name);
            }

            return parsed[0];
        };

        if (!/^\d{4}/.test(rest)) {
            fail(rest, '2006');
        }

        const year = Number(rest.slice(0, 4));
        rest = rest.slice(4);
        literal('-');
        const month = number('01', true, 12, 'month');
        literal('-');
        const day = getnum(rest, true) ?? fail(rest, '02');
        rest = day[1];
        literal('T');
        const hour = number('15', false, 23, 'hour');
        literal(':');
        const minute = number('04', true, 59, 'minute');
        literal(':');
        const second = number('05', true, 59, 'second');
        // A fraction of a second is read although the layout has none, as Go does.
        const fraction = /^[.,]\d+/.exec(rest);
        if (fraction) {
            rest = rest.slice(fraction[0].length);
        }

        const offset = zoneOffset(
            () => rest,
            (next) => (rest = next),
            fail,
            outOfRange,
        );
        if (rest.length > 0) {
            throw new TimeParseError(`parsing time ${timeQuote(original)}: extra text: ${timeQuote(rest)}`);
        }

        if (day[0] < 1 || day[0] > daysIn(month, year)) {
            outOfRange('day');
        }

        const date = new Date(Date.UTC(2000, month - 1, day[0], hour, minute, second));
        date.setUTCFullYear(year);
        const unixSeconds = Math.floor(date.getTime() / 1000) - offset;
        return { unixSeconds, isZero: unixSeconds === GO_ZERO_UNIX && !(fraction && /[1-9]/.test(fraction[0])) };
    } catch (error) {
        if (error instanceof TimeParseError) {
            return { error: error.message };
        }

        throw error;
    }
}

/** The `Z07:00` element: `Z`, or a sign, two digits, a colon and two digits; the offset east of UTC in seconds. */
function zoneOffset(
    rest: () => string,
    advance: (next: string) => void,
    fail: (valueElem: string, layoutElem: string) => never,
    outOfRange: (what: string) => never,
): number {
    const text = rest();
    if (text.startsWith('Z')) {
        advance(text.slice(1));
        return 0;
    }

    if (text.length < 6 || text[3] !== ':') {
        return fail(text, 'Z07:00');
    }

    const hours = getnum(text.slice(1, 3), true);
    const minutes = getnum(text.slice(4, 6), true);
    if (!hours || !minutes) {
        return fail(text, 'Z07:00');
    }

    if (hours[0] > 24) {
        outOfRange('time zone offset hour');
    }

    if (minutes[0] > 60) {
        outOfRange('time zone offset minute');
    }

    const sign = text[0] === '+' ? 1 : text[0] === '-' ? -1 : 0;
    if (sign === 0) {
        return fail(text, 'Z07:00');
    }

    advance(text.slice(6));
    return sign * (hours[0] * 3600 + minutes[0] * 60);
}
