/**
 * Backup and restore runs, as their worker executes them. A backup is one restic snapshot of a staging folder:
 * `app/` (the app's folder: compose file, secrets), `site/<app>.conf` (its nginx site), `dumps/` and
 * `volumes/<volume>.tar` (a named volume of its compose project read through Docker's archive API); beside it, one
 * snapshot per named volume the engine keeps in a folder of this host, backed up from that folder, so that restic
 * reads again only the files that changed since the volume's last backup. Volumes are read with the app's containers
 * paused. A restore takes a backup of what is there, stops the app, puts the snapshots' folder, site and volumes in
 * place and starts the app; when any of that fails, it puts the backup it took back the same way.
 */
import Fs from 'node:fs';
import Path from 'node:path';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type Docker from 'dockerode';

import { LABEL } from '../host/compose-labels.ts';
import { dockerClient } from '../host/docker-client.ts';
import { deployApp, engineOf, planFromDisk, RolledBackError, upOptions } from '../engine/app-runs.ts';
import type { ProjectPlan } from '../engine/plan-model.ts';
import type { BackupFirst, RunContext } from '../engine/run-context.ts';
import type { RecipeDump } from '../recipes/recipe-types.ts';
import { type BackupRow, snapshotIds, type VolumeSnapshots, volumeSnapshotsOf } from './backup-row.ts';
import { testAndReload } from '../engine/site-steps.ts';
import {
    backupFolder,
    forgetAndPrune,
    fullSnapshotIds,
    forgetByPolicy,
    restic,
    ResticError,
    type ResticRepository,
} from '../host/restic.ts';

/** What one backup holds. */
export interface BackupHolds {
    folder: boolean;
    site: boolean;
    volumes: string[];
    /** The services whose dump it holds (the recipe's `backup.dump`). */
    dumps: string[];
}

/**
 * The restic snapshots of one backup: its own, and one per volume backed up from this host's folder of it (null: the
 * volume was empty, and restic makes no empty snapshot).
 */
export interface BackupSnapshots {
    snapshot: string;
    volumeSnapshots: VolumeSnapshots;
}

export interface BackupRunData extends BackupFirst {
    /** A restore's snapshot. */
    snapshot?: string;
    /** A restore's volume snapshots. */
    volumeSnapshots?: VolumeSnapshots;
}

/** A named volume of the app, and the folder of this host its files are in when Gatehouse can use it directly. */
interface AppVolume {
    name: string;
    hostFolder: string | undefined;
}

const VOLUME_MOUNT = '/volume';
const DUMP_TIMEOUT_MS = 30 * 60_000;
/** Empties a volume before its files are put back, so that what the backup did not hold is gone. */
const EMPTY_VOLUME = `rm -rf ${VOLUME_MOUNT}/* ${VOLUME_MOUNT}/.[!.]* ${VOLUME_MOUNT}/..?*`;

function stagingRoot(context: RunContext): string {
    return Path.join(context.config.dataDir, 'backup-staging');
}

function stagingDir(context: RunContext, purpose: string): string {
    const dir = Path.join(stagingRoot(context), `${context.data.runId}-${purpose}`);
    Fs.rmSync(dir, { recursive: true, force: true });
    Fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return dir;
}

/** The app's own volumes (not external ones) that exist on the engine. */
async function volumesOf(docker: Docker, plan: ProjectPlan): Promise<AppVolume[]> {
    const volumes: AppVolume[] = [];
    for (const volume of plan.volumes.filter((candidate) => !candidate.external)) {
        let info: Docker.VolumeInspectInfo;
        try {
            info = await docker.getVolume(volume.name).inspect();
        } catch {
            // Never made (no service mounts it yet): nothing to hold.
            continue;
        }

        volumes.push({ name: volume.name, hostFolder: hostFolderOf(docker, info) });
    }

    return volumes;
}

