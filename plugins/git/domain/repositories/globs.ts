import { ValidationError } from '../../../../lib/errors.ts';

// Gitea's globs (gobwas/glob): `*`, `?`, `[...]` (`[!...]` negated) and `{a,b}`.

function escapeForRegExp(text: string): string {
    return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function characterClass(glob: string, open: number): { source: string; close: number } {
    let start = open + 1;
    const negated = glob[start] === '!' || glob[start] === '^';
    if (negated) {
        start += 1;
    }

    const close = glob.indexOf(']', start);
    if (close <= start) {
        throw new ValidationError(`invalid pattern [${glob}]`);
    }

    const body = glob.slice(start, close).replace(/[\\\]^[]/g, '\\$&');
    return { source: `[${negated ? '^' : ''}${body}]`, close };
}

export function globToRegExp(glob: string): RegExp {
    let source = '';
    let openBraces = 0;
    for (let index = 0; index < glob.length; index += 1) {
        const character = glob[index] as string;
        if (character === '*') {
            source += '.*';
        } else if (character === '?') {
            source += '.';
        } else if (character === '[') {
            const range = characterClass(glob, index);
            source += range.source;
            index = range.close;
        } else if (character === '{') {
            openBraces += 1;
            source += '(?:';
        } else if (character === '}' && openBraces > 0) {
            openBraces -= 1;
            source += ')';
        } else if (character === ',' && openBraces > 0) {
            source += '|';
        } else if (character === '\\' && index + 1 < glob.length) {
            index += 1;
            source += escapeForRegExp(glob[index] as string);
        } else {
            source += escapeForRegExp(character);
        }
    }

    if (openBraces > 0) {
        throw new ValidationError(`invalid pattern [${glob}]`);
    }

    try {
        return new RegExp(`^${source}$`);
    } catch {
        throw new ValidationError(`invalid pattern [${glob}]`);
    }
}
