/**
 * The backups benchmark: a backup and a restore of an app whose named volume holds 1 GB (random bytes: nothing for
 * restic to deduplicate or compress), each against `tar` of the same volume through the engine (a container of the
 * app's image with the volume mounted, the archive written to a file on the same disk); and an update run (a backup
 * first, pull, recreate, health) against a restart run of the same app.
 */
import { spawn } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import { type Browser } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/server.ts';
import { volumeCompose } from '../test/support/backup-app.ts';
import { buildWebImage, docker } from '../test/support/images.ts';
import { type RunningServices, startServices } from '../test/support/services.ts';
import { followRun, signIn, startRun, wallClock } from './app-runs.ts';
import { type BenchFigure, medianOfRounds, seconds, startGatehouse } from './harness.ts';

const APP = 'benchbackup';
const VOLUME = `${APP}_data`;
const BASE_DOMAIN = 'apps.test';
const SIZE_MB = Number(process.env.BENCH_BACKUP_MB ?? 1024);
const ROUNDS = Number(process.env.BENCH_BACKUP_ROUNDS ?? 2);
const BACKUP_TARGET = 1.5;
const ARCHIVE = 'volume.tar';

/** Runs a command to its end; answers the wall time. */
function timed(command: string, args: string[], environment: NodeJS.ProcessEnv = process.env): Promise<number> {
    return new Promise((resolve, reject) => {
        const startedAt = wallClock();
        let errors = '';
        const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: environment });
        child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-2_000)));
        child.once('error', reject);
        child.once('exit', (code) =>
            code === 0 ? resolve(wallClock() - startedAt) : reject(new Error(`${command} ${args.join(' ')}: exit ${code}: ${errors}`)),
        );
    });
}

/** What a run's log said, each line with its time from the request: `1.20 s Backed up volume ...`. */
type Timeline = string[];

/** A run started by `path` and followed to its end; answers its wall time from the request, and its timeline. */
async function timedRunWithTimeline(admin: Browser, path: string, payload: unknown = {}): Promise<{ time: number; timeline: Timeline }> {
    const startedAt = wallClock();
    const runId = await startRun(admin, 'post', path, payload);
    const run = await followRun(admin, runId);
    if (run.state !== 'succeeded') {
        throw new Error(`${path}: the run ${run.state}: ${run.error}; ${run.events.map((event) => event.text).join(' | ')}`);
    }

    const timeline = [
        ...run.events.map((event) => `${seconds(event.at - startedAt)} ${event.text}`),
        `${seconds(run.endAt - startedAt)} end`,
    ];
    return { time: run.endAt - startedAt, timeline };
}

async function timedRun(admin: Browser, path: string, payload: unknown = {}): Promise<number> {
    return (await timedRunWithTimeline(admin, path, payload)).time;
}

interface Session {
    admin: Browser;
    image: string;
    repository: string;
    workDir: string;
    /** restic by hand, as the notes' second baseline: its environment, and the volume's folder on this host. */
    handRestic: NodeJS.ProcessEnv;
    volumeFolder: string;
}

/**
 * The baseline backup: the volume's files as a tar archive in the work folder (bind-mounted), written by a container of
 * the app's image, so that no byte goes through the docker command's attach stream.
 */
const tarBackup = (session: Session) =>
    timed('docker', [
        'run',
        '--rm',
        '-v',
        `${VOLUME}:/volume:ro`,
        '-v',
        `${session.workDir}:/out`,
        session.image,
        'tar',
        '-cf',
        `/out/${ARCHIVE}`,
        '-C',
        '/',
        'volume',
    ]);

/** The baseline restore: the volume emptied and the archive's files put back, by a container of the same image. */
const tarRestore = (session: Session) =>
    timed('docker', [
        'run',
        '--rm',
        '-v',
        `${VOLUME}:/volume`,
        '-v',
        `${session.workDir}:/out:ro`,
        session.image,
        'sh',
        '-c',
        `rm -rf /volume/* && tar -xf /out/${ARCHIVE} -C /`,
    ]);

async function latestBackupId(session: Session): Promise<number> {
    const listed = await session.admin.get(`/api/apps/${APP}/backups`);
    const [latest] = (listed.body as { backups: Array<{ id: number }> }).backups;
    if (!latest) throw new Error('no backup listed');
    return latest.id;
}

interface Round {
    backup: number;
    tarBackup: number;
    restore: number;
    tarRestore: number;
    /** restic by hand: the volume's folder backed up into a repository of its own (the data new to it too). */
    resticBackup: number;
    backupTimeline: Timeline;
    restoreTimeline: Timeline;
}

/**
 * One round: new random bytes written (so that each backup holds new data, as the first backup of a volume does),
 * Gatehouse's backup and the tar archive in alternating order, then the restore of each.
 */
