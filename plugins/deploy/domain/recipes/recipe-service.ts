/**
 * The recipes Gatehouse knows: the shipped files (read once, at start) and the recipes saved from working apps (in
 * the database, newest first, preferred: a saved recipe was checked with a real login here). Matching an image to
 * its recipe is image-match.ts's.
 */
import type { Server } from '@hapi/hapi';

import { now, toRfc3339 } from '../../../../lib/database.ts';
import { readCache, type ReadCache } from '../../../../lib/read-cache.ts';
import { yamlLibrary } from '../../../../lib/yaml-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { matchRecipe, type RecipeMatch } from './image-match.ts';
import { readRecipeFolders, SHIPPED_RECIPES_DIR } from './recipe-files.ts';
import type { Recipe, RecipeFields } from './recipe-types.ts';
import { Service } from '../../../../lib/service.ts';

export const SAVED_PREFIX = 'saved-';

/** The fields a recipe file holds, in the schema's order (what an export writes). */
const FIELD_ORDER: Array<keyof RecipeFields> = [
    'image',
    'aliases',
    'title',
    'description',
    'method',
    'level',
    'outcome',
    'env',
    'remove',
    'steps',
    'redirect',
    'adminClaim',
    'init',
    'initUser',
    'ownDoor',
    'login',
    'samlAcs',
    'adminUser',
    'paidOnly',
    'sources',
    'service',
    'compose',
    'backup',
];

export interface SavedRecipeInput {
    image: string;
    app: string;
    savedBy: string;
    fields: RecipeFields;
    notes?: string;
}

function toSavedRecipe(row: Record<string, unknown>): Recipe {
    const stored = JSON.parse(String(row.fields)) as RecipeFields & { notes?: string };
    return {
        ...stored,
        id: `${SAVED_PREFIX}${Number(row.id)}`,
        origin: { kind: 'saved', app: String(row.app_name), savedBy: String(row.saved_by), savedAt: toRfc3339(Number(row.saved_at)) },
    };
}

const MAX_REMEMBERED_MATCHES = 10_000;

export class RecipeService extends Service {
    #shipped: Recipe[] | undefined;
    /**
     * The saved recipes, kept until `dp_recipes` is written, by this server or by any other on the database (its
     * write counter, as the read caches use it).
     */
    readonly #saved: ReadCache<Recipe[]>;

    constructor(server: Server) {
        super(server);
        this.#saved = readCache(server, ['dp_recipes']);
    }

    /** The recipe files; read (and checked) on first use, which start-up makes early so that a bad file stops it. */
    shipped(): Recipe[] {
        this.#shipped ??= readRecipeFolders([SHIPPED_RECIPES_DIR, ...this.server.app.config.apps.recipeDirs]);
        return this.#shipped;
    }

    async saved(): Promise<Recipe[]> {
        return await this.#saved.get('saved', async () => (await this.knex('dp_recipes').orderBy('id', 'desc')).map(toSavedRecipe));
    }

    /**
     * What to compare to know whether the recipes changed since something was worked out from them: the saved list
     * as last read (read anew, it is another object, after a save by any server on the database).
     */
    async version(): Promise<object> {
        return await this.saved();
    }

    /** Every recipe, saved ones first. */
    async all(): Promise<Recipe[]> {
        return [...(await this.saved()), ...this.shipped()];
    }

    async find(id: string): Promise<Recipe | undefined> {
        if (id.startsWith(SAVED_PREFIX)) {
            const number = Number(id.slice(SAVED_PREFIX.length));
            const row = Number.isSafeInteger(number) ? await this.server.app.knex('dp_recipes').where({ id: number }).first() : undefined;
            return row ? toSavedRecipe(row) : undefined;
        }

        return this.shipped().find((recipe) => recipe.id === id);
    }

    /**
     * forImage's answers for the saved recipes as last read (an apps list asks for every app's): the list read anew
     * (after a save anywhere) is another array, which clears them; bounded, cleared when full.
     */
    #matches = new Map<string, RecipeMatch | null>();
    #matchesFor: Recipe[] | undefined;

    async forImage(image: string): Promise<RecipeMatch | null> {
        const saved = await this.saved();
        if (this.#matchesFor !== saved) {
            this.#matches.clear();
            this.#matchesFor = saved;
        }

        const known = this.#matches.get(image);
        if (known !== undefined) {
            return known;
        }

        const match = matchRecipe(image, [...saved, ...this.shipped()]);
        if (this.#matches.size >= MAX_REMEMBERED_MATCHES) this.#matches.clear();
        this.#matches.set(image, match);
        return match;
    }

    /** The app's recipe: the one it was made with while it exists, else the one for its image now. */
    async forApp(app: { image: string | null; recipeId: string | null }): Promise<Recipe | undefined> {
        const kept = app.recipeId ? await this.find(app.recipeId) : undefined;
        if (kept) {
            return kept;
        }

        return app.image ? ((await this.forImage(app.image))?.recipe ?? undefined) : undefined;
    }

    async save(input: SavedRecipeInput): Promise<Recipe> {
        const fields = { ...input.fields, ...(input.notes ? { notes: input.notes } : {}) };
        const [id] = await this.server.app
            .knex('dp_recipes')
            .insert({ image: input.image, app_name: input.app, fields: JSON.stringify(fields), saved_by: input.savedBy, saved_at: now() });
        const recipe = await this.find(`${SAVED_PREFIX}${id}`);
        if (!recipe) {
            throw new Error(`the saved recipe ${id} cannot be read back`);
        }

        return recipe;
    }

    /** The recipe as a file for `recipes/` (a saved one keeps its notes as a comment). */
    exportText(recipe: Recipe): string {
        const fields: Record<string, unknown> = {};
        for (const name of FIELD_ORDER) {
            if (recipe[name] !== undefined) {
                fields[name] = recipe[name];
            }
        }

        const origin =
            recipe.origin.kind === 'saved'
                ? `# Saved from the app ${recipe.origin.app} by ${recipe.origin.savedBy} on ${recipe.origin.savedAt}\n`
                : '';
        const notes = recipe.notes ? `${recipe.notes.replace(/^/gm, '# ')}\n` : '';
        return `${origin}${notes}${yamlLibrary().stringify(fields, { lineWidth: 0 })}`;
    }
}

export const recipes = defineService<RecipeService>('recipes', (server) => new RecipeService(server));