/**
 * The folder of this host a volume's files are in, when Gatehouse can read and write it directly: a volume of the
 * local driver without mount options (one with options is mounted only while a container uses it) of an engine
 * reached through its local socket, whose folder this process may read and write. Otherwise (a remote engine,
 * Gatehouse in a container without the engine's folders) the volume goes through the engine's archive API.
 */
function hostFolderOf(docker: Docker, volume: Docker.VolumeInspectInfo): string | undefined {
    const localEngine = (docker.modem as { socketPath?: unknown }).socketPath !== undefined;
    if (!localEngine || volume.Driver !== 'local' || Object.keys(volume.Options ?? {}).length > 0) {
        return undefined;
    }

    try {
        Fs.accessSync(volume.Mountpoint, Fs.constants.R_OK | Fs.constants.W_OK | Fs.constants.X_OK);
        return Fs.statSync(volume.Mountpoint).isDirectory() ? volume.Mountpoint : undefined;
    } catch {
        return undefined;
    }
}

/**
 * A container of one of the app's images with the volume at /volume, created and not started: Docker copies files in
 * and out of any container, and the app's images are the ones the engine surely has.
 */
async function volumeContainer(docker: Docker, plan: ProjectPlan, volume: string, entrypoint: string[]): Promise<Docker.Container> {
    const failures: string[] = [];
    for (const image of new Set(plan.services.map((service) => service.image))) {
        try {
            return await docker.createContainer({
                Image: image,
                Entrypoint: entrypoint,
                Labels: { [LABEL.managed]: 'true' },
                HostConfig: { Binds: [`${volume}:${VOLUME_MOUNT}`] },
            });
        } catch (error) {
            failures.push(`${image}: ${(error as Error).message}`);
        }
    }

    throw new Error(`no image of the app could mount the volume ${volume}: ${failures.join('; ') || 'the app has no service'}`);
}

/** Pauses the app's running containers while `work` reads their volumes, so that what is read is one moment's. */
async function withAppPaused<T>(context: RunContext, docker: Docker, plan: ProjectPlan, work: () => Promise<T>): Promise<T> {
    const paused: Docker.Container[] = [];
    try {
        for (const service of plan.services) {
            const container = docker.getContainer(service.containerName);
            const state = await container.inspect().then(
                (inspect) => inspect.State,
                () => undefined,
            );
            if (state?.Running && !state.Paused) {
                await container.pause();
                paused.push(container);
            }
        }

        if (paused.length > 0) {
            context.log(`Paused ${paused.length} container(s) while their volumes are read`);
        }

        return await work();
    } finally {
        for (const container of paused) {
            await container
                .unpause()
                .catch((error: unknown) => context.log(`Could not unpause a container: ${(error as Error).message}`, 'error'));
        }
    }
}

