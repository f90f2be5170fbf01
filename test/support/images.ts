/**
 * Small images built here (no registry on the Internet is reachable): FROM scratch with Debian's static
 * busybox, whose applets give a shell, an HTTP server (httpd) and wget for health checks.
 */
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Docker from 'dockerode';

import { temporaryDirectory } from '../helpers/server.ts';

const BUSYBOX = '/bin/busybox';

export function docker(...args: string[]): string {
    const result = spawnSync('docker', args, { encoding: 'utf8', timeout: 300_000 });
    if (result.status !== 0) {
        throw new Error(`docker ${args.join(' ')}: ${result.stderr}`);
    }

    return result.stdout.trim();
}

export interface TestImage {
    /** Files to put in the image, by absolute path inside it. */
    files?: Record<string, string>;
    /** Dockerfile lines after the busybox set-up (CMD, HEALTHCHECK, ENV...). */
    lines?: string[];
}

/** Builds `tag` from scratch plus busybox and the given files; pushes it when `push` (a registry tag). */
export function buildTestImage(tag: string, image: TestImage = {}, push = false): string {
    if (!Fs.existsSync(BUSYBOX)) {
        throw new Error(`${BUSYBOX} is missing: install Debian's busybox-static (scripts/services.sh up does)`);
    }

    const context = temporaryDirectory('gatehouse-image-');
    try {
        Fs.copyFileSync(BUSYBOX, Path.join(context, 'busybox'));
        const copies: string[] = [];
        for (const [index, [target, content]] of Object.entries(image.files ?? {}).entries()) {
            Fs.writeFileSync(Path.join(context, `file-${index}`), content);
            copies.push(`COPY file-${index} ${target}`);
        }

        const dockerfile = [
            'FROM scratch',
            'COPY busybox /bin/busybox',
            'RUN ["/bin/busybox", "--install", "-s", "/bin"]',
            // busybox's applets install no handler for SIGTERM, which the kernel then ignores for process 1 of a
            // container: each stop would wait out Docker's 10 s grace period. A test's own STOPSIGNAL line comes later.
            'STOPSIGNAL SIGKILL',
            ...copies,
            ...(image.lines ?? []),
        ];
        Fs.writeFileSync(Path.join(context, 'Dockerfile'), `${dockerfile.join('\n')}\n`);
        docker('build', '-q', '-t', tag, context);
        if (push) {
            docker('push', '-q', tag);
        }

        return tag;
    } finally {
        Fs.rmSync(context, { recursive: true, force: true });
    }
}

/** A web server image: busybox httpd serving `/www` on port 80, with the given page. */
export function buildWebImage(tag: string, page: string, push = false): string {
    return buildTestImage(
        tag,
        { files: { '/www/index.html': page }, lines: ['EXPOSE 80', 'CMD ["httpd", "-f", "-v", "-p", "80", "-h", "/www"]'] },
        push,
    );
}

/** Removes the containers and networks of compose projects, and the images given: what deploy tests leave behind. */
export async function removeProjects(projects: string[], images: string[] = []): Promise<void> {
    const engine = new Docker();
    for (const project of projects) {
        const label = [`com.docker.compose.project=${project}`];
        for (const container of await engine.listContainers({ all: true, filters: { label } })) {
            await engine.getContainer(container.Id).remove({ force: true });
        }

        for (const network of await engine.listNetworks({ filters: { label } })) {
            await engine.getNetwork(network.Id).remove();
        }
    }

    for (const image of images) {
        await engine
            .getImage(image)
            .remove({ force: true })
            .catch(() => undefined);
    }
}

/** Starts `<app>-<service>-1` from `image` running `sh -c command`, labelled as Compose labels an app's container. */
export async function startAppContainer(
    app: string,
    service: string,
    image: string,
    command: string,
    hostConfig: Docker.HostConfig = {},
): Promise<Docker.Container> {
    const container = await new Docker().createContainer({
        name: `${app}-${service}-1`,
        Image: image,
        Labels: { 'com.docker.compose.project': app, 'com.docker.compose.service': service, 'io.gatehouse.managed': 'true' },
        Cmd: ['sh', '-c', command],
        HostConfig: hostConfig,
    });
    await container.start();
    return container;
}