async function round(session: Session, index: number): Promise<Round> {
    docker('exec', `${APP}-web-1`, 'sh', '-c', `dd if=/dev/urandom of=/data/blob bs=1M count=${SIZE_MB} 2>/dev/null && sync`);
    const archive = Path.join(session.workDir, ARCHIVE);
    const gatehouseFirst = index % 2 === 0;
    const backUp = () => timedRunWithTimeline(session.admin, `/api/apps/${APP}/backups`);
    let backup: Awaited<ReturnType<typeof backUp>>;
    let tar = 0;
    if (gatehouseFirst) {
        backup = await backUp();
        tar = await tarBackup(session);
    } else {
        tar = await tarBackup(session);
        backup = await backUp();
    }

    const resticBackup = await timed('restic', ['backup', '--host', 'bench', session.volumeFolder], session.handRestic);
    const id = await latestBackupId(session);
    // A restore by hand: the app stopped, the archive put back, the app started again.
    const tarBack =
        (await timed('docker', ['stop', `${APP}-web-1`])) +
        (await tarRestore(session)) +
        (await timed('docker', ['start', `${APP}-web-1`]));
    const restore = await timedRunWithTimeline(session.admin, `/api/apps/${APP}/backups/${id}/restore`);
    Fs.rmSync(archive, { force: true });
    return {
        backup: backup.time,
        tarBackup: tar,
        restore: restore.time,
        tarRestore: tarBack,
        resticBackup,
        backupTimeline: backup.timeline,
        restoreTimeline: restore.timeline,
    };
}

async function updateAgainstRestart(session: Session, tags: string[]): Promise<{ update: number[]; restart: number[]; backup: number[] }> {
    const update: number[] = [];
    const restart: number[] = [];
    const backup: number[] = [];
    for (const tag of tags) {
        restart.push(await timedRun(session.admin, `/api/apps/${APP}/action`, { action: 'restart' }));
        const startedAt = wallClock();
        const runId = await startRun(session.admin, 'post', `/api/apps/${APP}/update`, { tag });
        const run = await followRun(session.admin, runId);
        if (run.state !== 'succeeded') throw new Error(`the update to ${tag} ${run.state}: ${run.error}`);
        update.push(run.endAt - startedAt);
        const made = run.events.find((event) => event.text.startsWith('Backup '));
        const first = run.events[0];
        backup.push(made && first ? made.at - first.at : Number.NaN);
    }

    return { update, restart, backup };
}

export async function benchBackups(): Promise<BenchFigure[]> {
    const cleanups: Array<() => Promise<void> | void> = [];
    try {
        const services: RunningServices = await startServices();
        cleanups.push(() => services.stop());
        const repository = `${services.exports.REGISTRY_URL}/gatehouse-bench/${APP}`;
        const tags = ['1', '2', '3'];
        for (const tag of tags) buildWebImage(`${repository}:${tag}`, `<h1>backup bench ${tag}</h1>\n`, true);
        cleanups.push(() => {
            quietly('rm', '-f', `${APP}-web-1`);
            quietly('volume', 'rm', '-f', VOLUME);
            for (const tag of tags) quietly('rmi', '-f', `${repository}:${tag}`);
        });
        const workDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-backups-'));
        cleanups.push(() => Fs.rmSync(workDir, { recursive: true, force: true }));
        const { ACME_DIRECTORY_URL: _acme, ...withoutAcme } = services.exports;
        const gatehouse = await startGatehouse({
            ...withoutAcme,
            BASE_DOMAIN,
            APPS_FIRST_HOST_PORT: String(await freePort()),
            BACKUP_PASSWORD: 'bench-backup-password',
            BACKUP_REPOSITORY: Path.join(workDir, 'repository'),
            // The baselines watch nothing after their start: neither does Gatehouse here (its checks still run).
            DEPLOY_SETTLE_SECONDS: '0',
        });
        cleanups.push(() => gatehouse.stop());
        const admin = await signIn(`http://127.0.0.1:${gatehouse.port}`, gatehouse.dataDir);
        const image = `${repository}:1`;
        const created = await admin.post('/api/apps', { name: APP, image: repository, tag: '1' });
        const hostPort = (created.body as { app: { hostPort: number } }).app.hostPort;
        await admin.put(`/api/apps/${APP}/draft`, { compose: volumeCompose(image, hostPort), auth: { access: 'public' } });
        await timedRun(admin, `/api/apps/${APP}/deploy`);
        const handRestic = {
            ...process.env,
            RESTIC_REPOSITORY: Path.join(workDir, 'by-hand'),
            RESTIC_PASSWORD: 'bench-by-hand',
            RESTIC_CACHE_DIR: Path.join(workDir, 'by-hand-cache'),
        };
        await timed('restic', ['init'], handRestic);
        const volumeFolder = docker('volume', 'inspect', '-f', '{{.Mountpoint}}', VOLUME).trim();
        const session = { admin, image, repository, workDir, handRestic, volumeFolder };

        const rounds: Round[] = [];
        for (let index = 0; index < ROUNDS; index += 1) {
            rounds.push(await round(session, index));
            const last = rounds.at(-1);
            console.log(
                `  round ${index + 1}: backup ${seconds(last?.backup ?? 0)} (tar ${seconds(last?.tarBackup ?? 0)}), ` +
                    `restore ${seconds(last?.restore ?? 0)} (tar ${seconds(last?.tarRestore ?? 0)})`,
            );
            console.log(`    backup: ${last?.backupTimeline.join(' | ')}\n    restore: ${last?.restoreTimeline.join(' | ')}`);
        }

        const updates = await updateAgainstRestart(session, tags.slice(1));
        return figures(rounds, updates);
    } finally {
        for (const cleanup of cleanups.reverse()) {
            try {
                await cleanup();
            } catch (error) {
                console.error(`cleanup: ${(error as Error).message}`);
            }
        }
    }
}