/** Takes a backup of the app as its files and volumes are now; records it and answers its id in the database. */
export async function backupApp(context: RunContext, data: BackupFirst, reason: string): Promise<{ id: number } & BackupSnapshots> {
    context.step = 'backup';
    const docker = dockerClient();
    const plan = planFromDisk(context);
    const staging = stagingDir(context, 'backup');
    try {
        const { appDir, siteFile } = context.paths;
        Fs.cpSync(appDir, Path.join(staging, 'app'), { recursive: true, preserveTimestamps: true });
        const site = Fs.existsSync(siteFile);
        if (site) {
            Fs.mkdirSync(Path.join(staging, 'site'), { mode: 0o700 });
            Fs.copyFileSync(siteFile, Path.join(staging, 'site', Path.basename(siteFile)));
        }

        // A swarm's volumes live on whichever nodes ran its tasks: what this host has of them is no backup.
        const onSwarm = context.config.apps.engine === 'swarm';
        if (onSwarm)
            context.log(
                "On a swarm the backup holds the app's folder and site, not its volumes or dumps (they live on the nodes)",
                'warning',
            );
        const dumps = data.dump && !onSwarm ? [await takeDump(context, docker, plan, data.dump, staging)] : [];
        const volumes = onSwarm ? [] : await volumesOf(docker, plan);
        const read = await readVolumes(context, docker, plan, volumes, { restic: data.restic, staging });
        try {
            const own = await backupFolder(data.restic, staging, ['gatehouse', `app:${context.data.app}`, `reason:${reason}`]);
            const full = await fullSnapshotIds(data.restic, [own.snapshot, ...snapshotIds(read.snapshots)]);
            const snapshot = full.get(own.snapshot) ?? own.snapshot;
            const volumeSnapshots = Object.fromEntries(
                Object.entries(read.snapshots).map(([volume, id]) => [volume, id === null ? null : (full.get(id) ?? id)]),
            );
            const size = own.size + read.bytes;
            const holds: BackupHolds = { folder: true, site, volumes: volumes.map((volume) => volume.name), dumps };
            const knex = await context.database();
            const [id] = await knex('dp_backups').insert({
                app_name: context.data.app,
                repository_hash: data.restic.hash,
                snapshot,
                volume_snapshots: Object.keys(volumeSnapshots).length > 0 ? JSON.stringify(volumeSnapshots) : null,
                reason,
                holds: JSON.stringify(holds),
                size,
                run_id: context.data.runId,
                created_at: Date.now(),
            });
            context.log(
                `Backup ${Number(id)} made: snapshot ${snapshot.slice(0, 8)}, ${size} bytes (folder${site ? ', site' : ''}, ${volumes.length} volume(s))`,
            );
            return { id: Number(id), snapshot, volumeSnapshots };
        } catch (error) {
            await forgetUnrecorded(context, data.restic, snapshotIds(read.snapshots));
            throw error;
        }
    } finally {
        Fs.rmSync(staging, { recursive: true, force: true });
    }
}

/**
 * Reads the app's volumes with its containers paused: each one in a folder of this host into a restic snapshot of its
 * own, the others through the engine into the staging folder. Answers the snapshots made and the bytes they read.
 */
async function readVolumes(
    context: RunContext,
    docker: Docker,
    plan: ProjectPlan,
    volumes: AppVolume[],
    into: { restic: ResticRepository; staging: string },
): Promise<{ snapshots: VolumeSnapshots; bytes: number }> {
    const snapshots: VolumeSnapshots = {};
    let bytes = 0;
    if (volumes.length === 0) {
        return { snapshots, bytes };
    }

    try {
        await withAppPaused(context, docker, plan, async () => {
            for (const volume of volumes) {
                if (volume.hostFolder && Fs.readdirSync(volume.hostFolder).length === 0) {
                    snapshots[volume.name] = null;
                    context.log(`Volume ${volume.name} is empty`);
                } else if (volume.hostFolder) {
                    const tags = ['gatehouse', `volume-of:${context.data.app}`, `volume:${volume.name}`];
                    const made = await backupFolder(into.restic, volume.hostFolder, tags);
                    snapshots[volume.name] = made.snapshot;
                    bytes += made.size;
                    context.log(`Backed up volume ${volume.name} from ${volume.hostFolder}: snapshot ${made.snapshot.slice(0, 8)}`);
                } else {
                    Fs.mkdirSync(Path.join(into.staging, 'volumes'), { recursive: true, mode: 0o700 });
                    await readVolume(docker, plan, volume.name, Path.join(into.staging, 'volumes', `${volume.name}.tar`));
                    context.log(`Read volume ${volume.name}`);
                }
            }
        });
    } catch (error) {
        await forgetUnrecorded(context, into.restic, snapshotIds(snapshots));
        throw error;
    }

    return { snapshots, bytes };
}

