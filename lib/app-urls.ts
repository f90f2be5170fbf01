/**
 * URLs built from text an app or its editor supplies (a login path, a form's action, a redirect's Location, an ACS
 * path) stay on the app's own origin. The check runs after resolution: `/.//host:port/x` reads as a path until dot
 * segments are removed, and then as `//host:port/x`, another host.
 */

/** The JSON-schema format (in specs/deploy/*.yaml and recipes/recipe.schema.json) of a path on the app. */
export const APP_PATH_FORMAT = 'app-path';

export const APP_PATH_RULE = 'must be a path on the app: /, then no //, no . or .. segment, no backslash, space or control character';

// A URL parser drops tabs and newlines and reads a backslash as a slash: none of them belongs in a path.
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const FORBIDDEN_CHARACTER = /[\\\s\u0000-\u001f\u007f]/;
/** A dot segment, as the URL parser sees one: `.` or `..`, either dot possibly written %2e. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=\/|$)/i;
const PROBE_ORIGIN = 'http://app.invalid';

/** Whether `text` is a path (and query) on the app that every URL parser resolves to itself, on the same origin. */
export function isAppPath(text: string): boolean {
    const path = text.replace(/[?#].*$/s, '');
    if (!text.startsWith('/') || FORBIDDEN_CHARACTER.test(text) || path.includes('//') || DOT_SEGMENT.test(path)) {
        return false;
    }

    const resolved = new URL(text, PROBE_ORIGIN);
    return resolved.origin === PROBE_ORIGIN && !resolved.pathname.startsWith('//');
}

/** A URL built from app-supplied text that would leave the app's origin; nothing may be sent to it. */
export class OffOriginError extends Error {
    constructor(
        readonly text: string,
        readonly origin: string,
    ) {
        super(`${JSON.stringify(text)} leads off the app's origin ${origin}`);
        this.name = 'OffOriginError';
    }
}

/**
 * `text` resolved against `base`, when it lands on `origin`'s scheme, host and port (and names no user); else an
 * OffOriginError. `origin` is `base` unless given.
 */
export function onOrigin(text: string, base: string | URL, origin: string | URL = base): URL {
    const expected = new URL(origin);
    let url: URL;
    try {
        url = new URL(text, base);
    } catch {
        throw new OffOriginError(text, expected.origin);
    }

    const same = url.protocol === expected.protocol && url.hostname === expected.hostname && url.port === expected.port;
    if (!same || !['http:', 'https:'].includes(url.protocol) || url.username !== '' || url.password !== '') {
        throw new OffOriginError(text, expected.origin);
    }

    return url;
}

/** `onOrigin`'s URL, or undefined where it would throw an OffOriginError. */
export function maybeOnOrigin(text: string, base: string | URL, origin: string | URL = base): URL | undefined {
    try {
        return onOrigin(text, base, origin);
    } catch (error) {
        if (error instanceof OffOriginError) return undefined;
        throw error;
    }
}

/** The path and query of `url` when they lead back to `origin` on their own (what a Location to a visitor may say). */
export function pathOnOrigin(url: URL, origin: string | URL): string | undefined {
    const path = `${url.pathname}${url.search}`;
    return maybeOnOrigin(url.href, origin) && maybeOnOrigin(path, origin) ? path : undefined;
}
