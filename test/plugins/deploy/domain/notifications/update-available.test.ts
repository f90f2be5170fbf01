// needs: docker

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { notifications } from '../../../../../plugins/deploy/domain/notifications/notification-service.ts';
import { updates } from '../../../../../plugins/deploy/domain/updates/update-service.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { backupTestServer, deployWithVolume, removeVolumes } from '../../../../support/backup-app.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../support/webhook-receiver.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const MOVED = `moving-${SUFFIX}`;
const STILL = `steady-${SUFFIX}`;

describe('notifications: an update of a deployed image', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let hooks: WebhookReceiver;
    let movedImage: string;
    let stillImage: string;

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        hooks = await startWebhookReceiver();
        movedImage = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/moving:${SUFFIX}`, '<h1>one</h1>\n', true);
        stillImage = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/steady:${SUFFIX}`, '<h1>steady</h1>\n', true);
        server = await backupTestServer(services, { WEBHOOK_ALLOWED_HOST_LIST: 'loopback' });
        const saved = await server.admin.put('/api/account/notifications', {
            webhook: { url: hooks.url, secret: 'a-webhook-secret-1', kinds: ['update-available'] },
        });
        expect(saved.status, saved.text).to.equal(200);
        await deployWithVolume(server, MOVED, movedImage);
        await deployWithVolume(server, STILL, stillImage);
    });

    after(async () => {
        await removeProjects([MOVED, STILL], [movedImage, stillImage]);
        removeVolumes([MOVED, STILL]);
        await server?.context.cleanup();
        await hooks?.close();
        services?.stop();
    });

    it('finds nothing while every deployed image is what its tag names', async () => {
        const earlier = hooks.received.length;
        expect(await updates(server.context.server).checkAll()).to.equal([]);
        await notifications(server.context.server).settled();
        expect(hooks.received.slice(earlier)).to.equal([]);
    });

    it('tells of an image whose tag now names another, once, and only for that app', async () => {
        const earlier = hooks.received.length;
        // A new image pushed under the same tag, as a publisher's new release is.
        buildWebImage(movedImage, '<h1>two</h1>\n', true);
        const found = await updates(server.context.server).checkAll();
        expect(found.map((update) => update.app)).to.equal([MOVED]);
        expect(found[0]).to.include({ image: movedImage.slice(0, movedImage.lastIndexOf(':')), tag: SUFFIX, versioned: false });
        expect(found[0]?.updates[0]?.digest).to.match(/^sha256:[0-9a-f]{64}$/);
        await notifications(server.context.server).settled();
        expect(hooks.received.slice(earlier)).to.have.length(1);
        expect(hooks.received[earlier]).to.include({
            kind: 'update-available',
            app: MOVED,
            summary: `an update of ${movedImage} is available for ${MOVED}`,
        });

        // The same update found again is not told again; what was told is kept in the database (where another server
        // on it claims the same row), not in this server's memory.
        expect(await updates(server.context.server).checkAll()).to.have.length(1);
        await notifications(server.context.server).settled();
        expect(hooks.received.slice(earlier)).to.have.length(1);
        const told = await server.context.database.knex('dp_app_updates').where({ app_name: MOVED }).first('told');
        expect(told?.told).to.match(/^digest:sha256:[0-9a-f]{64}$/);

        // The lists mark it (GET /api/updates), until an update run moves the app to the new image.
        const known = (await server.admin.get('/api/updates')).body as { updates: Array<{ app: string }> };
        expect(known.updates.map((entry) => entry.app)).to.equal([MOVED]);
        const updated = await runToEnd(server.admin, await server.admin.post(`/api/apps/${MOVED}/update`, { tag: SUFFIX }));
        expect(updated.state, updated.text).to.equal('succeeded');
        expect(((await server.admin.get('/api/updates')).body as { updates: unknown[] }).updates).to.equal([]);
        expect(await updates(server.context.server).checkAll()).to.equal([]);
    });
});