/** Forgets the volume snapshots of a backup that failed before it was recorded (their data goes at the next prune). */
async function forgetUnrecorded(context: RunContext, repository: ResticRepository, snapshots: string[]): Promise<void> {
    if (snapshots.length === 0) return;
    await restic(repository, ['forget', ...snapshots]).catch((error: unknown) =>
        context.log(`Could not forget the volume snapshots of the failed backup: ${(error as Error).message}`, 'warning'),
    );
}

function dumpFile(staging: string, service: string): string {
    return Path.join(staging, 'dumps', `${service}.dump`);
}

/**
 * Runs the recipe's dump command in the service's running container (before its volumes are read with the app
 * paused): its standard output, byte for byte, is the dump; a command that fails fails the backup.
 */
async function takeDump(context: RunContext, docker: Docker, plan: ProjectPlan, dump: RecipeDump, staging: string): Promise<string> {
    const file = dumpFile(staging, dump.service);
    Fs.mkdirSync(Path.dirname(file), { recursive: true, mode: 0o700 });
    const output = Fs.createWriteStream(file, { mode: 0o600 });
    const exitCode = await execWithStreams(docker, containerOf(plan, dump.service), dump, { command: dump.command, stdout: output });
    if (exitCode !== 0) {
        throw new Error(`the recipe's dump command in ${dump.service} failed (exit ${exitCode ?? 'unknown'})`);
    }

    context.log(`Dumped ${dump.service} (${Fs.statSync(file).size} bytes)`);
    return dump.service;
}

function containerOf(plan: ProjectPlan, service: string): string {
    const found = plan.services.find((candidate) => candidate.service === service);
    if (!found) {
        throw new Error(`the recipe's backup.dump names the service ${service}, which the compose file does not have`);
    }

    return found.containerName;
}

/** `sh -c command` in the container, its standard output (and input) streamed, not through a terminal; answers its exit code. */
async function execWithStreams(
    docker: Docker,
    containerName: string,
    dump: RecipeDump,
    streams: { command: string; stdout?: NodeJS.WritableStream; stdin?: NodeJS.ReadableStream },
): Promise<number | null> {
    const exec = await docker.getContainer(containerName).exec({
        Cmd: ['sh', '-c', streams.command],
        AttachStdout: true,
        AttachStderr: true,
        AttachStdin: streams.stdin !== undefined,
        Tty: false,
        ...(dump.user ? { User: dump.user } : {}),
    });
    const stream = await exec.start({ hijack: true, stdin: streams.stdin !== undefined });
    const discard = new PassThrough().resume();
    docker.modem.demuxStream(stream, streams.stdout ?? discard, discard);
    const ended = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
            stream.destroy();
            reject(new Error(`the command did not end within ${DUMP_TIMEOUT_MS / 60_000} minutes`));
        }, DUMP_TIMEOUT_MS);
        stream.once('end', () => {
            clearTimeout(timer);
            resolve();
        });
        stream.once('error', (error: Error) => {
            clearTimeout(timer);
            reject(error);
        });
    });
    if (streams.stdin) {
        await pipeline(streams.stdin, stream, { end: false });
        // Half-closed: the command reads the end of its input, and its output still comes back.
        (stream as unknown as { end(): void }).end();
    }

    await ended;
    if (streams.stdout) {
        await new Promise<void>((resolve) => streams.stdout?.end(resolve));
    }

    return (await exec.inspect()).ExitCode ?? null;
}

/** Feeds the backup's dump to the recipe's restore command, once the app runs again. */
async function restoreDump(context: RunContext, docker: Docker, dump: RecipeDump | undefined, staging: string): Promise<void> {
    if (!dump) {
        return;
    }

    const file = dumpFile(staging, dump.service);
    if (!Fs.existsSync(file)) {
        return;
    }

    if (!dump.restore) {
        context.log(
            `The backup holds a dump of ${dump.service}, and the recipe gives no command to restore it from: its volumes were restored`,
            'warning',
        );
        return;
    }

    const plan = planFromDisk(context);
    const exitCode = await execWithStreams(docker, containerOf(plan, dump.service), dump, {
        command: dump.restore,
        stdin: Fs.createReadStream(file),
    });
    if (exitCode !== 0) {
        throw new Error(`the recipe's restore command in ${dump.service} failed (exit ${exitCode ?? 'unknown'})`);
    }

    context.log(`Restored the dump of ${dump.service}`);
}

