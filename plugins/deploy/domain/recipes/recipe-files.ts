/**
 * The shipped recipes: every `<id>.yaml` of the recipe folders (the project's `recipes/`, then RECIPES_DIRS), each
 * checked against `recipes/recipe.schema.json` and for placeholders outside the seed's list. A bad file stops the
 * start, naming the file and the field. The build checks the project's own files (checkedRecipes), and a start of the
 * build takes its word for a file of the same text checked with the same schema, sign-in methods and auto-login
 * adapters: it then need not load ajv nor compile the schema, which were most of the recipes' share of a start.
 */
import Fs from 'node:fs';
import { createRequire } from 'node:module';
import Path from 'node:path';

import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';

import { APP_PATH_FORMAT, APP_PATH_RULE, isAppPath } from '../../../../lib/app-urls.ts';
import { sha256Hex } from '../../../../lib/crypto.ts';
import { ValidationError } from '../../../../lib/errors.ts';
import { CODE_DIR, ROOT_DIR, RUNNING_BUILT } from '../../../../lib/paths.ts';
import { fillYamlPlaceholders } from '../../../../lib/placeholder-fill.ts';
import { isCachedYaml, parseYaml } from '../../../../lib/yaml-cache.ts';
import { checkAcsPath } from '../../../sso/method-types.ts';
import { PLACEHOLDER_NAMES, placeholdersIn } from '../../../sso/placeholders.ts';
import { parseRepositoryName } from '../hub/image-reference.ts';
import type { Recipe, RecipeFields } from './recipe-types.ts';
import type { Definitions } from '../../../../lib/spec/schema-to-joi.ts';
import { deploySpecDefinitions, startedAdapterNames, startedMethodNames } from '../apps/spec-definitions.ts';

export const SHIPPED_RECIPES_DIR = Path.join(ROOT_DIR, 'recipes');
const SCHEMA_FILE = Path.join(SHIPPED_RECIPES_DIR, 'recipe.schema.json');
/** What the build writes into dist/: the recipe files it found valid (see checkedRecipes). */
export const CHECKED_RECIPES_FILE = 'checked-recipes.json';
const RECIPE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** Where a catalog template's compose file puts the image and the loopback port the app gets. */
export const TEMPLATE_PLACEHOLDERS = ['IMAGE', 'PORT'] as const;

export class RecipeError extends Error {}

interface RecipeSchema {
    properties: {
        method: { enum?: string[] };
        paidOnly: { items: { enum?: string[] } };
        login: { properties: { adapter: { enum?: string[] } } };
    };
}

/**
 * The schema with the sign-in methods of the last start as the values of `method` and `paidOnly`, and its
 * auto-login adapters as those of `login.adapter`.
 */
function withPlugins(schema: RecipeSchema, methods: string[], adapters: string[]): RecipeSchema {
    schema.properties.method.enum = methods;
    schema.properties.paidOnly.items.enum = methods.filter((method) => method !== 'own');
    schema.properties.login.properties.adapter.enum = adapters;
    return schema;
}

/** Compiled for one start's definitions: a method or adapter file dropped in counts from the next start, as in the specs. */
let validator: { definitions: Definitions; validate: ValidateFunction } | undefined;

function validate(fields: unknown): ErrorObject[] {
    const definitions = deploySpecDefinitions();
    if (validator?.definitions !== definitions) {
        // The schema is the project's own file, checked against JSON Schema's meta-schema by its test: compiling
        // the meta-schema to check it again here was most of the recipes' share of every start.
        const { Ajv: AjvClass } = createRequire(import.meta.url)('ajv') as { Ajv: typeof Ajv };
        const ajv = new AjvClass({ allErrors: true, strict: true, validateSchema: false });
        ajv.addFormat(APP_PATH_FORMAT, { type: 'string', validate: isAppPath });
        const schema = withPlugins(
            JSON.parse(Fs.readFileSync(SCHEMA_FILE, 'utf8')) as RecipeSchema,
            startedMethodNames(),
            startedAdapterNames(),
        );
        validator = { definitions, validate: ajv.compile(schema) };
    }

    return validator.validate(fields) ? [] : (validator.validate.errors ?? []);
}

