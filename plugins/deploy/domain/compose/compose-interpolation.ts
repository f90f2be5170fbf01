/** Compose's variable interpolation: `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR:+alt}`, `$$`. */

export type InterpolationProblem =
    { kind: 'undefined'; name: string } | { kind: 'required'; name: string; message: string } | { kind: 'syntax'; at: number };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const OPERATORS = [':-', ':?', ':+', '-', '?', '+'] as const;
type Operator = (typeof OPERATORS)[number];

/** Substitutes the variables of one string, reporting each one that is needed but has no value. */
export function interpolate(text: string, values: Record<string, string>, problems: InterpolationProblem[] = []): string {
    let result = '';
    let index = 0;
    while (index < text.length) {
        const dollar = text.indexOf('$', index);
        if (dollar < 0) {
            return result + text.slice(index);
        }

        result += text.slice(index, dollar);
        const { output, next } = substituteAt(text, dollar, values, problems);
        result += output;
        index = next;
    }

    return result;
}

function substituteAt(text: string, dollar: number, values: Record<string, string>, problems: InterpolationProblem[]) {
    const following = text[dollar + 1];
    if (following === '$') {
        return { output: '$', next: dollar + 2 };
    }

    if (following === '{') {
        return substituteBraced(text, dollar, values, problems);
    }

    const name = NAME.exec(text.slice(dollar + 1))?.[0];
    if (name === undefined) {
        problems.push({ kind: 'syntax', at: dollar });
        return { output: '$', next: dollar + 1 };
    }

    return { output: lookUp(name, values, problems), next: dollar + 1 + name.length };
}

function substituteBraced(text: string, dollar: number, values: Record<string, string>, problems: InterpolationProblem[]) {
    const close = matchingBrace(text, dollar + 2);
    const body = close < 0 ? '' : text.slice(dollar + 2, close);
    const name = NAME.exec(body)?.[0];
    const rest = name === undefined ? '' : body.slice(name.length);
    const operator = OPERATORS.find((candidate) => rest.startsWith(candidate));
    if (close < 0 || name === undefined || (rest !== '' && operator === undefined)) {
        problems.push({ kind: 'syntax', at: dollar });
        return { output: text.slice(dollar, close < 0 ? text.length : close + 1), next: close < 0 ? text.length : close + 1 };
    }

    const argument = operator === undefined ? '' : rest.slice(operator.length);
    return { output: applyOperator(name, operator, argument, values, problems), next: close + 1 };
}

/** The index of the `}` closing a `${` whose body starts at `start`, counting nested `${...}`. */
function matchingBrace(text: string, start: number): number {
    let depth = 1;
    for (let index = start; index < text.length; index += 1) {
        if (text[index] === '$' && text[index + 1] === '{') {
            depth += 1;
            index += 1;
        } else if (text[index] === '}') {
            depth -= 1;
            if (depth === 0) {
                return index;
            }
        }
    }

    return -1;
}

function applyOperator(
    name: string,
    operator: Operator | undefined,
    argument: string,
    values: Record<string, string>,
    problems: InterpolationProblem[],
): string {
    const value = values[name];
    const isSet = value !== undefined;
    const isSetNonEmpty = isSet && value !== '';
    switch (operator) {
        case undefined:
            return lookUp(name, values, problems);
        case ':-':
            return isSetNonEmpty ? value : interpolate(argument, values, problems);
        case '-':
            return isSet ? value : interpolate(argument, values, problems);
        case ':+':
            return isSetNonEmpty ? interpolate(argument, values, problems) : '';
        case '+':
            return isSet ? interpolate(argument, values, problems) : '';
        case ':?':
        case '?':
            if (operator === ':?' ? isSetNonEmpty : isSet) {
                return value ?? '';
            }

            problems.push({ kind: 'required', name, message: argument });
            return '';
    }
}

function lookUp(name: string, values: Record<string, string>, problems: InterpolationProblem[]): string {
    const value = values[name];
    if (value === undefined) {
        problems.push({ kind: 'undefined', name });
        return '';
    }

    return value;
}
