import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { readRecipeFolders, SHIPPED_RECIPES_DIR } from '../../../../../plugins/deploy/domain/recipes/recipe-files.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const TRANSMISSION_TEST = 'test/plugins/deploy/routes/recipes/tested/transmission.test.ts';

function recipeText(tested?: { packaging: string; test: string }): string {
    return [
        'image: example/app',
        'title: Example',
        'method: basic',
        'level: tested',
        ...(tested ? ['tested:', `  packaging: ${tested.packaging}`, `  test: ${tested.test}`] : []),
        'sources: ["https://example.com/docs"]',
        '',
    ].join('\n');
}

function levelOf(fileName: string, text: string): string | undefined {
    const folder = temporaryDirectory('gatehouse-recipes-');
    Fs.writeFileSync(Path.join(folder, fileName), text);
    try {
        return readRecipeFolders([folder]).find((recipe) => `${recipe.id}.yaml` === fileName)?.level;
    } finally {
        Fs.rmSync(folder, { recursive: true, force: true });
    }
}

describe('a recipe’s tested level', () => {
    it('holds for a shipped recipe only while its test is there and names its file', () => {
        const shipped = readRecipeFolders([SHIPPED_RECIPES_DIR]);
        const tested = shipped.filter((recipe) => recipe.level === 'tested');
        expect(tested.map((recipe) => recipe.id)).to.include('transmission');
        for (const recipe of tested) {
            expect(recipe.tested, recipe.id).to.exist();
            const test = Fs.readFileSync(Path.join(SHIPPED_RECIPES_DIR, '..', recipe.tested?.test ?? ''), 'utf8');
            expect(test, recipe.id).to.contain(`recipes/${recipe.id}.yaml`);
        }
    });

    it('falls back to documented when the test named is missing or names another recipe', () => {
        const packaging = 'Debian 12 package example 1.0';
        expect(levelOf('transmission.yaml', recipeText({ packaging, test: TRANSMISSION_TEST }))).to.equal('tested');
        expect(levelOf('other-app.yaml', recipeText({ packaging, test: TRANSMISSION_TEST }))).to.equal('documented');
        expect(levelOf('transmission.yaml', recipeText({ packaging, test: 'test/removed/gone.test.ts' }))).to.equal('documented');
        // A recipe of the user's own folder that names no test keeps its word.
        expect(levelOf('own-app.yaml', recipeText())).to.equal('tested');
    });
});
