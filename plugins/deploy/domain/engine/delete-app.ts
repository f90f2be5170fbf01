/**
 * Deleting an app from the host. Containers and the site always go; the rest only when asked. Without
 * `includePreexisting` only what Gatehouse made (the resource ledger, the managed label) is removed, so an
 * image, volume, certificate or record that was there before the app is never lost to a delete.
 */
import { execFile } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';
import { pipeline } from 'node:stream/promises';
import Zlib from 'node:zlib';

import type Docker from 'dockerode';

import { hasPlaceholderCertificate } from '../host/certificate-info.ts';
import { dockerClient } from '../host/docker-client.ts';
import { removeAccessObjects } from './access-steps.ts';
import { dnsProvider } from './dns-steps.ts';
import { planFromDisk } from './app-runs.ts';
import { LABEL } from '../host/compose-labels.ts';
import type { DeleteOptions, RunContext } from './run-context.ts';
import { testAndReload } from './site-steps.ts';
import { SwarmEngine } from './swarm-engine.ts';

export async function deleteApp(context: RunContext): Promise<void> {
    const options = context.data.remove;
    if (!options) {
        throw new Error('a delete needs its options');
    }

    const docker = dockerClient();
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    if (context.config.apps.engine === 'swarm') await removeStack(context, docker);
    const images = await removeContainers(context, docker, options);
    await context.pauseIfAsked('containers-removed');
    await removeSite(context);
    await removeNetworks(context, docker, options);
    if (options.removeVolumes) await removeVolumes(context, docker, options, { stamp, images });
    if (options.removeImages) await removeImages(context, docker, options, images);
    if (options.removeCert) await removeCertificateOf(context, options);
    if (options.removeDns) await removeDnsRecord(context, options);
    if (options.removeAccess) await removeAccessObjects(context);

    await removeData(context, options, stamp);
}

/** The run took a backup first (BACKUP_BEFORE_CHANGES): it holds the folder and volumes, so no loose archive is made. */
function heldByBackup(context: RunContext): boolean {
    return context.data.backupFirst !== undefined;
}

/** `<archivesDir>/<app>-<stamp><suffix>.tar.gz`: every archive of one delete shares its stamp. */
function archivePath(context: RunContext, stamp: string, suffix = ''): string {
    return Path.join(context.config.apps.archivesDir, `${context.data.app}-${stamp}${suffix}.tar.gz`);
}

function isManaged(labels: Record<string, string> | undefined): boolean {
    return labels?.[LABEL.managed] === 'true';
}

/** A swarm's services and overlay networks of the app go first: their tasks' containers go with them. */
async function removeStack(context: RunContext, docker: Docker): Promise<void> {
    context.step = 'services';
    const engine = new SwarmEngine(docker, context.config.host, context.log);
    const services = await engine.stackServices(context.data.app);
    await engine.down(context.data.app);
    context.log(
        services.length > 0
            ? `Removed ${services.map((service) => service.Spec.Name).join(', ')} from the swarm`
            : 'No swarm services to remove',
    );
}

