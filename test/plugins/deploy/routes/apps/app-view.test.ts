import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { apps } from '../../../../../plugins/deploy/domain/apps/app-service.ts';
import { evidence } from '../../../../../plugins/deploy/domain/evidence/evidence-service.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface AppBody {
    app: { draft: { secrets: Record<string, string> }; identity: { recipe: { id: string } | null; options: Array<{ method: string }> } };
}

describe('deploy manager: one app, as cheaply as it can be shown', () => {
    let server: DeployTestServer;
    let editor: Browser;
    let viewer: Browser;

    before(async () => {
        server = await deployTestServer();
        editor = await server.signInAs('editor');
        viewer = await server.signInAs('viewer');
    });

    after(async () => {
        await server.context.cleanup();
    });

    /** How many sealed values the server opens while `work` runs. */
    async function openedDuring(work: () => Promise<unknown>): Promise<number> {
        const { sealer } = server.context.server.app;
        const open = sealer.open.bind(sealer);
        let opened = 0;
        sealer.open = (...args: Parameters<typeof open>) => {
            opened += 1;
            return open(...args);
        };
        try {
            await work();
        } finally {
            sealer.open = open;
        }

        return opened;
    }

    it("opens nothing sealed for a viewer, whose answer holds no sealed value; an editor's shows the secrets", async () => {
        expect((await editor.post('/api/apps', { name: 'vaulted', image: 'nginx' })).status).to.equal(201);
        const saved = await editor.put('/api/apps/vaulted/draft', {
            account: 'basic',
            sharedUser: 'team',
            sharedPassword: 'shared-password-never-shown',
            secrets: { DB_PASSWORD: 'db-password-never-shown', EMPTY: '' },
        });
        expect(saved.status, saved.text).to.equal(200);

        let read: Awaited<ReturnType<Browser['get']>> | undefined;
        expect(await openedDuring(async () => (read = await viewer.get('/api/apps/vaulted')))).to.equal(0);
        expect(read?.status).to.equal(200);
        expect((read?.body as AppBody).app.draft.secrets).to.equal({ DB_PASSWORD: '••••••••', EMPTY: '' });
        expect(read?.text).to.not.contain('never-shown');

        const forEditor = await editor.get('/api/apps/vaulted');
        expect((forEditor.body as AppBody).app.draft.secrets).to.equal({ DB_PASSWORD: 'db-password-never-shown', EMPTY: '' });
        expect(forEditor.text).to.not.contain('shared-password-never-shown');
    });

    it('masks for a viewer the secrets saved before the masked copy was kept, opening them only once', async () => {
        expect((await editor.post('/api/apps', { name: 'older', image: 'nginx' })).status).to.equal(201);
        expect((await editor.put('/api/apps/older/draft', { secrets: { TOKEN: 'older-token-never-shown' } })).status).to.equal(200);
        await server.context.server.app.knex('dp_apps').where({ name: 'older' }).update({ secrets_masked: null });

        expect(await openedDuring(() => viewer.get('/api/apps/older'))).to.equal(1);
        let read: Awaited<ReturnType<Browser['get']>> | undefined;
        expect(await openedDuring(async () => (read = await viewer.get('/api/apps/older')))).to.equal(0);
        expect((read?.body as AppBody).app.draft.secrets).to.equal({ TOKEN: '••••••••' });
        expect(read?.text).to.not.contain('never-shown');
    });

    it("works an image's evidence out once, again when its tag or recipe changes", async () => {
        const service = evidence(server.context.server);
        const detect = service.detect.bind(service);
        const asked: string[] = [];
        service.detect = async (image, found, recipe) => {
            asked.push(`${image}:${recipe?.id ?? '-'}`);
            return await detect(image, found, recipe);
        };
        try {
            expect((await editor.post('/api/apps', { name: 'books', image: 'lscr.io/linuxserver/bookstack', tag: '1' })).status).to.equal(
                201,
            );
            const first = (await viewer.get('/api/apps/books')).body as AppBody;
            expect(first.app.identity.recipe?.id).to.equal('bookstack');
            const again = (await editor.get('/api/apps/books')).body as AppBody;
            expect(again.app.identity.options).to.equal(first.app.identity.options);
            expect(asked).to.equal(['lscr.io/linuxserver/bookstack:bookstack']);

            await server.context.server.app.knex('dp_apps').where({ name: 'books' }).update({ tag: '2' });
            await viewer.get('/api/apps/books');
            expect(asked.length).to.equal(2);

            await apps(server.context.server).keepRecipe('books', 'forgejo');
            await viewer.get('/api/apps/books');
            await viewer.get('/api/apps/books');
            expect(asked).to.equal([
                'lscr.io/linuxserver/bookstack:bookstack',
                'lscr.io/linuxserver/bookstack:bookstack',
                'lscr.io/linuxserver/bookstack:forgejo',
            ]);
        } finally {
            service.detect = detect;
        }
    });
});
