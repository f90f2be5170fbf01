import YAML, { type Document, LineCounter, type Node as YamlNode, type ScalarTag } from 'yaml';

import { ValidationError } from '../../../../lib/errors.ts';
import { type LineOf, type PathSegment } from './compose-path.ts';

/** Compose reads `0440` as octal (Go's ParseInt with base 0), where YAML 1.2 alone would read 440. */
const goOctal: ScalarTag = {
    tag: 'tag:yaml.org,2002:int',
    default: true,
    test: /^0[0-7]+$/,
    resolve: (text: string) => parseInt(text, 8),
};

/** How many copies aliases may expand to in all (yaml's own measure); far above what anchors in compose files need. */
const MAX_ALIAS_COUNT = 1000;

/** Compose nests a handful of levels (deploy.resources.limits...); anything far deeper is an attack on the stack. */
const MAX_NESTING = 64;

/**
 * The text is no compose document: a YAML syntax error, an empty text, a list or a scalar. It is a mistake to show
 * among a file's errors; what bounded reading refuses (alias bombs, deep nesting) stays a plain ValidationError.
 */
export class ComposeTextError extends ValidationError {}

export interface ComposeSource {
    value: Record<string, unknown>;
    lineOf: LineOf;
}

/** The compose text with one service's image replaced; comments and everything else stay as written. */
export function withServiceImage(text: string, service: string, image: string): string {
    const document = YAML.parseDocument(text, { customTags: (tags) => [goOctal, ...tags] });
    document.setIn(['services', service, 'image'], image);
    return document.toString({ lineWidth: 0 });
}

/** Reads compose YAML as plain data (YAML 1.2, merge keys resolved); a syntax error names its line and column. */
export function readComposeText(text: string): ComposeSource {
    const lineCounter = new LineCounter();
    const document = YAML.parseDocument(text, { merge: true, lineCounter, prettyErrors: true, customTags: (tags) => [goOctal, ...tags] });
    const [error] = document.errors;
    if (error) {
        const position = error.linePos?.[0];
        const where = position ? `line ${position.line}, column ${position.col}` : 'YAML';
        throw new ComposeTextError(`${where}: ${firstLine(error.message)}`);
    }

    refuseSelfReferences(document, lineCounter);
    const value = toPlain(document);
    checkNesting(value, 'the compose file');
    if (value === null || value === undefined) {
        throw new ComposeTextError('the compose file is empty');
    }

    if (typeof value !== 'object' || Array.isArray(value)) {
        throw new ComposeTextError('line 1: a compose file must be a mapping of top-level keys (services, volumes, ...)');
    }

    const lineOf = (path: PathSegment[]): number | undefined => {
        const node: unknown = document.getIn(path, true);
        const offset = YAML.isNode(node) ? node.range?.[0] : undefined;
        return offset === undefined ? undefined : lineCounter.linePos(offset).line;
    };
    return { value: value as Record<string, unknown>, lineOf };
}

/**
 * An alias inside the node its anchor names would expand forever; yaml only stops it at the alias count. An alias
 * refers to the last node anchored before it, and lies inside that node when it lies within its text.
 */
function refuseSelfReferences(document: Document, lineCounter: LineCounter): void {
    const anchored = new Map<string, YamlNode>();
    YAML.visit(document, {
        Node(_key, node) {
            if (YAML.isAlias(node)) {
                const target = anchored.get(node.source)?.range;
                if (target && node.range && node.range[0] >= target[0] && node.range[0] < target[2]) {
                    const line = node.range ? `line ${lineCounter.linePos(node.range[0]).line}: ` : '';
                    throw new ValidationError(`${line}the alias *${node.source} refers to a node that contains it`);
                }
            } else if (node.anchor !== undefined) {
                anchored.set(node.anchor, node);
            }
        },
    });
}

/** The document as plain data; aliases that expand too much or name no anchor are a ValidationError. */
function toPlain(document: Document): unknown {
    try {
        return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
        if (error instanceof ReferenceError) {
            const message = /Excessive alias count/.test(error.message)
                ? `aliases expand to more than ${MAX_ALIAS_COUNT} copies`
                : error.message.replace(
                      /^Unresolved alias \(the anchor must be set before the alias\): (.*)$/,
                      'the alias *$1 names no anchor before it',
                  );
            throw new ValidationError(`YAML: ${message}`);
        }

        throw error;
    }
}

/** Refuses data nested deeper than MAX_NESTING levels, walking it without recursion. */
export function checkNesting(value: unknown, what: string): void {
    const pending: Array<{ item: unknown; depth: number }> = [{ item: value, depth: 0 }];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
        const { item, depth } = next;
        if (typeof item !== 'object' || item === null) {
            continue;
        }

        if (depth >= MAX_NESTING) {
            throw new ValidationError(`${what} is nested deeper than ${MAX_NESTING} levels`);
        }

        for (const child of Object.values(item)) {
            pending.push({ item: child, depth: depth + 1 });
        }
    }
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
