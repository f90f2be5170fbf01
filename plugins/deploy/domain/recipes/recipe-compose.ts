/**
 * A recipe's changes to the app's compose file, made when a run writes the file (the draft keeps the person's own
 * text): `env` added to the main service, `remove` taken out of it. Placeholders are filled afterwards, with the
 * rest of the file's, so a secret placeholder reaches the container only as a `${VARIABLE}` of the secrets file.
 */
import { parseCompose, renderCompose } from '../compose/compose-model.ts';
import type { ComposeSpec } from '../compose/compose-types.ts';
import { namesImage } from './image-match.ts';
import type { RecipeFields } from './recipe-types.ts';

/** The service running the recipe's image: the one the recipe names, else the one with its image, else the only one. */
export function mainService(spec: ComposeSpec, recipe: Pick<RecipeFields, 'image' | 'aliases' | 'service'>): string | undefined {
    const names = Object.keys(spec.services);
    if (recipe.service && names.includes(recipe.service)) {
        return recipe.service;
    }

    const patterns = [recipe.image, ...(recipe.aliases ?? [])];
    const running = names.find((name) => {
        const image = spec.services[name]?.image;
        return image !== undefined && patterns.some((pattern) => namesImage(pattern, image));
    });
    return running ?? (names.length === 1 ? names[0] : undefined);
}

/** The compose text with the recipe's variables set on its main service; unchanged when the recipe changes none. */
export function composeWithRecipe(text: string, recipe: RecipeFields): { text: string; service: string | undefined } {
    const spec = parseCompose(text);
    const service = mainService(spec, recipe);
    const changes = Object.keys(recipe.env ?? {}).length + (recipe.remove ?? []).length;
    const target = service === undefined ? undefined : spec.services[service];
    if (!target || changes === 0) {
        return { text, service };
    }

    const environment = { ...(target.environment ?? {}), ...(recipe.env ?? {}) };
    for (const name of recipe.remove ?? []) {
        delete environment[name];
    }

    spec.services[service as string] = { ...target, environment };
    return { text: renderCompose(spec), service };
}
