/**
 * Which line of the text a finding is about: the line the API gave (nginx's messages), the one its message names
 * (`(line 3)`, `line 3:`), else, for compose YAML, the line of the key its path names (`services.web.ports[0]`).
 */
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';

export type EditorLanguage = 'yaml' | 'nginx';

export interface EditorFinding {
    path: string;
    level: 'error' | 'risk' | 'warning' | 'info';
    message: string;
    fix?: string;
    line?: number;
}

const LINE_IN_MESSAGE = /\bline (\d+)\b/;

/** `services.web.labels["a.b"][0]` → ['services', 'web', 'labels', 'a.b', 0]. */
export function pathSegments(path: string): Array<string | number> {
    const segments: Array<string | number> = [];
    const pattern = /([\w-]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g;
    for (const match of path.matchAll(pattern)) {
        if (match[1] !== undefined) {
            segments.push(match[1]);
        } else if (match[2] !== undefined) {
            segments.push(Number(match[2]));
        } else if (match[3] !== undefined) {
            segments.push(JSON.parse(match[3]) as string);
        }
    }

    return segments;
}

function lineAt(text: string, offset: number): number {
    let line = 1;
    for (let index = 0; index < offset && index < text.length; index += 1) {
        if (text[index] === '\n') {
            line += 1;
        }
    }

    return line;
}

/** The offset of the deepest node the path reaches: a map key's own position, a list item's. */
function offsetOfPath(text: string, segments: Array<string | number>): number | undefined {
    const document = parseDocument(text);
    let node: unknown = document.contents;
    let offset: number | undefined;
    for (const segment of segments) {
        if (isMap(node)) {
            const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(segment));
            if (!pair || !isScalar(pair.key) || !pair.key.range) {
                break;
            }

            offset = pair.key.range[0];
            node = pair.value;
        } else if (isSeq(node) && typeof segment === 'number') {
            const item = node.items[segment] as { range?: [number, number, number] } | undefined;
            if (!item?.range) {
                break;
            }

            offset = item.range[0];
            node = item;
        } else {
            break;
        }
    }

    return offset;
}

export function findingLine(text: string, language: EditorLanguage, finding: EditorFinding): number | undefined {
    if (finding.line !== undefined) {
        return finding.line;
    }

    const named = LINE_IN_MESSAGE.exec(finding.message);
    if (named?.[1]) {
        return Number(named[1]);
    }

    if (language !== 'yaml' || finding.path === '') {
        return undefined;
    }

    try {
        const offset = offsetOfPath(text, pathSegments(finding.path));
        return offset === undefined ? undefined : lineAt(text, offset);
    } catch {
        return undefined;
    }
}