async function readVolume(docker: Docker, plan: ProjectPlan, volume: string, file: string): Promise<void> {
    // Never started: the entrypoint only has to be there for the engine to accept the container.
    const reader = await volumeContainer(docker, plan, volume, ['/gatehouse-volume-reader']);
    try {
        const files = await reader.getArchive({ path: VOLUME_MOUNT });
        await pipeline(files, Fs.createWriteStream(file, { mode: 0o600 }));
    } finally {
        await reader.remove({ force: true });
    }
}

/** The volume as the engine has it, made (as the app's) when it is not there. */
async function volumeToWrite(context: RunContext, docker: Docker, volume: string): Promise<Docker.VolumeInspectInfo> {
    try {
        return await docker.getVolume(volume).inspect();
    } catch {
        await docker.createVolume({ Name: volume, Labels: { [LABEL.project]: context.data.app, [LABEL.managed]: 'true' } });
        context.log(`Made volume ${volume}`);
        return await docker.getVolume(volume).inspect();
    }
}

/** Empties the volume (through a shell of one of the app's images), then puts the archive's files in it. */
async function writeVolume(context: RunContext, docker: Docker, plan: ProjectPlan, volume: string, file: string): Promise<void> {
    await volumeToWrite(context, docker, volume);
    const writer = await volumeContainer(docker, plan, volume, ['/bin/sh', '-c', EMPTY_VOLUME]);
    try {
        await writer.start();
        const { StatusCode: status } = (await writer.wait()) as { StatusCode: number };
        if (status !== 0) {
            context.log(`Could not empty volume ${volume} first (exit ${status}): files the backup did not hold are left in it`, 'warning');
        }

        // The archive holds `volume/...`, as Docker gave it: put at the root, it lands in the mounted volume.
        await writer.putArchive(Fs.createReadStream(file), { path: '/' });
    } finally {
        await writer.remove({ force: true });
    }
}

/**
 * Empties this host's folder of the volume, then restores the volume's snapshot into it (owners and modes as they
 * were); a volume that was empty stays empty.
 */
async function writeHostVolume(
    context: RunContext,
    docker: Docker,
    repository: ResticRepository,
    volume: string,
    snapshot: string | null,
): Promise<void> {
    const folder = hostFolderOf(docker, await volumeToWrite(context, docker, volume));
    if (!folder) {
        throw new Error(
            `volume ${volume} was backed up from its folder on this host, and the engine no longer keeps it in one Gatehouse can write`,
        );
    }

    for (const entry of Fs.readdirSync(folder)) {
        Fs.rmSync(Path.join(folder, entry), { recursive: true, force: true });
    }

    if (snapshot) {
        await restic(repository, ['restore', snapshot, '--target', folder]);
    }
}

/**
 * Stops the app while restic extracts the backup's own snapshot (neither waits for the other: an app's stop can take
 * its whole grace period), puts the snapshots' folder, site and volumes in place of the app's, starts the app, then
 * feeds it the snapshot's dump when the recipe says how.
 */