/** A clean-up command whose failure means there was nothing left to remove. */
function quietly(...args: string[]): void {
    try {
        docker(...args);
    } catch {
        // Already gone.
    }
}

function figures(rounds: Round[], updates: { update: number[]; restart: number[]; backup: number[] }): BenchFigure[] {
    const list = (values: number[]) => values.map(seconds).join(', ');
    const of = (name: 'backup' | 'tarBackup' | 'restore' | 'tarRestore') => rounds.map((entry) => entry[name]);
    const last = rounds.at(-1);
    const setting =
        `${rounds.length} rounds; before each, ${SIZE_MB} MB of new random bytes written into the app's named volume (nothing ` +
        'to deduplicate or compress); Gatehouse in its own process (server.ts as `npm start` runs it, SQLite), driven over HTTP, ' +
        'times from the request to the run end on its event stream; the restic repository a local folder on the same disk as ' +
        "the baseline's archive; Gatehouse and the baseline alternate which goes first; DEPLOY_SETTLE_SECONDS=0 (10 s by " +
        'default: the time a started app is watched to stay up, which no baseline spends).';
    const backup = medianOfRounds(of('backup'));
    const tarBackupTime = medianOfRounds(of('tarBackup'));
    const restore = medianOfRounds(of('restore'));
    const tarRestoreTime = medianOfRounds(of('tarRestore'));
    const update = medianOfRounds(updates.update);
    const restart = medianOfRounds(updates.restart);
    const updateBackup = medianOfRounds(updates.backup);
    const updateBound = 1.5 * restart + updateBackup;
    return [
        {
            name: `POST /api/apps/{name}/backups of a ${SIZE_MB} MB volume (restic, local repository)`,
            measured: `median ${seconds(backup)} (${list(of('backup'))})`,
            baseline: `median ${seconds(tarBackupTime)} (${list(of('tarBackup'))}): tar of the same volume by a container of the app's image, to a file in a bind-mounted folder`,
            ratio: backup / tarBackupTime,
            target: `<= ${BACKUP_TARGET}`,
            met: backup / tarBackupTime <= BACKUP_TARGET,
            notes: `${setting} The backup takes the recipe's dump, pauses the app, has restic read the volume from the engine's folder of it on this host into a snapshot of its own (encrypted, deduplicated, compressed as restic decides), unpauses it, then stores the app's folder and site in another snapshot. restic by hand (\`restic backup\` of the volume's folder into a repository of its own, the bytes new to it too): median ${seconds(medianOfRounds(rounds.map((entry) => entry.resticBackup)))} (${list(rounds.map((entry) => entry.resticBackup))}), so Gatehouse's backup took ${(backup / medianOfRounds(rounds.map((entry) => entry.resticBackup))).toFixed(2)} times restic's own. The last round's backup, from the request: ${last?.backupTimeline.join(' | ')}.`,
        },
        {
            name: `POST /api/apps/{name}/backups/{id}/restore of a ${SIZE_MB} MB volume`,
            measured: `median ${seconds(restore)} (${list(of('restore'))})`,
            baseline: `median ${seconds(tarRestoreTime)} (${list(of('tarRestore'))}): a restore by hand: docker stop, the volume emptied and the tar archive extracted into it through a container, docker start`,
            ratio: restore / tarRestoreTime,
            target: `<= ${BACKUP_TARGET}`,
            met: restore / tarRestoreTime <= BACKUP_TARGET,
            notes: `${setting} The restore first backs up what is there ("before restore": the same bytes, which the baseline's extraction has just rewritten, so restic rereads and hashes them and stores little new), stops the app, restores the app's snapshot into a staging folder and the volume's snapshot into the engine's folder of the volume (emptied first), starts the app and checks it; the baseline stops the container, extracts and starts it. The last round's restore, from the request: ${last?.restoreTimeline.join(' | ')}.`,
        },
        {
            name: `POST /api/apps/{name}/update (backup of ${SIZE_MB} MB first) against POST /api/apps/{name}/action restart`,
            measured: `median ${seconds(update)} (${list(updates.update)}); its backup ${seconds(updateBackup)}`,
            baseline: `median ${seconds(restart)} (${list(updates.restart)}): a restart run of the same app`,
            ratio: update / updateBound,
            target: '<= 1 (update <= 1.5 x restart + its backup)',
            met: update <= updateBound,
            notes: `Ratio = update / (1.5 x restart + the update's own backup, from the run's first event to its "Backup ... made" line). Each update moves to a new tag pushed to the local registry (pulled, the container recreated, health waited for); the restart also waits for health; both with DEPLOY_SETTLE_SECONDS=0.`,
        },
    ];
}
