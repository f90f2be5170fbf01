/**
 * The schemas the deploy specs name with `$ref: '#/definitions/<name>'` whose values the drop-in parts decide: a
 * sign-in method file dropped into plugins/sso/ is a valid `account` everywhere the specs take one, with no other
 * edit.
 */
import type { Definitions } from '../../../../lib/spec/schema-to-joi.ts';
import { methodNames } from '../../../sso/methods.ts';

let current: Definitions | undefined;

/** Made anew when the deploy plugin registers (a method file dropped in counts from the next start), then kept. */
export function refreshDeploySpecDefinitions(): Definitions {
    current = {
        SignInMethod: {
            type: 'string',
            enum: ['', 'recipe', ...methodNames()],
            description: "the sign-in method: a method's name, 'recipe' (the recipe's), or '' (none chosen yet)",
        },
    };
    return current;
}

/** The definitions of the last start (made now when none was). */
export function deploySpecDefinitions(): Definitions {
    return current ?? refreshDeploySpecDefinitions();
}

/** The sign-in methods of the last start: the values of `SignInMethod` that name a method. */
export function startedMethodNames(): string[] {
    const values = (deploySpecDefinitions().SignInMethod?.enum ?? []) as string[];
    return values.filter((value) => value !== '' && value !== 'recipe');
}
