/**
 * A shipped recipe as a test applies it to an app built from Debian's package: the recipe file's own fields (method,
 * env, steps, login...) for the test's image instead of the images users run, in a folder of its own for
 * RECIPES_DIRS. The test file names the shipped file (`recipes/<id>.yaml`), which is what keeps the recipe `tested`.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import YAML from 'yaml';

import { ROOT_DIR } from '../../lib/paths.ts';
import { temporaryDirectory } from '../helpers/server.ts';

export interface TestedRecipe {
    /** The copy's id (`<id>-debian`), as the app's identity names its recipe. */
    id: string;
    /** The folder holding the copy, for RECIPES_DIRS. */
    folder: string;
    /** The shipped recipe's fields, as read from its file. */
    shipped: Record<string, unknown>;
}

/** `recipeFile`: `recipes/<id>.yaml`; `image`: the test image's repository (no tag). */
export function recipeForTestImage(recipeFile: string, image: string): TestedRecipe {
    const shipped = YAML.parse(Fs.readFileSync(Path.join(ROOT_DIR, recipeFile), 'utf8')) as Record<string, unknown>;
    // The catalog's template and the images users run are the shipped recipe's; what it sets up is kept as it is.
    const { aliases: _aliases, compose: _compose, tag: _tag, category: _category, tested: _tested, ...setUp } = shipped;
    const id = `${Path.basename(recipeFile, '.yaml')}-debian`;
    const folder = temporaryDirectory('gatehouse-tested-recipe-');
    Fs.writeFileSync(Path.join(folder, `${id}.yaml`), YAML.stringify({ ...setUp, image, level: 'tested' }));
    return { id, folder, shipped };
}