/** Removes the project's containers; answers the images they ran. */
async function removeContainers(context: RunContext, docker: Docker, options: DeleteOptions): Promise<Set<string>> {
    context.step = 'containers';
    const containers = await docker.listContainers({ all: true, filters: { label: [`${LABEL.project}=${context.data.app}`] } });
    const images = new Set<string>();
    for (const container of containers) {
        const name = (container.Names[0] ?? container.Id).replace(/^\//, '');
        if (!isManaged(container.Labels) && !options.includePreexisting) {
            context.log(`Kept ${name}: Gatehouse did not create it (includePreexisting removes it)`, 'warning');
            continue;
        }

        images.add(container.Labels[LABEL.image] ?? container.Image);
        await docker.getContainer(container.Id).remove({ force: true });
        context.log(`Removed container ${name}`);
    }

    if (containers.length === 0) {
        context.log('No containers to remove');
    }

    return images;
}

async function removeSite(context: RunContext): Promise<void> {
    context.step = 'nginx';
    if (!Fs.existsSync(context.paths.siteFile)) {
        context.log('No nginx site to remove');
        return;
    }

    Fs.rmSync(context.paths.siteFile);
    context.log(`Removed ${context.paths.siteFile}`);
    await testAndReload(context);
}

async function removeNetworks(context: RunContext, docker: Docker, options: DeleteOptions): Promise<void> {
    // Every network a deploy makes carries the managed label, as its containers do.
    const networks = await docker.listNetworks({ filters: { label: [`${LABEL.project}=${context.data.app}`] } });
    for (const network of networks) {
        if (isManaged(network.Labels) || options.includePreexisting) {
            await docker.getNetwork(network.Id).remove();
            context.log(`Removed network ${network.Name}`);
        }
    }
}

async function removeVolumes(
    context: RunContext,
    docker: Docker,
    options: DeleteOptions,
    archiving: { stamp: string; images: Set<string> },
): Promise<void> {
    context.step = 'volumes';
    const made = new Set(await context.resources('volume'));
    const { Volumes: volumes } = await docker.listVolumes({ filters: { label: [`${LABEL.project}=${context.data.app}`] } });
    const plan = Fs.existsSync(context.paths.composeFile) ? planFromDisk(context) : undefined;
    const declared = (plan?.volumes ?? []).filter((volume) => !volume.external);
    const candidates = new Set([...made, ...(volumes ?? []).map((volume) => volume.Name), ...declared.map((volume) => volume.name)]);
    // Any image the app ran or names can read a volume for its archive.
    const readers = new Set([...archiving.images, ...(plan?.services ?? []).map((service) => service.image)]);
    for (const name of candidates) {
        if (!made.has(name) && !options.includePreexisting) {
            context.log(`Kept volume ${name}: it was there before the app (includePreexisting removes it)`, 'warning');
            continue;
        }

        const archived =
            options.removeArchives ||
            heldByBackup(context) ||
            (await archiveVolume(context, docker, name, { stamp: archiving.stamp, readers }));
        if (!archived) {
            continue;
        }

        await removeQuietly(context, `volume ${name}`, () => docker.getVolume(name).remove());
        await context.forgetResource('volume', name);
    }
}

/**
 * Archives a volume's files before it is removed, read through a container of one of the app's images that is
 * created but never started (Docker copies files out of any container). Answers false, keeping the volume, when
 * the files could not be archived: a delete never loses data it was not told to lose.
 */
async function archiveVolume(
    context: RunContext,
    docker: Docker,
    volume: string,
    archiving: { stamp: string; readers: Set<string> },
): Promise<boolean> {
    if (!(await volumeExists(docker, volume))) {
        return true;
    }

    const archive = archivePath(context, archiving.stamp, `-volume-${volume}`);
    for (const image of archiving.readers) {
        let reader: Docker.Container;
        try {
            // Never started: the command only has to be there for the engine to accept the container.
            reader = await docker.createContainer({
                Image: image,
                Entrypoint: ['/gatehouse-volume-reader'],
                Labels: { [LABEL.managed]: 'true' },
                HostConfig: { Binds: [`${volume}:/volume:ro`] },
            });
        } catch {
            continue;
        }

        try {
            Fs.mkdirSync(Path.dirname(archive), { recursive: true, mode: 0o700 });
            const files = await reader.getArchive({ path: '/volume' });
            await pipeline(files, Zlib.createGzip(), Fs.createWriteStream(archive, { mode: 0o600 }));
            await context.recordResource('archive', archive);
            context.log(`Archived volume ${volume} to ${archive}`);
            return true;
        } finally {
            await reader.remove({ force: true });
        }
    }

    context.log(
        `Kept volume ${volume}: no image of the app is left to read it with, so it could not be archived (removeArchives removes it unarchived)`,
        'warning',
    );
    return false;
}

async function volumeExists(docker: Docker, volume: string): Promise<boolean> {
    try {
        await docker.getVolume(volume).inspect();
        return true;
    } catch {
        return false;
    }
}

async function removeImages(context: RunContext, docker: Docker, options: DeleteOptions, used: Set<string>): Promise<void> {
    context.step = 'images';
    const pulled = new Set(await context.resources('image'));
    for (const image of new Set([...pulled, ...used])) {
        if (!pulled.has(image) && !options.includePreexisting) {
            context.log(`Kept image ${image}: the engine had it before the app (includePreexisting removes it)`, 'warning');
            continue;
        }

        await removeQuietly(context, `image ${image}`, () => docker.getImage(image).remove());
        await context.forgetResource('image', image);
    }
}

async function removeQuietly(context: RunContext, what: string, remove: () => Promise<unknown>): Promise<void> {
    try {
        await remove();
        context.log(`Removed ${what}`);
    } catch (error) {
        const message = (error as Error).message;
        if (/no such|not found/i.test(message)) {
            context.log(`${what} was already gone`);
        } else {
            context.log(`Could not remove ${what}: ${message.trim()}`, 'warning');
        }
    }
}

async function removeCertificateOf(context: RunContext, options: DeleteOptions): Promise<void> {
    context.step = 'certificate';
    const domain = context.data.domain;
    const made = (await context.resources('certificate')).includes(domain);
    if (!made && !options.includePreexisting && !hasPlaceholderCertificate(context.config.apps.certificatesDir, domain)) {
        context.log(`Kept the certificate of ${domain}: Gatehouse did not obtain it (includePreexisting removes it)`, 'warning');
        return;
    }

    const { removeCertificate } = await import('../acme/acme-service.ts');
    const removed = removeCertificate(context.config.apps.certificatesDir, domain);
    context.log(removed ? `Removed the certificate of ${domain}` : `No certificate of ${domain} to remove`);
}

async function removeDnsRecord(context: RunContext, options: DeleteOptions): Promise<void> {
    context.step = 'dns';
    const provider = await dnsProvider(context.config);
    if (!provider) {
        context.log('DNS: no DNS provider is configured, so no record is managed', 'warning');
        return;
    }

    const made = (await context.resources('dns')).includes(context.data.domain);
    if (!made && !options.includePreexisting) {
        context.log(`Kept the DNS record of ${context.data.domain}: Gatehouse did not make it (includePreexisting removes it)`, 'warning');
        return;
    }

    await provider.removeAddress(context.data.domain);
    context.log(`DNS: removed the address records of ${context.data.domain}`);
}

/**
 * The app's folder goes with deleteData, archived first unless archives are removed too or the backup taken first
 * holds it; removeArchives removes its archives, those of removed volumes included.
 */
async function removeData(context: RunContext, options: DeleteOptions, stamp: string): Promise<void> {
    context.step = 'data';
    const archivesDir = context.config.apps.archivesDir;
    const { appDir } = context.paths;
    if (options.deleteData && Fs.existsSync(appDir)) {
        if (heldByBackup(context)) {
            context.log(`The backup taken first holds ${appDir}`);
        } else if (!options.removeArchives) {
            const archive = archivePath(context, stamp);
            await archiveDirectory(appDir, archive);
            await context.recordResource('archive', archive);
            context.log(`Archived ${appDir} to ${archive}`);
        }

        Fs.rmSync(appDir, { recursive: true, force: true });
        context.log(`Removed ${appDir}`);
    } else if (!options.deleteData) {
        context.log(`Kept the app's folder ${appDir} (deleteData removes it)`);
    }

    if (options.removeArchives) {
        const prefix = `${context.data.app}-`;
        const archives = Fs.existsSync(archivesDir)
            ? Fs.readdirSync(archivesDir).filter(
                  (file) => file.startsWith(prefix) && file.endsWith('.tar.gz') && /^\d{4}-/.test(file.slice(prefix.length)),
              )
            : [];
        for (const file of archives) {
            Fs.rmSync(Path.join(archivesDir, file), { force: true });
            context.log(`Removed archive ${file}`);
        }
    }
}

function archiveDirectory(directory: string, archive: string): Promise<void> {
    Fs.mkdirSync(Path.dirname(archive), { recursive: true, mode: 0o700 });
    return new Promise((resolve, reject) => {
        execFile(
            'tar',
            ['-czf', archive, '-C', Path.dirname(directory), Path.basename(directory)],
            { timeout: 600_000 },
            (error, _out, stderr) => (error ? reject(new Error(`tar could not archive ${directory}: ${stderr.trim()}`)) : resolve()),
        );
    });
}
