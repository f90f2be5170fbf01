// needs: alone
// alone: it drops a method file into plugins/sso/methods/ for its duration, which every other file would see as a method.
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { methodNames } from '../../../plugins/sso/methods.ts';
import { ROOT_DIR } from '../../../server.ts';
import { deployTestServer } from '../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const METHODS_DIR = Path.join(ROOT_DIR, 'plugins', 'sso', 'methods');

interface Shown {
    app: { draft: { account?: string }; identity: { options: Array<{ method: string; title: string; section: string }> } };
}

describe('a sign-in method dropped into plugins/sso/methods/ is one, with no other edit', () => {
    it('is offered, saved as the account, and named by a recipe; gone with its file', async () => {
        const name = `dropped${Crypto.randomBytes(3).toString('hex')}`;
        const file = Path.join(METHODS_DIR, `${name}.ts`);
        Fs.writeFileSync(
            file,
            [
                "import type { SignInMethod } from '../method-types.ts';",
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
            expect(methodNames()).to.include(name);
            const server = await deployTestServer({ RECIPES_DIRS: recipes });
            try {
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
            Fs.rmSync(file, { force: true });
            Fs.rmSync(recipes, { recursive: true, force: true });
        }

        expect(methodNames()).to.not.include(name);
        const without = await deployTestServer();
        try {
            const editor = await without.signInAs('editor');
            expect((await editor.post('/api/apps', { name: 'plain', image: 'nginx' })).status).to.equal(201);
            const refused = await editor.put('/api/apps/plain/draft', { account: name });
            expect(refused.status).to.equal(422);
        } finally {
            await without.context.cleanup();
        }
    });
});
