/**
 * A recipe: how one app's visitors are known inside it behind the identity provider (the seed's "Recipe fields").
 * Shipped recipes are the files of `recipes/`; saved recipes come from a working app and live in the database.
 */
import type { MethodNeed } from '../../../sso/method-types.ts';

/** A sign-in method's name (plugins/sso/methods/<name>.ts); recipe-files.ts checks it against the methods there are. */
export type RecipeMethod = string;

export const RECIPE_OUTCOMES = [
    'admin-checked',
    'user-login',
    'no-login-after-provider',
    'set-up-once',
    'master-password-kept',
    'no-free-sso',
] as const;
export type RecipeOutcome = (typeof RECIPE_OUTCOMES)[number];

export interface RecipeFields {
    image: string;
    aliases?: string[];
    title: string;
    description?: string;
    method: RecipeMethod;
    level: 'tested' | 'documented';
    /** What backs `level: tested`: the packaging the login was tested on and the test file that did it. */
    tested?: { packaging: string; test: string };
    outcome?: RecipeOutcome;
    env?: Record<string, string>;
    remove?: string[];
    steps?: string[];
    redirect?: string;
    adminClaim?: boolean;
    init?: string[];
    initUser?: string;
    ownDoor?: boolean;
    login?: { adapter: string; path?: string };
    samlAcs?: string;
    adminUser?: 'required' | 'optional';
    paidOnly?: Exclude<RecipeMethod, 'own'>[];
    sources: string[];
    service?: string;
    compose?: string;
    /** The tag an app made from the compose template starts with. */
    tag?: string;
    /** The catalog's category. */
    category?: string;
    /** What a backup of the app holds besides its folder and volumes: a dump taken by a command in a container. */
    backup?: { dump?: RecipeDump };
}

/** A dump with the database's own consistency: `command`'s standard output; `restore` reads it on its standard input. */
export interface RecipeDump {
    service: string;
    command: string;
    restore?: string;
    user?: string;
}

export interface Recipe extends RecipeFields {
    /** The file's name without `.yaml`, or `saved-<n>` for a recipe saved from an app. */
    id: string;
    /** Where it comes from: a shipped file, or an app it was saved from. */
    origin: { kind: 'file'; path: string } | { kind: 'saved'; app: string; savedBy: string; savedAt: string };
    notes?: string;
}

/** Whether the recipe needs the app's admin account named before a deploy. */
export function needsAdminUser(recipe: RecipeFields): boolean {
    if (recipe.adminUser) {
        return recipe.adminUser === 'required';
    }

    const texts = [...Object.values(recipe.env ?? {}), ...(recipe.init ?? [])];
    return recipe.adminClaim === true || texts.some((text) => /\{\{ADMIN_(USER|EMAIL)\}\}/.test(text));
}

/** What a method applied from this recipe needs beyond the recipe itself. */
export function recipeNeeds(recipe: RecipeFields): MethodNeed[] {
    return needsAdminUser(recipe) ? ['adminUser'] : [];
}
