/**
 * Filling `{{NAME}}` placeholders as values, never as text: in YAML only inside values, each filled value written back
 * by the yaml library as one double-quoted scalar; in a shell command as a quoted reference to an environment
 * variable that holds the value, so the shell never reads the value as syntax.
 */
import type { Node as YamlNode } from 'yaml';

import { ValidationError } from './errors.ts';
import { yamlLibrary } from './yaml-cache.ts';

export const PLACEHOLDER = /\{\{([A-Z][A-Z0-9_]*)\}\}/g;
/** A value that is nothing but a placeholder: unquoted (`image: {{IMAGE}}`), YAML reads it as a flow mapping. */
const WHOLE_PLACEHOLDER = /^\{\{([A-Z][A-Z0-9_]*)\}\}$/;
/** The prefix of the variables that carry a command's values. */
export const COMMAND_VARIABLE_PREFIX = 'GATEHOUSE_';

export interface Filled {
    text: string;
    /** The names of the placeholders found in values that have no value here (left as they are). */
    unfilled: string[];
}

interface Replacement {
    start: number;
    end: number;
    value: string;
}

function fillText(text: string, values: Record<string, string>, unfilled: Set<string>): string {
    return text.replace(PLACEHOLDER, (whole, name: string) => {
        const value = values[name];
        if (value === undefined) {
            unfilled.add(name);
        }

        return value ?? whole;
    });
}

/**
 * A double-quoted YAML scalar holding exactly the value. Line separators that YAML 1.1 readers (libyaml, Go's yaml)
 * take for line breaks are escaped too, so every reader reads the same characters.
 */
function quotedScalar(value: string): string {
    const YAML = yamlLibrary();
    const scalar = new YAML.Scalar(value);
    scalar.type = 'QUOTE_DOUBLE';
    const rendered = new YAML.Document(scalar).toString({ doubleQuotedAsJSON: true, lineWidth: 0 }).replace(/\n$/, '');
    return rendered.replaceAll('\u0085', '\\N').replaceAll('\u2028', '\\L').replaceAll('\u2029', '\\P');
}

/** The replacement of a value node holding placeholders, if it has any; keys are left alone. */
function replacementFor(node: YamlNode, source: string, values: Record<string, string>, unfilled: Set<string>): Replacement | undefined {
    const [start, end] = node.range ?? [0, 0, 0];
    const written = source.slice(start, end);
    const YAML = yamlLibrary();
    const whole = YAML.isMap(node) && node.flow ? WHOLE_PLACEHOLDER.exec(written.trim()) : null;
    const text = whole ? written.trim() : YAML.isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
    if (text === undefined || !text.includes('{{')) {
        return undefined;
    }

    const filled = fillText(text, values, unfilled);
    if (filled === text) {
        return undefined;
    }

    // A block scalar's text ends with its line break, which the quoted scalar must leave in place.
    return { start, end, value: quotedScalar(filled) + (written.endsWith('\n') ? '\n' : '') };
}

/**
 * The YAML text with the placeholders of its values filled; comments, keys and everything else stay as written.
 * The text must be YAML (it is parsed); a value that is a whole unquoted placeholder is filled too.
 */
export function fillYamlPlaceholders(text: string, values: Record<string, string>): Filled {
    const YAML = yamlLibrary();
    const document = YAML.parseDocument(text);
    if (document.errors.length > 0) {
        throw new ValidationError(`not YAML: ${document.errors[0]?.message.split('\n')[0] ?? ''}`);
    }

    const unfilled = new Set<string>();
    const replacements: Replacement[] = [];
    YAML.visit(document, {
        Node(key, node) {
            if (key === 'key') {
                return YAML.visit.SKIP;
            }

            const replacement = replacementFor(node, text, values, unfilled);
            if (replacement) {
                replacements.push(replacement);
                return YAML.visit.SKIP;
            }

            return undefined;
        },
    });
    const filled = replacements
        .sort((a, b) => b.start - a.start)
        .reduce((result, { start, end, value }) => result.slice(0, start) + value + result.slice(end), text);
    return { text: filled, unfilled: [...unfilled].sort() };
}

type ShellQuoting = 'none' | 'single' | 'double';

/** `${GATEHOUSE_NAME}` written so that the shell expands it as one word, from inside whatever quotes it stands in. */
function variableReference(name: string, quoting: ShellQuoting): string {
    const reference = `\${${COMMAND_VARIABLE_PREFIX}${name}}`;
    return quoting === 'double' ? reference : quoting === 'single' ? `'"${reference}"'` : `"${reference}"`;
}

export interface FilledCommand {
    /** The command with each filled placeholder replaced by a reference to its variable: it holds no value. */
    command: string;
    /** The variables to run it with: `GATEHOUSE_<NAME>` for each placeholder filled. */
    environment: Record<string, string>;
}

/**
 * A shell command with its placeholders turned into variables: `{{ADMIN_USER}}` becomes `"${GATEHOUSE_ADMIN_USER}"`
 * (quoted to suit the quotes it stands in) and the value goes to the environment, never into the command's text.
 */
export function fillCommandPlaceholders(command: string, values: Record<string, string>): FilledCommand {
    const environment: Record<string, string> = {};
    let quoting: ShellQuoting = 'none';
    let result = '';
    for (let index = 0; index < command.length; index += 1) {
        const character = command[index] ?? '';
        const placeholder = character === '{' ? /^\{\{([A-Z][A-Z0-9_]*)\}\}/.exec(command.slice(index)) : null;
        const name = placeholder?.[1];
        if (placeholder && name !== undefined && values[name] !== undefined) {
            environment[`${COMMAND_VARIABLE_PREFIX}${name}`] = values[name];
            result += variableReference(name, quoting);
            index += placeholder[0].length - 1;
            continue;
        }

        result += character;
        if (character === '\\' && quoting !== 'single') {
            result += command[index + 1] ?? '';
            index += 1;
        } else if (character === "'" && quoting !== 'double') {
            quoting = quoting === 'single' ? 'none' : 'single';
        } else if (character === '"' && quoting !== 'single') {
            quoting = quoting === 'double' ? 'none' : 'double';
        }
    }

    return { command: result, environment };
}
