// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { AppUpdates } from '../../../../../plugins/deploy/domain/updates/update-service.ts';
import type { DeployTestServer } from '../../../../helpers/deploy-session.ts';
import { backupsOf, backupTestServer, deployWithVolume, inApp, removeVolumes } from '../../../../support/backup-app.ts';
import { updates } from '../../../../../plugins/deploy/domain/updates/update-service.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { buildTestImage, buildWebImage, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';
import { runToEnd } from '../../../../support/sse.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const VERSIONED = `versioned-${SUFFIX}`;
const MOVING = `moving-${SUFFIX}`;
const AUTOMATIC = `automatic-${SUFFIX}`;

describe('deploy manager: updates of an app’s image, with rollback', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let repository: string;
    const images: string[] = [];

    const page = (version: string) => `<h1>release ${version}</h1>\n`;
    const updatesOf = async (app: string, query = '') => {
        const answer = await server.admin.get(`/api/apps/${app}/updates${query}`);
        expect(answer.status, answer.text).to.equal(200);
        return answer.body as AppUpdates;
    };
    const shown = async (app: string) => ((await server.admin.get(`/api/apps/${app}`)).body as { app: { tag: string; state: string } }).app;
    const update = async (app: string, tag: string) =>
        await runToEnd(server.admin, await server.admin.post(`/api/apps/${app}/update`, { tag }));
    /** Each test that needs VERSIONED on a tag brings it there (an update run) when another test left it elsewhere. */
    const onTag = async (tag: string) => {
        if ((await shown(VERSIONED)).tag !== tag) {
            const ended = await update(VERSIONED, tag);
            expect(ended.state, ended.text).to.equal('succeeded');
        }
    };

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        repository = `${services.exports.REGISTRY_URL}/gatehouse-test/release-${SUFFIX}`;
        for (const version of ['1.0.0', '1.0.1', '1.1.0', '2.0.0', '1.1.0-debug']) {
            images.push(buildWebImage(`${repository}:${version}`, page(version), true));
        }

        // 1.2.0 changes the app's data as a migration would, then fails to start: the update is to be undone, data too.
        images.push(
            buildTestImage(
                `${repository}:1.2.0`,
                { lines: ['CMD ["sh", "-c", "echo migrated by 1.2.0 > /data/state.txt; exit 1"]'] },
                true,
            ),
        );
        images.push(buildWebImage(`${repository}:stable`, page('stable one'), true));
        server = await backupTestServer(services, { BACKUP_PASSWORD: `updates-password-${SUFFIX}` });
        await deployWithVolume(server, VERSIONED, `${repository}:1.0.0`);
        await deployWithVolume(server, MOVING, `${repository}:stable`);
        await deployWithVolume(server, AUTOMATIC, `${repository}:1.0.0`);
    });

    after(async () => {
        await removeProjects([VERSIONED, MOVING, AUTOMATIC], images);
        removeVolumes([VERSIONED, MOVING, AUTOMATIC]);
        await server?.context.cleanup();
        services?.stop();
    });

    it('lists the newer tags of the version line, newest first, other majors only when asked', async () => {
        await onTag('1.0.0');
        expect(await updatesOf(VERSIONED)).to.equal({
            image: repository,
            tag: '1.0.0',
            versioned: true,
            updates: [
                { tag: '1.2.0', change: 'minor' },
                { tag: '1.1.0', change: 'minor' },
                { tag: '1.0.1', change: 'patch' },
            ],
            complete: true,
            automatic: 'off',
        });
        const all = await updatesOf(VERSIONED, '?otherMajors=true');
        expect(all.updates.map((candidate) => candidate.tag)).to.equal(['2.0.0', '1.2.0', '1.1.0', '1.0.1']);
    });

    it('updates to a newer tag after a backup, keeping the data', async () => {
        await onTag('1.0.0');
        inApp(VERSIONED, 'echo "written on 1.0.0" > /data/state.txt');
        const before = await backupsOf(server.admin, VERSIONED);
        const ended = await update(VERSIONED, '1.1.0');
        expect(ended.state, ended.text).to.equal('succeeded');
        expect(inApp(VERSIONED, 'cat /www/index.html')).to.equal(page('1.1.0').trim());
        expect(inApp(VERSIONED, 'cat /data/state.txt')).to.equal('written on 1.0.0');
        expect(await shown(VERSIONED)).to.include({ tag: '1.1.0', state: 'running' });
        const [newest, ...older] = await backupsOf(server.admin, VERSIONED);
        expect(older).to.equal(before);
        expect(newest?.reason).to.equal('before update');
        expect((await updatesOf(VERSIONED)).updates).to.equal([{ tag: '1.2.0', change: 'minor' }]);
    });

    it('puts back the image and the data when the new image fails', async () => {
        await onTag('1.1.0');
        inApp(VERSIONED, 'echo "written on 1.1.0" > /data/state.txt');
        const ended = await update(VERSIONED, '1.2.0');
        expect(ended.state, ended.text).to.equal('rolled back');
        expect(ended.text).to.contain('taken before the update');
        // The data 1.2.0 changed before it failed is as it was, and 1.1.0 serves again.
        expect(inApp(VERSIONED, 'cat /data/state.txt')).to.equal('written on 1.1.0');
        expect(inApp(VERSIONED, 'cat /www/index.html')).to.equal(page('1.1.0').trim());
        expect(await shown(VERSIONED)).to.include({ tag: '1.1.0', state: 'running' });
        const draft = ((await server.admin.get(`/api/apps/${VERSIONED}`)).body as { app: { draft: { compose: string } } }).app.draft;
        expect(draft.compose).to.contain(`${repository}:1.1.0`);
    });

    it('tells of a new image under a moving tag, and pulls it', async () => {
        expect(await updatesOf(MOVING)).to.include({ tag: 'stable', versioned: false, updates: [] });
        buildWebImage(`${repository}:stable`, page('stable two'), true);
        const [moved, ...more] = (await updatesOf(MOVING)).updates;
        expect(more).to.equal([]);
        expect(moved).to.include({ tag: 'stable', change: 'digest' });
        expect(moved?.digest).to.match(/^sha256:[0-9a-f]{64}$/);

        const ended = await update(MOVING, 'stable');
        expect(ended.state, ended.text).to.equal('succeeded');
        expect(inApp(MOVING, 'cat /www/index.html')).to.equal(page('stable two').trim());
        expect((await updatesOf(MOVING)).updates).to.equal([]);
    });

    it('updates an app by itself, as far as it asked, when the daily check finds an update', async () => {
        expect((await updatesOf(AUTOMATIC)).automatic).to.equal('off');
        const viewer = await server.signInAs('viewer');
        expect((await viewer.put(`/api/apps/${AUTOMATIC}/updates/automatic`, { automatic: 'patch' })).status).to.equal(403);
        expect((await server.admin.put(`/api/apps/${AUTOMATIC}/updates/automatic`, { automatic: 'major' })).status).to.equal(422);
        const chosen = await server.admin.put(`/api/apps/${AUTOMATIC}/updates/automatic`, { automatic: 'patch' });
        expect(chosen.status, chosen.text).to.equal(200);
        expect(chosen.body).to.equal({ automatic: 'patch' });

        // Patch versions only: 1.0.1, not 1.1.0; the apps that did not ask are left as they are.
        const found = await updates(server.context.server).checkAll();
        const started = found.find((entry) => entry.app === AUTOMATIC)?.runId;
        expect(started).to.be.a.number();
        expect(found.filter((entry) => entry.runId !== undefined).map((entry) => entry.app)).to.equal([AUTOMATIC]);
        const ended = await waitUntil(
            'the automatic update to end',
            async () => {
                const { runs } = (await server.admin.get(`/api/apps/${AUTOMATIC}/runs`)).body as {
                    runs: Array<{ id: number; state: string }>;
                };
                const run = runs.find((candidate) => candidate.id === started);
                return run && run.state !== 'running' ? run : undefined;
            },
            { timeoutMs: 240_000, intervalMs: 500 },
        );
        expect(ended.state).to.equal('succeeded');
        expect(await shown(AUTOMATIC)).to.include({ tag: '1.0.1' });
        expect(inApp(AUTOMATIC, 'cat /www/index.html')).to.equal(page('1.0.1').trim());
        const audit = (await server.admin.get(`/api/admin/audit?action=runs.update&target=${AUTOMATIC}`)).body as {
            entries: Array<{ actor: unknown; details?: { run?: number } }>;
        };
        expect(audit.entries.find((entry) => entry.details?.run === started)?.actor).to.equal(null);

        // Nothing newer within patch versions now: the next check starts nothing.
        expect((await updates(server.context.server).checkAll()).find((entry) => entry.app === AUTOMATIC)?.runId).to.be.undefined();
        expect((await server.admin.put(`/api/apps/${AUTOMATIC}/updates/automatic`, { automatic: 'off' })).body).to.equal({
            automatic: 'off',
        });
    });

    it('restoring the backup taken before an update brings the old tag back, in the app and its draft', async () => {
        await onTag('1.1.0');
        const updated = await update(VERSIONED, '1.0.1');
        expect(updated.state, updated.text).to.equal('succeeded');
        const [taken] = await backupsOf(server.admin, VERSIONED);
        expect(taken?.reason).to.equal('before update');
        const restored = await runToEnd(server.admin, await server.admin.post(`/api/apps/${VERSIONED}/backups/${taken?.id}/restore`));
        expect(restored.state, restored.text).to.equal('succeeded');
        expect(inApp(VERSIONED, 'cat /www/index.html')).to.equal(page('1.1.0').trim());
        const app = ((await server.admin.get(`/api/apps/${VERSIONED}`)).body as { app: { tag: string; draft: { compose: string } } }).app;
        expect(app.tag).to.equal('1.1.0');
        expect(app.draft.compose).to.contain(`${repository}:1.1.0`);
        expect((await updatesOf(VERSIONED)).updates.map((update) => update.tag)).to.equal(['1.2.0']);
    });

    it('refuses a malformed tag, a draft app and a viewer, writing nothing', async () => {
        const { tag } = await shown(VERSIONED);
        const malformed = await server.admin.post(`/api/apps/${VERSIONED}/update`, { tag: 'one two' });
        expect(malformed.status, malformed.text).to.equal(422);
        const created = await server.admin.post('/api/apps', { name: `draft-${SUFFIX}`, image: repository, tag: '1.0.0' });
        expect(created.status, created.text).to.equal(201);
        const draft = await server.admin.post(`/api/apps/draft-${SUFFIX}/update`, { tag: '1.0.1' });
        expect(draft.status, draft.text).to.equal(422);
        expect((await server.admin.get(`/api/apps/draft-${SUFFIX}/updates`)).status).to.equal(422);
        const viewer = await server.signInAs('viewer');
        expect((await viewer.post(`/api/apps/${VERSIONED}/update`, { tag: '1.0.1' })).status).to.equal(403);
        expect((await viewer.get(`/api/apps/${VERSIONED}/updates`)).status).to.equal(200);
        expect(await shown(VERSIONED)).to.include({ tag });
    });
});
