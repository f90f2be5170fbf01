// The parts of Go's net/url and path packages that Gitea's link resolution relies on, ported so that rendered
// links are escaped, cleaned and joined exactly as Gitea makes them.

export interface GoUrl {
    scheme: string;
    /** Non-empty when the URL has an authority ('//host/...'). */
    host: string;
    /** Unescaped, as url.URL.Path. */
    path: string;
    /** The path as url.URL.EscapedPath() gives it. */
    escapedPath: string;
    rawQuery: string;
    /** Unescaped, as url.URL.Fragment. */
    fragment: string;
}

const HEX = '0123456789ABCDEF';
const ALPHANUMERIC = /^[A-Za-z0-9]$/;
// Characters validEncoded accepts in a path besides those shouldEscape leaves alone.
const VALID_IN_ENCODED_PATH = new Set([..."!$&'()*+,;=:@[]%"]);

type EscapeMode = 'path' | 'pathSegment';

// url.shouldEscape for the path modes, byte by byte.
function shouldEscape(byte: number, mode: EscapeMode): boolean {
    const char = String.fromCharCode(byte);
    if (byte < 0x80 && (ALPHANUMERIC.test(char) || '-_.~'.includes(char))) {
        return false;
    }
    if (byte < 0x80 && '$&+,/:;=?@'.includes(char)) {
        return mode === 'path' ? char === '?' : '/;,?'.includes(char);
    }
    return true;
}

function escape(text: string, mode: EscapeMode): string {
    let escaped = '';
    for (const byte of Buffer.from(text, 'utf8')) {
        escaped += shouldEscape(byte, mode) ? `%${HEX[byte >> 4]}${HEX[byte & 15]}` : String.fromCharCode(byte);
    }
    return escaped;
}

/** url.PathEscape. */
export function goPathEscape(segment: string): string {
    return escape(segment, 'pathSegment');
}

/** Go's unescape: undefined for a '%' not followed by two hex digits. */
function unescape(text: string): string | undefined {
    if (!text.includes('%')) {
        return text;
    }
    if (/%(?![0-9a-fA-F]{2})/.test(text)) {
        return undefined;
    }
    try {
        return decodeURIComponent(text);
    } catch {
        // Escaped bytes that are not UTF-8: Go keeps them as bytes; a JavaScript string cannot, so go byte by byte.
        return Buffer.from(
            text.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
        ).toString();
    }
}

// Printable ASCII that shouldEscape leaves alone in a path, or that validEncoded accepts.
const VALID_ENCODED_PATH = /^[A-Za-z0-9\-_.~$&+,/:;=@!'()*[\]%]*$/;

function isValidEncodedPath(path: string): boolean {
    if (VALID_ENCODED_PATH.test(path)) {
        return true;
    }
    for (const byte of Buffer.from(path, 'utf8')) {
        if (!(byte < 0x80 && VALID_IN_ENCODED_PATH.has(String.fromCharCode(byte))) && shouldEscape(byte, 'path')) {
            return false;
        }
    }
    return true;
}

/** getScheme: undefined when the URL starts with ':' (Go's "missing protocol scheme"). */
function splitScheme(raw: string): { scheme: string; rest: string } | undefined {
    for (let index = 0; index < raw.length; index++) {
        const char = raw[index] ?? '';
        if (/[A-Za-z]/.test(char)) {
            continue;
        }
        if (/[0-9+\-.]/.test(char)) {
            if (index === 0) {
                return { scheme: '', rest: raw };
            }
            continue;
        }
        if (char === ':') {
            return index === 0 ? undefined : { scheme: raw.slice(0, index).toLowerCase(), rest: raw.slice(index + 1) };
        }
        return { scheme: '', rest: raw };
    }
    return { scheme: '', rest: raw };
}

function cut(text: string, separator: string): [string, string] {
    const index = text.indexOf(separator);
    return index === -1 ? [text, ''] : [text.slice(0, index), text.slice(index + separator.length)];
}

/** url.Parse, for what link resolution reads of the result; undefined where Go answers an error. */
export function goParseUrl(raw: string): GoUrl | undefined {
    // eslint-disable-next-line no-control-regex -- Go refuses ASCII control characters in a URL
    if (/[\u0000-\u001f\u007f]/.test(raw)) {
        return undefined;
    }
    const [beforeFragment, rawFragment] = cut(raw, '#');
    const fragment = unescape(rawFragment);
    const split = splitScheme(beforeFragment);
    if (fragment === undefined || split === undefined) {
        return undefined;
    }
    const [beforeQuery, rawQuery] = cut(split.rest, '?');
    let rest = beforeQuery;
    if (split.scheme !== '') {
        // Link resolution keeps any URL with a scheme as it is: the rest does not matter.
        return { scheme: split.scheme, host: '', path: '', escapedPath: '', rawQuery, fragment };
    }
    if (!rest.startsWith('/') && cut(rest, '/')[0].includes(':')) {
        return undefined;
    }
    if (rest.startsWith('//') && !rest.startsWith('///')) {
        const afterSlashes = rest.slice(2);
        const slash = afterSlashes.indexOf('/');
        const authority = slash === -1 ? afterSlashes : afterSlashes.slice(0, slash);
        if (authority !== '') {
            return { scheme: '', host: authority, path: '', escapedPath: '', rawQuery, fragment };
        }
        rest = slash === -1 ? '' : afterSlashes.slice(slash);
    }
    const path = unescape(rest);
    if (path === undefined) {
        return undefined;
    }
    return { scheme: '', host: '', path, escapedPath: isValidEncodedPath(rest) ? rest : escape(path, 'path'), rawQuery, fragment };
}

/** path.Clean. */
export function goPathClean(path: string): string {
    if (path === '') {
        return '.';
    }
    const rooted = path.startsWith('/');
    const parts: string[] = [];
    for (const part of path.split('/')) {
        if (part === '' || part === '.') {
            continue;
        }
        if (part !== '..') {
            parts.push(part);
        } else if (parts.length > 0 && parts[parts.length - 1] !== '..') {
            parts.pop();
        } else if (!rooted) {
            parts.push('..');
        }
    }
    const cleaned = (rooted ? '/' : '') + parts.join('/');
    return cleaned === '' ? '.' : cleaned;
}

/** path.Join: the non-empty elements joined and cleaned, '' when there are none. */
export function goPathJoin(...elements: string[]): string {
    const present = elements.filter((element) => element !== '');
    return present.length === 0 ? '' : goPathClean(present.join('/'));
}

/** path.Dir. */
export function goPathDir(path: string): string {
    return goPathClean(path.slice(0, path.lastIndexOf('/') + 1));
}

/** path.Base. */
export function goPathBase(path: string): string {
    if (path === '') {
        return '.';
    }
    const trimmed = path.replace(/\/+$/, '');
    return trimmed === '' ? '/' : trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** path.Ext: the suffix from the last '.' of the last element, case kept. */
export function goPathExt(path: string): string {
    for (let index = path.length - 1; index >= 0 && path[index] !== '/'; index--) {
        if (path[index] === '.') {
            return path.slice(index);
        }
    }
    return '';
}
