/**
 * The schemas the deploy specs name with `$ref: '#/definitions/<name>'` whose values the drop-in parts decide: a
 * sign-in method file dropped into plugins/sso/methods/, or an auto-login adapter file into plugins/sso/autologin/adapters/ (or a
 * folder of AUTOLOGIN_ADAPTERS_DIRS), is a valid `account` or `login.adapter` everywhere the specs take one, with no
 * other edit.
 */
import Path from 'node:path';

import { ROOT_DIR } from '../../../../lib/paths.ts';
import { deployDefinitions } from '../../../../lib/spec/deploy-loader.ts';
import type { Definitions } from '../../../../lib/spec/schema-to-joi.ts';
import { autoLoginAdapters } from '../../../sso/autologin/adapters.ts';
import { methodNames } from '../../../sso/methods.ts';
import { idpKindNames } from '../../../idp/idp-kinds.ts';

const SPECS_DIR = Path.join(ROOT_DIR, 'specs', 'deploy');

/** What the start made, with the named schemas of specs/deploy/schemas/ that the domain reads the specs with. */
let current: Definitions | undefined;

/**
 * Made anew when the deploy plugin registers (a file dropped in counts from the next start), then kept;
 * `adapterDirs`: the configuration's AUTOLOGIN_ADAPTERS_DIRS. Answers every definition: the files' and what is made.
 */
export function refreshDeploySpecDefinitions(adapterDirs: readonly string[] = []): Definitions {
    const made: Definitions = {
        SignInMethod: {
            type: 'string',
            enum: ['', 'recipe', ...methodNames()],
            description: "the sign-in method: a method's name, 'recipe' (the recipe's), or '' (none chosen yet)",
        },
        AutoLoginAdapter: {
            type: 'string',
            enum: autoLoginAdapters(adapterDirs).names(),
            description:
                'the auto-login adapter: plugins/sso/autologin/adapters/<adapter>.ts, or <adapter>.ts in a folder of AUTOLOGIN_ADAPTERS_DIRS',
        },
        IdpKind: {
            type: 'string',
            enum: idpKindNames(),
            description: 'the identity-provider kind: plugins/idp/providers/<kind>.ts, or <kind>.ts in a folder of IDP_KINDS_DIRS',
        },
    };
    current = deployDefinitions(SPECS_DIR, made);
    return current;
}

/** The definitions of the last start (made now when none was). */
export function deploySpecDefinitions(): Definitions {
    if (!current) {
        refreshDeploySpecDefinitions();
    }

    return current as Definitions;
}

/** The sign-in methods of the last start: the values of `SignInMethod` that name a method. */
export function startedMethodNames(): string[] {
    const values = (deploySpecDefinitions().SignInMethod?.enum ?? []) as string[];
    return values.filter((value) => value !== '' && value !== 'recipe');
}

/** The auto-login adapters of the last start. */
export function startedAdapterNames(): string[] {
    return (deploySpecDefinitions().AutoLoginAdapter?.enum ?? []) as string[];
}
