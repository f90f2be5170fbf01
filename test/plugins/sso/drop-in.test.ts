import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { methodNames } from '../../../plugins/sso/methods.ts';
import { deployTestServer } from '../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

interface Shown {
    app: { draft: { account?: string }; identity: { options: Array<{ method: string; title: string; section: string }> } };
}

describe('a sign-in method dropped into a folder of SIGN_IN_METHODS_DIRS is one, with no other edit', () => {
    it('is offered, saved as the account, and named by a recipe; gone with its file', async () => {
        const name = `dropped${Crypto.randomBytes(3).toString('hex')}`;
        const methodsDir = temporaryDirectory('gatehouse-drop-in-methods-');
        Fs.writeFileSync(
            Path.join(methodsDir, `${name}.ts`),
            [
                // Types only, erased when the file is loaded: a method needs nothing of the project at run time.
                "import type { SignInMethod } from 'gatehouse/plugins/sso/method-types.ts';",
                '',
                `const method: SignInMethod = { title: 'Dropped in', singleSignOn: true, needs: [], values: () => ({ note: 'dropped in' }) };`,
                '',
                'export default method;',
                '',
            ].join('\n'),
        );
        const recipes = temporaryDirectory('gatehouse-drop-in-recipes-');
        Fs.writeFileSync(
            Path.join(recipes, 'dropped.yaml'),
            [
                `image: example/${name}`,
                'title: Dropped in',
                `method: ${name}`,
                'level: documented',
                'sources: ["https://example.org/"]',
                '',
            ].join('\n'),
        );
        try {
            const server = await deployTestServer({ RECIPES_DIRS: recipes, SIGN_IN_METHODS_DIRS: methodsDir });
            try {
                expect(methodNames()).to.include(name);
                const editor = await server.signInAs('editor');
                expect((await editor.post('/api/apps', { name: 'plain', image: 'nginx' })).status).to.equal(201);
                const offered = (await editor.get('/api/apps/plain')).body as Shown;
                expect(offered.app.identity.options.find((option) => option.method === name)).to.include({
                    title: 'Dropped in',
                    section: 'more',
                });

                const saved = await editor.put('/api/apps/plain/draft', { account: name });
                expect(saved.status, saved.text).to.equal(200);
                expect((saved.body as Shown).app.draft.account).to.equal(name);

                // A recipe may name it, and the app made from the recipe's image is offered it as the recipe's.
                expect((await editor.post('/api/apps', { name: 'fromrecipe', image: `example/${name}` })).status).to.equal(201);
                const fromRecipe = (await editor.get('/api/apps/fromrecipe')).body as Shown;
                expect(fromRecipe.app.identity.options.find((option) => option.method === name)?.section).to.equal('evidence');
            } finally {
                await server.context.cleanup();
            }
        } finally {
            Fs.rmSync(methodsDir, { recursive: true, force: true });
            Fs.rmSync(recipes, { recursive: true, force: true });
        }

        const without = await deployTestServer();
        try {
            expect(methodNames()).to.not.include(name);
            const editor = await without.signInAs('editor');
            expect((await editor.post('/api/apps', { name: 'plain', image: 'nginx' })).status).to.equal(201);
            const refused = await editor.put('/api/apps/plain/draft', { account: name });
            expect(refused.status).to.equal(422);
        } finally {
            await without.context.cleanup();
        }
    });
});