async function putBackAndStart(context: RunContext, data: BackupFirst, backup: BackupSnapshots): Promise<void> {
    const { snapshot } = backup;
    const docker = dockerClient();
    const staging = stagingDir(context, 'restore');
    try {
        context.step = 'stop';
        const [extracted, stopped] = await Promise.allSettled([
            restic(data.restic, ['restore', snapshot, '--target', staging]),
            engineOf(context).stop(planFromDisk(context)),
        ]);
        for (const outcome of [stopped, extracted]) {
            if (outcome.status === 'rejected') throw outcome.reason;
        }

        context.step = 'restore';
        const { appDir, siteFile } = context.paths;
        if (!Fs.existsSync(Path.join(staging, 'app'))) {
            throw new Error(`snapshot ${snapshot.slice(0, 8)} holds no app folder`);
        }

        Fs.rmSync(appDir, { recursive: true, force: true });
        Fs.cpSync(Path.join(staging, 'app'), appDir, { recursive: true, preserveTimestamps: true });
        context.log(`Put back the app's folder ${appDir}`);
        const site = Path.join(staging, 'site', Path.basename(siteFile));
        if (Fs.existsSync(site)) {
            const text = Fs.readFileSync(site, 'utf8');
            const current = Fs.existsSync(siteFile) ? Fs.readFileSync(siteFile, 'utf8') : undefined;
            if (text !== current) {
                Fs.mkdirSync(Path.dirname(siteFile), { recursive: true });
                Fs.writeFileSync(siteFile, text, { mode: 0o600 });
                context.log(`Put back the site ${siteFile}`);
                await testAndReload(context);
            }
        }

        const plan = planFromDisk(context);
        const volumesDir = Path.join(staging, 'volumes');
        const archives = Fs.existsSync(volumesDir) ? Fs.readdirSync(volumesDir).filter((name) => name.endsWith('.tar')) : [];
        for (const archive of archives) {
            const volume = archive.slice(0, -'.tar'.length);
            await writeVolume(context, docker, plan, volume, Path.join(volumesDir, archive));
            context.log(`Put back volume ${volume}`);
        }

        for (const [volume, volumeSnapshot] of Object.entries(backup.volumeSnapshots)) {
            await writeHostVolume(context, docker, data.restic, volume, volumeSnapshot);
            context.log(`Put back volume ${volume}`);
        }

        // Up, not start: the folder put back may hold another compose file than the one the containers were made from.
        context.step = 'start';
        const engine = engineOf(context);
        const outcome = await engine.up(plan, await engine.imagesAtHand(plan, upOptions(context)), upOptions(context));
        await engine.commit(outcome);
        await restoreDump(context, docker, data.dump, staging);
    } finally {
        Fs.rmSync(staging, { recursive: true, force: true });
    }
}

/**
 * Removes what runs that are no longer running left in the staging folder (a copy of an app's secrets and data): a
 * run whose server was killed could not remove its own.
 */
async function clearLeftovers(context: RunContext): Promise<void> {
    const root = stagingRoot(context);
    if (!Fs.existsSync(root)) {
        return;
    }

    const knex = await context.database();
    const running = new Set((await knex('dp_runs').where({ state: 'running' }).select('id')).map((row: { id: number }) => Number(row.id)));
    for (const entry of Fs.readdirSync(root)) {
        const runId = Number.parseInt(entry, 10);
        if (!running.has(runId)) {
            Fs.rmSync(Path.join(root, entry), { recursive: true, force: true });
            context.log(`Removed ${entry}, left in the staging folder by a run that ended without removing it`, 'warning');
        }
    }
}

export async function backupRun(context: RunContext, data: BackupRunData): Promise<void> {
    await clearLeftovers(context);
    await backupApp(context, data, data.reason);
    await applyRetention(context, data);
}

/**
 * The backup a run that changes an app takes first (BACKUP_BEFORE_CHANGES). One that fails ends the run rolled back
 * before anything was changed: no change goes ahead without the way back.
 */
export async function backupBeforeChange(context: RunContext, first: BackupFirst): Promise<{ id: number } & BackupSnapshots> {
    let made: { id: number } & BackupSnapshots;
    try {
        await clearLeftovers(context);
        made = await backupApp(context, first, first.reason);
    } catch (error) {
        const message = `the backup taken before the change failed, so nothing was changed: ${(error as Error).message}`;
        context.log(`Failed: ${message} (BACKUP_BEFORE_CHANGES=false changes without one)`, 'error');
        throw new RolledBackError(message);
    }

    // The backup stands either way: thinning out older ones can wait for the next backup.
    await applyRetention(context, first).catch((error: unknown) =>
        context.log(`Older backups were not removed this time: ${(error as Error).message}`, 'warning'),
    );
    return made;
}

