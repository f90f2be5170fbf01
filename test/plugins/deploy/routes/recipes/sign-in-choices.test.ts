import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { Browser } from '../../../../helpers/browser.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { temporaryDirectory } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

interface AppIdentity {
    app: { identity: { options: Array<{ method: string }> } };
}

describe('deploy manager: what a person chooses a sign-in from', () => {
    let deploy: DeployTestServer;
    let editor: Browser;
    let viewer: Browser;

    before(async () => {
        deploy = await deployTestServer({ HUB_URL: 'http://127.0.0.1:9', HUB_REGISTRY_URL: 'http://127.0.0.1:9' });
        editor = await deploy.signInAs('editor');
        viewer = await deploy.signInAs('viewer');
    });

    after(async () => {
        await deploy?.context.cleanup();
    });

    it('lists the auto-login adapters there are, each with its title (editors)', async () => {
        const answer = await editor.get('/api/sso/autologin-adapters');
        expect(answer.status).to.equal(200);
        const { adapters } = answer.body as { adapters: Array<{ name: string; title: string }> };
        expect(adapters.map((adapter) => adapter.name)).to.include(['form', 'status-monitor']);
        expect(adapters.find((adapter) => adapter.name === 'form')?.title).to.equal('A classic HTML login form');
        expect((await viewer.get('/api/sso/autologin-adapters')).status).to.equal(403);
    });

    it('lists an adapter dropped into a folder of AUTOLOGIN_ADAPTERS_DIRS too', async () => {
        const folder = temporaryDirectory('gatehouse-listed-adapters-');
        const types = Path.join(ROOT_DIR, 'plugins/sso/autologin/adapter-types.ts');
        Fs.writeFileSync(
            Path.join(folder, 'kiosk.ts'),
            `import type { AutoLoginAdapter } from '${types}';\nexport default { title: 'A kiosk', signIn: async () => ({ ok: false, reason: 'no' }) } satisfies AutoLoginAdapter;\n`,
        );
        const withFolder = await deployTestServer({ AUTOLOGIN_ADAPTERS_DIRS: folder });
        try {
            const answer = await (await withFolder.signInAs('editor')).get('/api/sso/autologin-adapters');
            const { adapters } = answer.body as { adapters: Array<{ name: string; title: string }> };
            expect(adapters).to.include({ name: 'kiosk', title: 'A kiosk' });
        } finally {
            await withFolder.context.cleanup();
            Fs.rmSync(folder, { recursive: true, force: true });
        }
    });

    it("offers the none method only where the app's recipe turns its login off, as the sign-in change requires", async () => {
        expect((await editor.post('/api/apps', { name: 'plain', image: 'example/plain' })).status).to.equal(201);
        expect((await editor.post('/api/apps', { name: 'tools', image: 'corentinth/it-tools' })).status).to.equal(201);
        const methods = async (app: string) =>
            ((await editor.get(`/api/apps/${app}`)).body as AppIdentity).app.identity.options.map((option) => option.method);
        expect(await methods('plain')).to.not.include('none');
        expect(await methods('plain')).to.include(['oidc', 'own']);
        expect(await methods('tools')).to.include('none');
    });
});