function describeError(error: ErrorObject): string {
    const field = error.instancePath === '' ? '(the recipe)' : error.instancePath.slice(1).replaceAll('/', '.');
    const extra = 'additionalProperty' in error.params ? ` (${String(error.params.additionalProperty)})` : '';
    const allowed = 'allowedValues' in error.params ? `: ${(error.params.allowedValues as unknown[]).join(', ')}` : '';
    if (error.keyword === 'format' && error.params.format === APP_PATH_FORMAT) {
        return `${field}: ${APP_PATH_RULE}`;
    }

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

/** The recipe's image as the Docker reference grammar has it: it goes into a catalog app's compose file. */
function imageProblems(recipe: RecipeFields): string[] {
    try {
        parseRepositoryName(recipe.image);
        return [];
    } catch (error) {
        return [`image: ${(error as Error).message}`];
    }
}

/** A compose template must be YAML: its placeholders are filled in its values. */
function templateProblems(recipe: RecipeFields): string[] {
    try {
        // A template the build parsed is YAML (lib/yaml-cache.ts); any other is parsed here.
        if (recipe.compose !== undefined && !isCachedYaml(recipe.compose)) {
            fillYamlPlaceholders(recipe.compose, {});
        }

        return [];
    } catch (error) {
        return [`compose: ${(error as Error).message}`];
    }
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
    const acsProblem = recipe.samlAcs === undefined ? undefined : checkAcsPath(recipe.samlAcs);
    return ownDoor.concat(
        acsProblem ? [`samlAcs: ${acsProblem}`] : [],
        imageProblems(recipe),
        templateProblems(recipe),
        renderedTexts(fields as RecipeFields).flatMap(([field, text, extra]) =>
            placeholdersIn(text)
                .filter((name) => !known.has(name) && !extra.includes(name))
                .map((name) => `${field}: unknown placeholder {{${name}}}; known: ${[...PLACEHOLDER_NAMES, ...extra].join(', ')}`),
        ),
    );
}

/** The problems of a recipe as it would be applied; a saved one is checked again, as it came from one app's draft. */
export function appliedRecipeProblems(recipe: Recipe): string[] {
    const { id: _id, origin: _origin, notes: _notes, ...fields } = recipe;
    return recipeProblems(fields);
}

/** Refuses (422) to apply a recipe whose fields fail the checks a recipe file passes: its paths first of all. */
export function refuseBadRecipe(recipe: Recipe): void {
    const problems = appliedRecipeProblems(recipe);
    if (problems.length > 0) {
        throw new ValidationError(`the recipe ${recipe.id} (${recipe.title}) cannot be applied: ${problems.join('; ')}`);
    }
}

/** What a check of a recipe file depends on besides its text and the code: the schema, the sign-in methods and the adapters. */
function checkKey(): string {
    return sha256Hex(JSON.stringify([Fs.readFileSync(SCHEMA_FILE, 'utf8'), startedMethodNames(), startedAdapterNames()]));
}

export interface CheckedRecipes {
    key: string;
    /** The sha256 of each file's text. */
    files: string[];
}

/** The files of the project's recipe folder that pass the checks, for the build to write (CHECKED_RECIPES_FILE). */
export function checkedRecipes(): CheckedRecipes {
    const texts = Fs.readdirSync(SHIPPED_RECIPES_DIR)
        .filter((file) => file.endsWith('.yaml'))
        .map((file) => Fs.readFileSync(Path.join(SHIPPED_RECIPES_DIR, file), 'utf8'));
    const valid = texts.filter((text) => {
        try {
            return recipeProblems(parseYaml(text, { prettyErrors: true, uniqueKeys: true })).length === 0;
        } catch {
            return false;
        }
    });
    return { key: checkKey(), files: valid.map((text) => sha256Hex(text)).sort() };
}

/** The texts the build found valid with this start's schema, methods and adapters (none from the sources, or after a change). */
function textsCheckedByBuild(): Set<string> {
    const file = Path.join(CODE_DIR, CHECKED_RECIPES_FILE);
    if (!RUNNING_BUILT || !Fs.existsSync(file)) {
        return new Set();
    }

    const checked = JSON.parse(Fs.readFileSync(file, 'utf8')) as CheckedRecipes;
    return checked.key === checkKey() ? new Set(checked.files) : new Set();
}

function readRecipeFile(path: string, checkedByBuild: Set<string>): Recipe {
    const id = Path.basename(path, '.yaml');
    const where = Path.relative(process.cwd(), path) || path;
    if (!RECIPE_ID.test(id)) {
        throw new RecipeError(`${where}: the file name must be <id>.yaml with an id of lower-case letters, digits and dashes`);
    }

    const text = Fs.readFileSync(path, 'utf8');
    let fields: unknown;
    try {
        fields = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
    } catch (error) {
        throw new RecipeError(`${where}: not YAML: ${(error as Error).message}`);
    }

    const problems = checkedByBuild.has(sha256Hex(text)) ? [] : recipeProblems(fields);
    if (problems.length > 0) {
        throw new RecipeError(`${where}: ${problems.join('; ')}`);
    }

    const recipe = fields as RecipeFields;
    return { ...recipe, level: backedLevel(recipe, id, path), id, origin: { kind: 'file', path } };
}

/**
 * A shipped recipe is `tested` only while the test its `tested.test` names is there and names the recipe's file
 * (`recipes/<id>.yaml`, which it applies): a recipe whose test is removed, or that names none, is `documented`.
 * A recipe of the user's own folders (RECIPES_DIRS) keeps the level it says, unless the test it names is missing.
 */
function backedLevel(recipe: RecipeFields, id: string, path: string): RecipeFields['level'] {
    if (recipe.level !== 'tested') {
        return recipe.level;
    }

    if (!recipe.tested) {
        return Path.dirname(path) === SHIPPED_RECIPES_DIR ? 'documented' : 'tested';
    }

    const testFile = Path.join(ROOT_DIR, recipe.tested.test);
    const names = Fs.existsSync(testFile) && Fs.readFileSync(testFile, 'utf8').includes(`recipes/${id}.yaml`);
    return names ? 'tested' : 'documented';
}

/** The recipes of the folders, in file-name order; an id found twice is an error naming both files. */
export function readRecipeFolders(folders: string[]): Recipe[] {
    const checkedByBuild = textsCheckedByBuild();
    const byId = new Map<string, Recipe>();
    for (const folder of folders) {
        if (!Fs.existsSync(folder)) {
            throw new RecipeError(`${folder}: no such recipe folder`);
        }

        const files = Fs.readdirSync(folder)
            .filter((file) => file.endsWith('.yaml'))
            .sort();
        for (const file of files) {
            const recipe = readRecipeFile(Path.join(folder, file), checkedByBuild);
            const earlier = byId.get(recipe.id);
            if (earlier?.origin.kind === 'file') {
                throw new RecipeError(`${Path.join(folder, file)}: recipe ${recipe.id} is also ${earlier.origin.path}`);
            }

            byId.set(recipe.id, recipe);
        }
    }

    return [...byId.values()];
}
