import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { notifications } from '../../../../../plugins/deploy/domain/notifications/notification-service.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../support/webhook-receiver.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

// A wait between attempts far longer than the test: the first server is surely waiting when it stops.
const ENVIRONMENT = { WEBHOOK_ALLOWED_HOST_LIST: 'loopback', WEBHOOK_RETRY_BACKOFF_MS: '600000', WEBHOOK_MAX_ATTEMPTS: '3' };

describe('notifications: a delivery’s retries survive its server', () => {
    let first: DeployTestServer;
    let second: TestServer | undefined;
    let hooks: WebhookReceiver;

    const rowOf = async (id: number) => await first.context.database.knex('dp_notification_deliveries').where({ id }).first();

    before(async () => {
        hooks = await startWebhookReceiver({ failFirst: 1 });
        first = await deployTestServer(ENVIRONMENT);
        const saved = await first.admin.put('/api/account/notifications', {
            webhook: { url: hooks.url, secret: 'a-webhook-secret-1', kinds: ['backup-failed'] },
        });
        expect(saved.status, saved.text).to.equal(200);
    });

    after(async () => {
        await second?.server.stop();
        await first?.context.cleanup();
        await hooks?.close();
    });

    it('is held by its server while it waits, let go when that server stops, and retried by another', async () => {
        const event = { kind: 'backup-failed' as const, app: 'ledger', summary: 'the backup of ledger failed', details: { run: 7 } };
        expect(await notifications(first.context.server).notify(event)).to.equal(1);
        // The first attempt is answered 500: the delivery waits for its second, held by the first server.
        const failed = await waitUntil('the first attempt recorded', async () => {
            const row = await first.context.database.knex('dp_notification_deliveries').orderBy('id', 'desc').first();
            return row && Number(row.attempts) === 1 ? row : undefined;
        });
        const id = Number(failed.id);
        expect(failed).to.include({ status: 'pending', details: JSON.stringify({ run: 7 }) });
        expect(Number(failed.held_until)).to.be.above(Number(failed.next_attempt_at));

        // A second server on the same database leaves a held delivery alone.
        second = await createTestServer(ENVIRONMENT, { dataDir: first.context.dataDir, database: first.context.database });
        await second.server.start();
        expect(await notifications(second.server).resumeDeliveries()).to.equal(0);

        // The first server stops during the wait: the delivery stays pending, held by no one.
        await first.context.server.stop();
        const letGo = await rowOf(id);
        expect(letGo).to.include({ status: 'pending' });
        expect(letGo?.held_until).to.equal(null);
        expect(hooks.received).to.have.length(1);

        // Not before it is due; then (its wait passed: moved back here rather than waited for) the other server takes it
        // up and delivers it, as the same delivery, with the same facts.
        const secondServer = second.server;
        expect(await notifications(secondServer).resumeDeliveries()).to.equal(0);
        await first.context.database
            .knex('dp_notification_deliveries')
            .where({ id })
            .update({ next_attempt_at: Date.now() - 1 });
        expect(await notifications(secondServer).resumeDeliveries()).to.equal(1);
        await notifications(secondServer).settled();
        expect(hooks.received).to.have.length(2);
        expect(hooks.received[1]).to.include({ delivery: id, kind: 'backup-failed', app: 'ledger', details: { run: 7 } });
        const delivered = await rowOf(id);
        expect(delivered).to.include({ status: 'delivered', held_until: null, next_attempt_at: null });
        expect(Number(delivered?.attempts)).to.equal(2);
        expect(await notifications(secondServer).resumeDeliveries()).to.equal(0);
    });
});
