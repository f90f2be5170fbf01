/**
 * The shipped recipes: every `<id>.yaml` of the recipe folders (the project's `recipes/`, then RECIPES_DIRS), each
 * checked against `recipes/recipe.schema.json` and for placeholders outside the seed's list. A bad file stops the
 * start, naming the file and the field.
 */
import Fs from 'node:fs';
import Path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import YAML from 'yaml';

import { PLACEHOLDER_NAMES, placeholdersIn } from '../../../sso/placeholders.ts';
import type { Recipe, RecipeFields } from './recipe-types.ts';

export const SHIPPED_RECIPES_DIR = fileURLToPath(new URL('../../../../recipes/', import.meta.url));
const SCHEMA_FILE = Path.join(SHIPPED_RECIPES_DIR, 'recipe.schema.json');
const RECIPE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Where a catalog template's compose file puts the image and the loopback port the app gets. */
export const TEMPLATE_PLACEHOLDERS = ['IMAGE', 'PORT'] as const;

export class RecipeError extends Error {}

let validator: ValidateFunction | undefined;

function validate(fields: unknown): ErrorObject[] {
    validator ??= new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(Fs.readFileSync(SCHEMA_FILE, 'utf8')));
    return validator(fields) ? [] : (validator.errors ?? []);
}

function describeError(error: ErrorObject): string {
    const field = error.instancePath === '' ? '(the recipe)' : error.instancePath.slice(1).replaceAll('/', '.');
    const extra = 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : '';
    const allowed = 'allowedValues' in error.params ? `: ${(error.params.allowedValues as unknown[]).join(', ')}` : '';
    return `${field}: ${error.message ?? 'is not valid'}${extra}${allowed}`;
}

/** Every text a recipe renders, by field, for the placeholder check. */
function renderedTexts(fields: RecipeFields): Array<[string, string, readonly string[]]> {
    return [
        ...Object.entries(fields.env ?? {}).map(([name, value]): [string, string, readonly string[]] => [`env.${name}`, value, []]),
        ...(fields.steps ?? []).map((step, index): [string, string, readonly string[]] => [`steps.${index}`, step, []]),
        ...(fields.init ?? []).map((command, index): [string, string, readonly string[]] => [`init.${index}`, command, []]),
        ...(fields.compose ? [['compose', fields.compose, TEMPLATE_PLACEHOLDERS] as [string, string, readonly string[]]] : []),
    ];
}

/** The problems of a recipe's fields, each naming its field; none when it may be used. */
export function recipeProblems(fields: unknown): string[] {
    const errors = validate(fields).map(describeError);
    if (errors.length > 0) {
        return errors;
    }

    const known = new Set<string>(PLACEHOLDER_NAMES);
    const recipe = fields as RecipeFields;
    const ownDoor = recipe.ownDoor && recipe.method !== 'oidc' ? ['ownDoor: only an oidc recipe can leave forward auth out'] : [];
    return ownDoor.concat(
        renderedTexts(fields as RecipeFields).flatMap(([field, text, extra]) =>
            placeholdersIn(text)
                .filter((name) => !known.has(name) && !extra.includes(name))
                .map((name) => `${field}: unknown placeholder {{${name}}}; known: ${[...PLACEHOLDER_NAMES, ...extra].join(', ')}`),
        ),
    );
}

function readRecipeFile(path: string): Recipe {
    const id = Path.basename(path, '.yaml');
    const where = Path.relative(process.cwd(), path) || path;
    if (!RECIPE_ID.test(id)) {
        throw new RecipeError(`${where}: the file name must be <id>.yaml with an id of lower-case letters, digits and dashes`);
    }

    let fields: unknown;
    try {
        fields = YAML.parse(Fs.readFileSync(path, 'utf8'), { prettyErrors: true, uniqueKeys: true });
    } catch (error) {
        throw new RecipeError(`${where}: not YAML: ${(error as Error).message}`);
    }

    const problems = recipeProblems(fields);
    if (problems.length > 0) {
        throw new RecipeError(`${where}: ${problems.join('; ')}`);
    }

    return { ...(fields as RecipeFields), id, origin: { kind: 'file', path } };
}

/** The recipes of the folders, in file-name order; an id found twice is an error naming both files. */
export function readRecipeFolders(folders: string[]): Recipe[] {
    const byId = new Map<string, Recipe>();
    for (const folder of folders) {
        if (!Fs.existsSync(folder)) {
            throw new RecipeError(`${folder}: no such recipe folder`);
        }

        const files = Fs.readdirSync(folder)
            .filter((file) => file.endsWith('.yaml'))
            .sort();
        for (const file of files) {
            const recipe = readRecipeFile(Path.join(folder, file));
            const earlier = byId.get(recipe.id);
            if (earlier?.origin.kind === 'file') {
                throw new RecipeError(`${Path.join(folder, file)}: recipe ${recipe.id} is also ${earlier.origin.path}`);
            }

            byId.set(recipe.id, recipe);
        }
    }

    return [...byId.values()];
}
