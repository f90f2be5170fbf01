import type { Lifecycle } from '@hapi/hapi';

import { NotFoundError } from '../../../../lib/errors.ts';
import { auditAs } from '../../audit-trail.ts';
import { catalog } from '../../domain/catalog/catalog-service.ts';
import { evidence } from '../../domain/evidence/evidence-service.ts';
import { type RecipeRequest, saveAppRecipe as saveRecipe } from '../../domain/recipes/recipe-saving.ts';
import { recipes } from '../../domain/recipes/recipe-service.ts';
import type { Recipe } from '../../domain/recipes/recipe-types.ts';
import { autoLoginAdapters } from '../../../sso/autologin/adapters.ts';
import { requireDeployCredentials } from '../../security.ts';

function recipeSummary(recipe: Recipe) {
    return {
        id: recipe.id,
        title: recipe.title,
        image: recipe.image,
        aliases: recipe.aliases ?? [],
        method: recipe.method,
        level: recipe.level,
        outcome: recipe.outcome ?? null,
        // What backs a shipped recipe's `tested`: the package it was tested on and the test file.
        tested: recipe.level === 'tested' && recipe.tested ? recipe.tested : null,
        origin:
            recipe.origin.kind === 'saved' ? { kind: 'saved', app: recipe.origin.app, savedAt: recipe.origin.savedAt } : { kind: 'file' },
        template: recipe.compose !== undefined,
    };
}

export const listRecipes: Lifecycle.Method = async (request) => {
    return { recipes: (await recipes(request.server).all()).map(recipeSummary) };
};

export const exportRecipe: Lifecycle.Method = async (request, h) => {
    const id = request.params.id as string;
    const recipe = await recipes(request.server).find(id);
    if (!recipe) {
        throw new NotFoundError(`recipe ${id} not found`);
    }

    return h
        .response(recipes(request.server).exportText(recipe))
        .type('application/yaml; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="${recipe.id}.yaml"`);
};

export const listCatalog: Lifecycle.Method = async (request) => {
    return await catalog(request.server).templates();
};

export const saveAppRecipe: Lifecycle.Method = async (request, h) => {
    const { user } = requireDeployCredentials(request);
    const name = request.params.name as string;
    const recipe = await saveRecipe(request.server, name, user, request.payload as RecipeRequest);
    auditAs(request, { details: { recipe: recipe.id, method: recipe.method, keys: Object.keys(recipe.env ?? {}).join(', ') } });
    return h.response({ recipe: recipeSummary(recipe) }).code(201);
};

export const detectSignIn: Lifecycle.Method = async (request) => {
    const { image } = request.query as { image: string };
    return await evidence(request.server).inspectAndDetect(image);
};

/** The adapters this server started with: plugins/sso/autologin/adapters/ and the folders of AUTOLOGIN_ADAPTERS_DIRS. */
export const listAutoLoginAdapters: Lifecycle.Method = async (request) => {
    const adapters = autoLoginAdapters(request.server.app.config.apps.autologinAdapterDirs);
    const names = adapters.names();
    const loaded = await Promise.all(names.map((name) => adapters.load(name)));
    return { adapters: names.map((name, index) => ({ name, title: loaded[index]?.title ?? name })) };
};
