import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { RecipeError, recipeProblems } from '../../../../../plugins/deploy/domain/recipes/recipe-files.ts';
import { recipes } from '../../../../../plugins/deploy/domain/recipes/recipe-service.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, temporaryDirectory } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** A path that reads as another host (127.0.0.1:9) once its dot segment is removed. */
const HOSTILE_PATH = '/.//127.0.0.1:9/x';
const RECIPE_FIELDS = { title: 'Notes', method: 'autologin' as const, level: 'tested' as const, sources: ['https://example.org/notes'] };

interface Option {
    method: string;
    section: string;
    recommended: boolean;
    applies?: { recipe: string; from: string; login?: { adapter: string; path?: string }; problems: string[] };
}

describe("deploy manager: an app's paths are paths on the app", () => {
    let deploy: DeployTestServer;
    let editor: Browser;

    before(async () => {
        deploy = await deployTestServer({ HUB_URL: 'http://127.0.0.1:9', HUB_REGISTRY_URL: 'http://127.0.0.1:9' });
        editor = await deploy.signInAs('editor');
    });

    after(async () => {
        await deploy?.context.cleanup();
    });

    it('refuses a login path or ACS path that is not a path on the app (422), and keeps the draft as it was', async () => {
        expect((await editor.post('/api/apps', { name: 'paths', image: 'example/paths' })).status).to.equal(201);
        for (const path of [HOSTILE_PATH, '/%2e//127.0.0.1:9/x', '//127.0.0.1:9/x', '/\\127.0.0.1:9/x', 'https://127.0.0.1:9/x']) {
            const draft = await editor.put('/api/apps/paths/draft', { login: { adapter: 'form', path } });
            expect(draft.status, path).to.equal(422);
            expect((draft.body as { error: string }).error, path).to.contain('path must be a path on the app');
            const sso = await editor.post('/api/apps/paths/sso', {
                account: 'autologin',
                sharedUser: 'a',
                login: { adapter: 'form', path },
            });
            expect(sso.status, path).to.equal(422);
        }

        expect((await editor.put('/api/apps/paths/draft', { samlAcs: HOSTILE_PATH })).status).to.equal(422);
        expect((await editor.post('/api/apps/paths/sso', { account: 'saml', samlAcs: `/a/..//127.0.0.1:9/acs` })).status).to.equal(422);
        const app = (await editor.get('/api/apps/paths')).body as { app: { draft: Record<string, unknown> } };
        expect(app.app.draft.login).to.not.exist();
        expect(app.app.draft.samlAcs).to.not.exist();
        expect((await editor.put('/api/apps/paths/draft', { login: { adapter: 'form', path: '/doku.php?do=login' } })).status).to.equal(
            200,
        );
    });

    it('a recipe saved with such a path (before this check) shows what it would change, and applying it is refused', async () => {
        await recipes(deploy.context.server).save({
            image: 'example/saved-notes',
            app: 'other',
            savedBy: 'someone@example.com',
            fields: { image: 'example/saved-notes', ...RECIPE_FIELDS, login: { adapter: 'form', path: HOSTILE_PATH } },
        });
        expect((await editor.post('/api/apps', { name: 'notes', image: 'example/saved-notes' })).status).to.equal(201);

        const identity = ((await editor.get('/api/apps/notes')).body as { app: { identity: { options: Option[] } } }).app.identity;
        const autologin = identity.options.find((option) => option.method === 'autologin');
        expect(autologin?.applies?.from).to.contain('saved from the app other by someone@example.com');
        expect(autologin?.applies?.login).to.equal({ adapter: 'form', path: HOSTILE_PATH });
        expect(autologin?.applies?.problems.join()).to.contain('login.path: must be a path on the app');
        expect(autologin?.recommended).to.be.false();

        for (const answer of [
            await editor.post('/api/apps/notes/sso', { account: 'recipe', sharedUser: 'a', sharedPassword: 'b' }),
            await editor.post('/api/apps/notes/deploy', {}),
        ]) {
            expect(answer.status).to.equal(422);
            expect((answer.body as { error: string }).error).to.match(/the recipe saved-\d+ \(Notes\) cannot be applied: login\.path/);
        }
    });

    it('a recipe is saved from an app only with paths on the app', () => {
        const fields = { image: 'example/notes', ...RECIPE_FIELDS };
        expect(recipeProblems({ ...fields, login: { adapter: 'form', path: '/login' } })).to.equal([]);
        expect(recipeProblems({ ...fields, login: { adapter: 'form', path: HOSTILE_PATH } })).to.equal([
            'login.path: must be a path on the app: /, then no //, no . or .. segment, no backslash, space or control character',
        ]);
        expect(recipeProblems({ ...fields, samlAcs: '/a/../b' })).to.have.length(1);
        expect(recipeProblems({ ...fields, redirect: '//evil.example/cb' })).to.have.length(1);
    });
});

describe('deploy manager: a recipe file with a path off the app stops the start', () => {
    it('refuses it, naming the file and the field', async () => {
        const folder = temporaryDirectory('gatehouse-recipes-');
        try {
            const text = ['image: a/b', 'title: B', 'method: autologin', 'level: tested', 'sources: ["https://example.org/"]'];
            Fs.writeFileSync(
                Path.join(folder, 'hostile.yaml'),
                [...text, 'login:', '  adapter: form', `  path: "${HOSTILE_PATH}"`, ''].join('\n'),
            );
            const error = await expect(createTestServer({ RECIPES_DIRS: folder })).to.reject(RecipeError);
            expect(error.message).to.match(/hostile\.yaml: login\.path: must be a path on the app/);
        } finally {
            Fs.rmSync(folder, { recursive: true, force: true });
        }
    });
});