/**
 * An update: the deploy of the new image, after the backup taken first. A deploy that fails puts the old image's
 * containers and files back itself; the data the new image may already have changed (a migration at its start) is
 * then put back from that backup too, so that the app is as it was.
 */
export async function updateApp(context: RunContext, first: BackupFirst | undefined): Promise<void> {
    if (!first) {
        throw new Error('an update takes a backup first, and none could be prepared');
    }

    const kept = await backupBeforeChange(context, first);
    try {
        await deployApp(context);
    } catch (error) {
        context.step = 'rollback';
        try {
            await putBackAndStart(context, first, kept);
        } catch (undo) {
            throw new Error(
                `${(error as Error).message}; the data could not be put back from backup ${kept.id}: ${(undo as Error).message}`,
            );
        }

        context.log(`Put the app's data back from backup ${kept.id}, taken before the update`, 'warning');
        throw error instanceof RolledBackError
            ? error
            : new Error(`${(error as Error).message}; its data was put back from backup ${kept.id}`);
    }
}

/**
 * BACKUP_KEEP applied to the app's backups once a new one is made; the backups it removes leave the list. A
 * repository another restic holds locked keeps them until the next backup, with a warning (the backup stands).
 */
async function applyRetention(context: RunContext, data: BackupFirst): Promise<void> {
    const policy = context.config.backups.keep;
    if (!policy) {
        return;
    }

    context.step = 'retention';
    const knex = await context.database();
    const ofApp = { app_name: context.data.app, repository_hash: data.restic.hash };
    let removed: string[];
    try {
        removed = await forgetByPolicy(data.restic, `app:${context.data.app}`, policy);
        if (removed.length > 0) {
            const rows = await knex('dp_backups').where(ofApp).whereIn('snapshot', removed).select('volume_snapshots');
            await forgetAndPrune(
                data.restic,
                rows.flatMap((row: BackupRow) => snapshotIds(volumeSnapshotsOf(row))),
            );
        }
    } catch (error) {
        if (error instanceof ResticError && error.locked) {
            context.log('The repository is in use by another restic: older backups are removed after the next backup instead', 'warning');
            return;
        }

        throw error;
    }

    if (removed.length > 0) {
        await knex('dp_backups').where(ofApp).whereIn('snapshot', removed).delete();
    }

    context.log(`Kept the backups BACKUP_KEEP asks for (${policy}): removed ${removed.length}`);
}

/**
 * Keeps what is there as a backup ("before restore"), stops the app, puts the snapshot back and starts the app. A
 * failure after that backup puts it back and starts the app again, and the run ends rolled back.
 */
export async function restoreRun(context: RunContext, data: BackupRunData): Promise<void> {
    const snapshot = data.snapshot;
    if (!snapshot) {
        throw new Error('a restore needs the snapshot to put back');
    }

    await clearLeftovers(context);
    // Taken while the app runs, as any backup is: a dump needs its container running.
    const kept = await backupApp(context, data, 'before restore');
    try {
        await putBackAndStart(context, data, { snapshot, volumeSnapshots: data.volumeSnapshots ?? {} });
        context.log('Restored and started');
    } catch (error) {
        context.log(`Failed: ${(error as Error).message}`, 'error');
        context.step = 'rollback';
        try {
            await putBackAndStart(context, data, kept);
        } catch (undo) {
            throw new Error(`${(error as Error).message}; the rollback could not put back what was there: ${(undo as Error).message}`);
        }

        context.log('Rolled back: put back what was there before the restore, and started the app', 'warning');
        throw new RolledBackError((error as Error).message);
    }
}
