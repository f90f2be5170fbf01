import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { Ajv } from 'ajv';

import { SHIPPED_RECIPES_DIR } from '../../../../../plugins/deploy/domain/recipes/recipe-files.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('recipes/recipe.schema.json', () => {
    // Start compiles it without checking it against the meta-schema (that check cost more than the compile): here it is.
    it('is a valid JSON Schema (draft-07, as Ajv reads it)', () => {
        const schema = JSON.parse(Fs.readFileSync(Path.join(SHIPPED_RECIPES_DIR, 'recipe.schema.json'), 'utf8')) as object;
        const ajv = new Ajv({ allErrors: true, strict: true });
        expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).to.be.true();
    });

    it('is refused by the meta-schema check when it is not one', () => {
        const ajv = new Ajv({ allErrors: true, strict: true });
        expect(ajv.validateSchema({ type: 'object', properties: { image: { type: 'text' } } })).to.be.false();
    });
});
