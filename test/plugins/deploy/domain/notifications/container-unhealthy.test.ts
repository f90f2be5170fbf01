// needs: docker
import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { deployTestServer } from '../../../../helpers/deploy-session.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { notifications } from '../../../../../plugins/deploy/domain/notifications/notification-service.ts';
import { resourceStats } from '../../../../../plugins/deploy/domain/stats/resource-stats.ts';
import { buildTestImage, removeProjects } from '../../../../support/images.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../../support/webhook-receiver.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Crypto.randomBytes(4).toString('hex');
const APP = `ailing-${SUFFIX}`;
const OTHER = `elsewhere-${SUFFIX}`;
const IMAGE = `gatehouse-test/ailing:${SUFFIX}`;

/**
 * A health check that passes while /ok exists: the test removes it to make the container unhealthy. Its timeout is
 * long and it takes three failures, so a check that is merely slow on a loaded machine does not turn it unhealthy early.
 */
const HEALTHY_WHILE_OK = { Test: ['CMD-SHELL', 'test -f /ok'], Interval: 1_000_000_000, Retries: 3, Timeout: 30_000_000_000 };

describe('notifications: a container turning unhealthy', { timeout: 240_000 }, () => {
    let server: DeployTestServer;
    let hooks: WebhookReceiver;

    before({ timeout: 180_000 }, async () => {
        hooks = await startWebhookReceiver();
        server = await deployTestServer({ STATS_INTERVAL_SECONDS: '1', WEBHOOK_ALLOWED_HOST_LIST: 'loopback' });
        const saved = await server.admin.put('/api/account/notifications', {
            webhook: { url: hooks.url, secret: 'a-webhook-secret-1', kinds: ['container-unhealthy'] },
        });
        expect(saved.status, saved.text).to.equal(200);
        const created = await server.admin.post('/api/apps', { name: APP, image: 'gatehouse-test/ailing', tag: SUFFIX });
        expect(created.status).to.equal(201);
        buildTestImage(IMAGE);
    });

    after(async () => {
        await removeProjects([APP, OTHER], [IMAGE]);
        await server?.context.cleanup();
        await hooks?.close();
    });

    const createHealthChecked = async (app: string) => {
        const { default: Docker } = await import('dockerode');
        const container = await new Docker().createContainer({
            name: `${app}-web-1`,
            Image: IMAGE,
            Labels: { 'com.docker.compose.project': app, 'com.docker.compose.service': 'web', 'io.gatehouse.managed': 'true' },
            Cmd: ['sh', '-c', 'touch /ok && exec sleep 3600'],
            Healthcheck: HEALTHY_WHILE_OK,
        });
        await container.start();
        return container;
    };

    it('tells who asked for it once per turn to unhealthy, for this server’s apps only', async () => {
        await createHealthChecked(APP);
        // A container of an app this server does not have: its health is none of its users' business.
        await createHealthChecked(OTHER);
        const { default: Docker } = await import('dockerode');
        const health = async (name: string) =>
            ((await new Docker().getContainer(name).inspect()) as { State: { Health?: { Status: string } } }).State.Health?.Status;
        await waitUntil(
            'both containers healthy',
            async () => (await health(`${APP}-web-1`)) === 'healthy' && (await health(`${OTHER}-web-1`)) === 'healthy',
            {
                timeoutMs: 60_000,
                intervalMs: 200,
            },
        );
        expect(hooks.received).to.equal([]);

        for (const name of [`${APP}-web-1`, `${OTHER}-web-1`]) {
            const exec = await new Docker().getContainer(name).exec({ Cmd: ['rm', '/ok'] });
            await exec.start({});
        }

        await waitUntil('the webhook heard of the unhealthy container', () => hooks.received.length > 0, {
            timeoutMs: 60_000,
            intervalMs: 200,
        });
        expect(hooks.received[0]).to.include({
            kind: 'container-unhealthy',
            app: APP,
            summary: `the web container of ${APP} is unhealthy`,
        });
        expect(hooks.received[0]?.details).to.include({ container: `${APP}-web-1`, service: 'web' });

        // Three more readings of the same unhealthy container tell nothing more, and the other app's nothing at all.
        const samples = () => resourceStats(server.context.server).history(APP).containers[0]?.samples.length ?? 0;
        const now = samples();
        await waitUntil('three more readings of the containers', () => samples() >= now + 3, { timeoutMs: 60_000, intervalMs: 200 });
        await notifications(server.context.server).settled();
        expect(hooks.received).to.have.length(1);
    });
});
