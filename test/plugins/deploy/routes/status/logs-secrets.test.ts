// needs: docker
import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { dockerClient } from '../../../../../plugins/deploy/domain/host/docker-client.ts';
import type { AppLogs } from '../../../../../plugins/deploy/domain/status/status-service.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { buildTestImage, removeProjects } from '../../../../support/images.ts';
import { followEvents } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Crypto.randomBytes(4).toString('hex');
const APP = `printer-${SUFFIX}`;
const IMAGE = `gatehouse-test/printer:${SUFFIX}`;
const SECRETS = { DB_PASSWORD: 'correct-horse-battery-staple-7', API_TOKEN: 'tok "quoted" value/1&2' };
const SHARED_PASSWORD = 'shared-account-password-9';
const KEY = ['-----BEGIN TEST KEY-----', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 'BKcwggSjAgEAAoIBAQC7', '-----END TEST KEY-----'].join('\n');

/** Every spelling of a secret the container prints: as is, in JSON, in a URL, and a key's lines. */
const PRINTED = [
    ...Object.values(SECRETS),
    SHARED_PASSWORD,
    JSON.stringify(SECRETS.API_TOKEN).slice(1, -1),
    encodeURIComponent(SECRETS.API_TOKEN),
    'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
];

describe('deploy manager: container logs mask the app secrets for viewers', { timeout: 180_000 }, () => {
    let server: DeployTestServer;
    let viewer: Browser;
    let editor: Browser;

    const logText = async (browser: Browser) => {
        const response = await browser.get(`/api/apps/${APP}/logs`);
        expect(response.status, response.text).to.equal(200);
        return (response.body as AppLogs).services.flatMap((service) => service.lines.map((line) => line.text));
    };

    before(async () => {
        server = await deployTestServer();
        viewer = await server.signInAs('viewer');
        editor = await server.signInAs('editor');
        expect((await server.admin.post('/api/apps', { name: APP, image: 'gatehouse-test/printer', tag: SUFFIX })).status).to.equal(201);
        const saved = await server.admin.put(`/api/apps/${APP}/draft`, {
            secrets: { ...SECRETS, SIGNING_KEY: KEY },
            sharedPassword: SHARED_PASSWORD,
        });
        expect(saved.status, saved.text).to.equal(200);

        buildTestImage(IMAGE);
        const container = await dockerClient().createContainer({
            name: `${APP}-web-1`,
            Image: IMAGE,
            Labels: { 'com.docker.compose.project': APP, 'com.docker.compose.service': 'web', 'io.gatehouse.managed': 'true' },
            Env: [
                `DB_PASSWORD=${SECRETS.DB_PASSWORD}`,
                `API_TOKEN=${SECRETS.API_TOKEN}`,
                `SHARED=${SHARED_PASSWORD}`,
                `AS_JSON={"token":${JSON.stringify(SECRETS.API_TOKEN)}}`,
                `AS_URL=https://app:${encodeURIComponent(SECRETS.API_TOKEN)}@db.internal/app`,
                `SIGNING_KEY=${KEY}`,
            ],
            Cmd: ['sh', '-c', 'env | sort; echo "printed all"; exec sleep 3600'],
        });
        await container.start();
        await waitUntil('the container printed its environment', async () => (await logText(editor)).includes('printed all'), {
            timeoutMs: 30_000,
            intervalMs: 250,
        });
    });

    after(async () => {
        await removeProjects([APP], [IMAGE]);
        await server?.context.cleanup();
    });

    it('masks every spelling of the secrets for a viewer, and shows the rest of the lines', async () => {
        const lines = await logText(viewer);
        const text = lines.join('\n');
        for (const secret of PRINTED) {
            expect(text, secret).to.not.contain(secret);
        }

        expect(lines).to.include(['DB_PASSWORD=••••••••', 'API_TOKEN=••••••••', 'SHARED=••••••••', 'AS_JSON={"token":"••••••••"}']);
        expect(lines).to.include(['AS_URL=https://app:••••••••@db.internal/app', 'printed all']);
    });

    it('masks them on the live stream too, for a viewer', async () => {
        const followed = await followEvents(viewer, `/api/apps/${APP}/logs/stream?tail=100`);
        try {
            const lines = () =>
                followed.messages
                    .filter((message) => message.event === 'line')
                    .map((message) => (JSON.parse(message.data) as { text: string }).text);
            await waitUntil('the printed environment on the stream', () => lines().includes('printed all'), {
                timeoutMs: 30_000,
                intervalMs: 50,
            });
            const text = lines().join('\n');
            for (const secret of PRINTED) {
                expect(text, secret).to.not.contain(secret);
            }

            expect(lines()).to.include(['DB_PASSWORD=••••••••', 'AS_URL=https://app:••••••••@db.internal/app']);
        } finally {
            followed.close();
        }
    });

    it('shows the values to an editor, who may read the secrets', async () => {
        const text = (await logText(editor)).join('\n');
        expect(text).to.contain(`DB_PASSWORD=${SECRETS.DB_PASSWORD}`);
        expect(text).to.contain(`SHARED=${SHARED_PASSWORD}`);
    });
});
