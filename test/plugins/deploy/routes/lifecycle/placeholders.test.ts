import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

/** The value of the security review (issue 27): an admin account name that would add a volume to the compose file. */
const volumeAdding = (dataDir: string) => `x\n    volumes:\n      - ${dataDir}:/gh:ro`;

describe('deploy manager: placeholders and names cannot change the compose file', () => {
    let server: DeployTestServer;
    let editor: Browser;
    let listDir: string;

    const newApp = async (prefix: string): Promise<string> => {
        const name = `${prefix}-${Crypto.randomBytes(3).toString('hex')}`;
        const created = await editor.post('/api/apps', { name, image: 'example/placeholder-app' });
        expect(created.status, created.text).to.equal(201);
        return name;
    };

    before(async () => {
        listDir = temporaryDirectory('gatehouse-catalog-');
        const list = [
            { type: 1, title: 'Split tag', image: 'example/split:1\n    privileged: true' },
            { type: 1, title: 'Good tag', image: 'example/good:1.2' },
        ];
        Fs.writeFileSync(Path.join(listDir, 'templates.json'), JSON.stringify({ version: '2', templates: list }));
        server = await deployTestServer({ CATALOG_URLS: Path.join(listDir, 'templates.json') });
        editor = await server.signInAs('editor');
    });

    after(async () => {
        await server?.context.cleanup();
        Fs.rmSync(listDir, { recursive: true, force: true });
    });

    it('refuses an admin or shared account name that is not a plain name, and saves nothing', async () => {
        const name = await newApp('names');
        const hostile = volumeAdding(server.context.dataDir);
        for (const field of ['adminUser', 'sharedUser']) {
            const draft = await editor.put(`/api/apps/${name}/draft`, { [field]: hostile });
            expect(draft.status, draft.text).to.equal(422);
            expect((draft.body as { error: string }).error).to.contain(field);
            const signIn = await editor.post(`/api/apps/${name}/sso`, { account: 'basic', [field]: 'bob"; id > /proof; echo "' });
            expect(signIn.status, signIn.text).to.equal(422);
            expect((signIn.body as { error: string }).error).to.contain(field);
        }

        const shown = (await editor.get(`/api/apps/${name}`)).body as { app: { draft: Record<string, unknown> } };
        expect(shown.app.draft.adminUser).to.not.exist();
        expect(shown.app.draft.sharedUser).to.not.exist();
        expect((await editor.put(`/api/apps/${name}/draft`, { adminUser: 'first.last+ops@example.com' })).status).to.equal(200);
    });

    it('lints the compose file as it will be written: a risk a placeholder brings in refuses the deploy', async () => {
        const name = await newApp('filled');
        const compose = [
            'services:',
            '  app:',
            '    image: example/placeholder-app:latest',
            '    cap_add: ["{{ADMIN_USER}}"]',
            '    ports:',
            '      - "127.0.0.1:18080:80"',
            '',
        ].join('\n');
        expect(
            (await editor.put(`/api/apps/${name}/draft`, { compose, adminUser: 'SYS_ADMIN', auth: { access: 'public' } })).status,
        ).to.equal(200);

        const refused = await editor.post(`/api/apps/${name}/deploy`, {});
        expect(refused.status, refused.text).to.equal(422);
        expect((refused.body as { error: string }).error).to.contain('as it will be written');
        expect((refused.body as { error: string }).error).to.contain('SYS_ADMIN');
        expect(Fs.existsSync(Path.join(server.context.config.apps.appsDir, name, 'compose.yaml'))).to.be.false();
        expect(((await editor.get(`/api/apps/${name}/runs`)).body as { runs: unknown[] }).runs).to.equal([]);
    });

    it('refuses an image or tag with a line break or a space when an app is made, and makes nothing', async () => {
        const name = `split-${Crypto.randomBytes(3).toString('hex')}`;
        for (const body of [
            { name, image: 'example/app\n    privileged: true' },
            { name, image: 'example/app', tag: '1\n    privileged: true' },
            { name, image: 'example/app', tag: '1 2' },
        ]) {
            const refused = await editor.post('/api/apps', body);
            expect(refused.status, refused.text).to.equal(422);
        }

        expect((await editor.get(`/api/apps/${name}`)).status).to.equal(404);
    });

    it('skips a catalog entry whose image tag would split into compose keys, with its reason', async () => {
        const answer = await editor.get('/api/catalog');
        expect(answer.status, answer.text).to.equal(200);
        const body = answer.body as { templates: Array<{ title: string; id: string }>; sources: Array<{ skipped: number }> };
        const titles = body.templates.map((template) => template.title);
        expect(titles).to.include('Good tag');
        expect(titles).to.not.include('Split tag');
        expect(body.sources.reduce((total, source) => total + source.skipped, 0)).to.equal(1);

        const good = body.templates.find((template) => template.title === 'Good tag');
        const created = await editor.post('/api/apps', { name: `good-${Crypto.randomBytes(3).toString('hex')}`, templateId: good?.id });
        expect(created.status, created.text).to.equal(201);
        expect((created.body as { app: { draft: { compose: string } } }).app.draft.compose).to.contain('image: example/good:1.2');
    });
});
