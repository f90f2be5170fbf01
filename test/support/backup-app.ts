/** What the backup tests share: a deploy server, an app with a named volume, commands in its container, restic. */
import { spawnSync } from 'node:child_process';

import Code from '@hapi/code';

import type { Backup } from '../../plugins/deploy/domain/backups/backup-service.ts';
import type { Browser } from '../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../helpers/deploy-session.ts';
import { appHostPorts } from '../helpers/server.ts';
import { docker } from './images.ts';
import type { RunningServices } from './services.ts';
import { runToEnd } from './sse.ts';

const { expect } = Code;

/** A started deploy server on the loopback services, without an ACME directory (the site keeps its stand-in). */
export async function backupTestServer(services: RunningServices, environment: Record<string, string>): Promise<DeployTestServer> {
    const { ACME_DIRECTORY_URL: _acme, ...exports } = services.exports;
    return await deployTestServer({
        ...exports,
        BASE_DOMAIN: 'apps.test',
        APPS_FIRST_HOST_PORT: String(await appHostPorts()),
        ...environment,
    });
}

/** Creates the app `name` with a web service of `image` that mounts the named volume `data` at /data, and deploys it. */
export async function deployWithVolume(
    server: Pick<DeployTestServer, 'admin'>,
    name: string,
    image: string,
    secrets: Record<string, string> = {},
) {
    const tag = image.slice(image.lastIndexOf(':') + 1);
    const created = await server.admin.post('/api/apps', { name, image: image.slice(0, image.lastIndexOf(':')), tag });
    expect(created.status, created.text).to.equal(201);
    const compose = volumeCompose(image, (created.body as { app: { hostPort: number } }).app.hostPort);
    const saved = await server.admin.put(`/api/apps/${name}/draft`, { compose, secrets, auth: { access: 'public' } });
    expect(saved.status, saved.text).to.equal(200);
    const deployed = await runToEnd(server.admin, await server.admin.post(`/api/apps/${name}/deploy`, {}));
    expect(deployed.state, deployed.text).to.equal('succeeded');
}

/** The compose file of deployWithVolume's app: its web service on `port`, with `environment` if given. */
export function volumeCompose(image: string, port: number, environment: Record<string, string> = {}): string {
    const variables = Object.entries(environment).map(([key, value]) => `      ${key}: ${JSON.stringify(value)}`);
    return [
        'services:',
        '  web:',
        `    image: ${image}`,
        '    restart: unless-stopped',
        ...(variables.length > 0 ? ['    environment:', ...variables] : []),
        '    ports:',
        `      - "127.0.0.1:${port}:80"`,
        '    volumes:',
        '      - data:/data',
        'volumes:',
        '  data: {}',
    ].join('\n');
}

/** Removes the named volumes of the apps deployWithVolume made (removeProjects leaves volumes). */
export function removeVolumes(apps: string[]): void {
    for (const app of apps) {
        spawnSync('docker', ['volume', 'rm', '-f', `${app}_data`], { encoding: 'utf8' });
    }
}

/** Runs a shell command in the app's web container; answers its output, trimmed. */
export function inApp(app: string, script: string): string {
    return docker('exec', `${app}-web-1`, 'sh', '-c', script).trim();
}

export async function backupsOf(browser: Browser, app: string): Promise<Backup[]> {
    const listed = await browser.get(`/api/apps/${app}/backups`);
    expect(listed.status, listed.text).to.equal(200);
    return (listed.body as { backups: Backup[] }).backups;
}

/** restic on a repository, its password in the environment as Gatehouse gives it. */
export function resticFor(repository: string, password: string, args: string[], extra: string[] = []) {
    return spawnSync('restic', [...extra, ...args], {
        encoding: 'utf8',
        env: {
            ...process.env,
            RESTIC_REPOSITORY: repository,
            RESTIC_PASSWORD: password,
            RESTIC_CACHE_DIR: `/tmp/gatehouse-test-restic-cache-${process.pid}`,
        },
    });
}
