/**
 * The secrets a catalog template needs: every `${NAME}` of its compose file that has no default (a database's
 * password, an app's secret key) gets a generated value when an app is made from it, so the draft deploys as it is
 * and no shared default password ever ships in a template. The value is 64 hexadecimal characters (32 random bytes:
 * long enough for every key the shipped apps ask for, and safe inside a database URL); a name ending in `_HEX16`
 * gets 32 (Laravel's APP_KEY must be exactly 32 characters).
 */
import { interpolate, type InterpolationProblem } from '../compose/compose-interpolation.ts';
import { plainFromModel } from '../compose/compose-read.ts';
import type { ComposeSpec } from '../compose/compose-types.ts';

function* strings(value: unknown): Generator<string> {
    if (typeof value === 'string') {
        yield value;
    } else if (Array.isArray(value)) {
        for (const item of value) {
            yield* strings(item);
        }
    } else if (typeof value === 'object' && value !== null) {
        for (const item of Object.values(value)) {
            yield* strings(item);
        }
    }
}

/** The names of the variables the file needs a value for (no default), each once, as the deploy's check finds them. */
export function neededVariables(spec: ComposeSpec): string[] {
    const problems: InterpolationProblem[] = [];
    for (const text of strings(plainFromModel(spec))) {
        interpolate(text, {}, problems);
    }

    const names = problems.flatMap((problem) => (problem.kind === 'syntax' ? [] : [problem.name]));
    return [...new Set(names)];
}

/** The kind of generated value a template variable gets (generateSecret's kinds). */
export function templateSecretKind(name: string): 'hex16' | 'hex32' {
    return name.endsWith('_HEX16') ? 'hex16' : 'hex32';
}
