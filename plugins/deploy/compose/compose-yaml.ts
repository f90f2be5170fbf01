import YAML, { LineCounter, type ScalarTag } from 'yaml';

import { ValidationError } from '../../../lib/errors.ts';
import { type LineOf, type PathSegment } from './compose-path.ts';

/** Compose reads `0440` as octal (Go's ParseInt with base 0), where YAML 1.2 alone would read 440. */
const goOctal: ScalarTag = {
    tag: 'tag:yaml.org,2002:int',
    default: true,
    test: /^0[0-7]+$/,
    resolve: (text: string) => parseInt(text, 8),
};

export interface ComposeSource {
    value: Record<string, unknown>;
    lineOf: LineOf;
}

/** Reads compose YAML as plain data (YAML 1.2, merge keys resolved); a syntax error names its line and column. */
export function readComposeText(text: string): ComposeSource {
    const lineCounter = new LineCounter();
    const document = YAML.parseDocument(text, { merge: true, lineCounter, prettyErrors: true, customTags: (tags) => [goOctal, ...tags] });
    const [error] = document.errors;
    if (error) {
        const position = error.linePos?.[0];
        const where = position ? `line ${position.line}, column ${position.col}` : 'YAML';
        throw new ValidationError(`${where}: ${firstLine(error.message)}`);
    }

    const value: unknown = document.toJS({ maxAliasCount: 1000 });
    if (value === null || value === undefined) {
        throw new ValidationError('the compose file is empty');
    }

    if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ValidationError('line 1: a compose file must be a mapping of top-level keys (services, volumes, ...)');
    }

    const lineOf = (path: PathSegment[]): number | undefined => {
        const node: unknown = document.getIn(path, true);
        const offset = YAML.isNode(node) ? node.range?.[0] : undefined;
        return offset === undefined ? undefined : lineCounter.linePos(offset).line;
    };
    return { value: value as Record<string, unknown>, lineOf };
}

/**
 * Writes plain data as compose YAML. Strings that YAML 1.1 would read as something else (yes, on, 22:22) are
 * quoted, so that the file means the same to 1.1 and 1.2 readers; repeated objects are written out, not aliased.
 */
export function writeComposeText(value: Record<string, unknown>): string {
    return YAML.stringify(value, { version: '1.1', aliasDuplicateObjects: false, lineWidth: 0, nullStr: '' });
}

/** yaml's pretty message repeats the position and quotes the source after the first line. */
function firstLine(message: string): string {
    const line = message.split('\n')[0] ?? message;
    return line.replace(/ at line \d+, column \d+:?$/, '').trim();
}
