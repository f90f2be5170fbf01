import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { RecipeError } from '../../../../plugins/deploy/domain/recipes/recipe-files.ts';
import { ROOT_DIR } from '../../../../server.ts';
import { deployTestServer } from '../../../helpers/deploy-session.ts';
import { createTestServer, freshDatabase, temporaryDirectory } from '../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

function adapterFile(title: string): string {
    return [
        `import type { AutoLoginAdapter } from '${ROOT_DIR}/plugins/sso/autologin/adapter-types.ts';`,
        '',
        `const adapter: AutoLoginAdapter = { title: '${title}', signIn: async () => ({ ok: false, reason: 'not here' }) };`,
        '',
        'export default adapter;',
        '',
    ].join('\n');
}

function recipeText(image: string, adapter: string): string {
    return [
        `image: ${image}`,
        'title: Dropped-in auto-login',
        'method: autologin',
        'level: documented',
        'sources: ["https://example.org/"]',
        'login:',
        `    adapter: ${adapter}`,
        '',
    ].join('\n');
}

/** Starting a server must fail: answers the error, the database and data folder removed. */
async function refusedStart(environment: Record<string, string>): Promise<Error> {
    const dataDir = temporaryDirectory();
    const database = await freshDatabase(dataDir);
    try {
        return await expect(createTestServer(environment, { dataDir, database })).to.reject();
    } finally {
        await database.drop();
        Fs.rmSync(dataDir, { recursive: true, force: true });
    }
}

interface Shown {
    app: { draft: { login?: { adapter: string } } };
}

// The end-to-end use (a deploy's check and a visitor's hand-off through nginx) is in
// test/plugins/deploy/routes/lifecycle/drop-in-parts.test.ts, which needs Docker.
describe('an auto-login adapter in a folder of AUTOLOGIN_ADAPTERS_DIRS is one, with no other edit', () => {
    it('is a login.adapter the API takes and a recipe may name; without the folder it is neither', async () => {
        const name = `dropped-${Crypto.randomBytes(3).toString('hex')}`;
        const adapters = temporaryDirectory('gatehouse-adapters-');
        const recipes = temporaryDirectory('gatehouse-recipes-');
        Fs.writeFileSync(Path.join(adapters, `${name}.ts`), adapterFile('Dropped in'));
        Fs.writeFileSync(Path.join(recipes, 'dropped.yaml'), recipeText(`example/${name}`, name));
        try {
            const server = await deployTestServer({ AUTOLOGIN_ADAPTERS_DIRS: adapters, RECIPES_DIRS: recipes });
            try {
                const editor = await server.signInAs('editor');
                expect((await editor.post('/api/apps', { name: 'plain', image: 'nginx' })).status).to.equal(201);
                const saved = await editor.put('/api/apps/plain/draft', { login: { adapter: name } });
                expect(saved.status, saved.text).to.equal(200);
                expect((saved.body as Shown).app.draft.login).to.equal({ adapter: name });
                const recipesShown = (await editor.get('/api/recipes')).body as { recipes: Array<{ id: string }> };
                expect(recipesShown.recipes.map((recipe) => recipe.id)).to.include('dropped');
            } finally {
                await server.context.cleanup();
            }

            const without = await deployTestServer();
            try {
                const editor = await without.signInAs('editor');
                expect((await editor.post('/api/apps', { name: 'plain', image: 'nginx' })).status).to.equal(201);
                const refused = await editor.put('/api/apps/plain/draft', { login: { adapter: name } });
                expect(refused.status).to.equal(422);
                expect(refused.text).to.contain('form');
            } finally {
                await without.context.cleanup();
            }

            const error = await refusedStart({ RECIPES_DIRS: recipes });
            expect(error).to.be.an.instanceof(RecipeError);
            expect(error.message).to.contain('dropped.yaml: login.adapter');
        } finally {
            Fs.rmSync(adapters, { recursive: true, force: true });
            Fs.rmSync(recipes, { recursive: true, force: true });
        }
    });

    it("stops the start when a file is not an adapter, or takes the name of one of the project's", async () => {
        const adapters = temporaryDirectory('gatehouse-adapters-');
        try {
            Fs.writeFileSync(Path.join(adapters, 'form.ts'), adapterFile('Another form'));
            const twice = await refusedStart({ AUTOLOGIN_ADAPTERS_DIRS: adapters });
            expect(twice.message).to.match(
                /an AutoLoginAdapter named form is both .*plugins\/sso\/autologin\/adapters\/form\.ts and .*form\.ts: a name is one file/,
            );

            Fs.rmSync(Path.join(adapters, 'form.ts'));
            Fs.writeFileSync(Path.join(adapters, 'broken.ts'), 'export default { title: "no signIn" };\n');
            const broken = await refusedStart({ AUTOLOGIN_ADAPTERS_DIRS: adapters });
            expect(broken.message).to.match(/broken\.ts must export an AutoLoginAdapter as its default/);
        } finally {
            Fs.rmSync(adapters, { recursive: true, force: true });
        }
    });
});
