/**
 * What each field of the site model may hold. Every value that reaches a directive passes one of
 * these checks first, so no field can end a directive, open or close a block, start a comment,
 * expand a variable or break out of a quoted string.
 */
import type { Finding, FindingLevel } from '../findings/finding.ts';
import { ConfSyntaxError, readConf } from './syntax.ts';

export type ValueCheck = (value: unknown) => string | undefined;

const DNS_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const SIZE = /^[0-9]{1,9}[kKmMgG]?$/;
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const LOCATION_PATH = /^\/[A-Za-z0-9._~%/@:+!,=-]{0,1023}$/;
const FILE_PATH = /^\/[A-Za-z0-9._/@+-]{1,4095}$/;
const LOOPBACK_URL = /^http:\/\/(127\.0\.0\.1|\[::1\]):([0-9]{1,5})(\/[A-Za-z0-9._~%/-]*)?$/;
const OUTPOST_URL = /^https?:\/\/([a-z0-9.-]+|\[[0-9a-f:]+\]):?([0-9]{1,5})?$/i;
const SIGN_IN_TARGET = /^(https?:\/\/[a-z0-9.-]+(:[0-9]{1,5})?)?\/[A-Za-z0-9._~%/-]{0,1023}$/i;
const UNQUOTABLE = new Set(['"', '\\', '$']);

/** Printable text without the characters that end a quoted string or expand a variable. */
function isQuotable(value: string): boolean {
    return (
        value.length <= 4096 &&
        [...value].every((char) => {
            const code = char.codePointAt(0) ?? 0;
            return code >= 0x20 && code !== 0x7f && !UNQUOTABLE.has(char);
        })
    );
}

/** nginx's catch-all name is accepted besides DNS names, and a leading `*.` for a wildcard. */
export const checkServerName: ValueCheck = (value) => {
    if (typeof value !== 'string') {
        return 'must be a string';
    }

    if (value === '_') {
        return undefined;
    }

    const name = value.startsWith('*.') ? value.slice(2) : value;
    const labels = name.split('.');
    const valid = name.length <= 253 && labels.every((label) => DNS_LABEL.test(label));
    return valid ? undefined : 'must be a DNS name (lower-case letters, digits, hyphens and dots; `*.` may lead)';
};

export const checkPort: ValueCheck = (value) =>
    Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 65535 ? undefined : 'must be a port number from 1 to 65535';

export const checkSize: ValueCheck = (value) =>
    typeof value === 'string' && SIZE.test(value) ? undefined : 'must be a size such as 10m, 512k or 1g';

export const checkHeaderName: ValueCheck = (value) =>
    typeof value === 'string' && HEADER_NAME.test(value) ? undefined : 'must be a header name (letters, digits, hyphens)';

export const checkHeaderValue: ValueCheck = (value) =>
    typeof value === 'string' && isQuotable(value)
        ? undefined
        : 'must be printable text without quotes, backslashes, `$` or control characters';

export const checkLocationPath: ValueCheck = (value) =>
    typeof value === 'string' && LOCATION_PATH.test(value) && !value.split('/').includes('..')
        ? undefined
        : 'must be a URL path starting with / (letters, digits and . _ ~ % / @ : + ! , = -)';

export const checkFilePath: ValueCheck = (value) =>
    typeof value === 'string' && FILE_PATH.test(value) && !value.split('/').includes('..')
        ? undefined
        : 'must be an absolute file path (letters, digits and . _ / @ + -, no ..)';

export const checkProxyPass: ValueCheck = (value) => {
    const match = typeof value === 'string' ? LOOPBACK_URL.exec(value) : null;
    const port = Number(match?.[2]);
    return match && port >= 1 && port <= 65535 ? undefined : 'must be http://127.0.0.1:<port> or http://[::1]:<port>';
};

export const checkOutpostUrl: ValueCheck = (value) => {
    const match = typeof value === 'string' ? OUTPOST_URL.exec(value) : null;
    const port = match?.[2] === undefined ? 80 : Number(match[2]);
    return match && port >= 1 && port <= 65535 ? undefined : 'must be an http(s) URL of a host and port, without a path';
};

export const checkSignInPath: ValueCheck = (value) =>
    typeof value === 'string' && SIGN_IN_TARGET.test(value) && !value.includes('..')
        ? undefined
        : 'must be a path starting with /, or an http(s) URL with a path';

export const EXTRA_BEGIN = 'extra: hand-written directives, kept as written';
export const EXTRA_END = 'end of extra';

/** Hand-written directives must read as whole directives, balanced, and must not fake the markers. */
export const checkExtra: ValueCheck = (value) => {
    if (typeof value !== 'string') {
        return 'must be a string';
    }

    try {
        const { comments } = readConf(value);
        if (comments.some((comment) => comment.text === EXTRA_BEGIN || comment.text === EXTRA_END)) {
            return 'must not contain the markers of the extra section';
        }
    } catch (error) {
        if (error instanceof ConfSyntaxError) {
            return `must be complete nginx directives (${error.message})`;
        }

        throw error;
    }

    return undefined;
};

/** Collects findings with their field paths. */
export class FindingList {
    readonly items: Finding[] = [];

    add(path: string, level: FindingLevel, message: string): void {
        this.items.push({ path, level, message });
    }

    check(path: string, value: unknown, check: ValueCheck): boolean {
        const problem = check(value);
        if (problem) {
            this.add(path, 'error', problem);
        }

        return problem === undefined;
    }
}
