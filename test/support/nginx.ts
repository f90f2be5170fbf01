/**
 * Makes sure the tests have a real nginx binary: Debian's `nginx` package, installed with apt-get when
 * missing (as root). The service the package may start is stopped at once, so nothing holds port 80;
 * the tests only ever run `nginx -t` in a throw-away prefix. Under CI=true a missing nginx fails loudly.
 */
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';

import { nginxBinary } from '../../plugins/deploy/domain/nginx/nginx-test.ts';

const APT_ENVIRONMENT = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

function runQuietly(command: string, args: string[]): boolean {
    const result = spawnSync(command, args, { env: APT_ENVIRONMENT, stdio: 'ignore', timeout: 600_000 });
    return result.status === 0;
}

function locateNginx(): string | undefined {
    const binary = nginxBinary();
    return Fs.existsSync(binary) ? binary : undefined;
}

function install(): void {
    const command = ['install', '-y', '--no-install-recommends', 'nginx'];
    if (!runQuietly('apt-get', command)) {
        runQuietly('apt-get', ['update']);
        runQuietly('apt-get', command);
    }
}

/** The package may start its service; the tests must not depend on it, nor leave it holding port 80. */
function stopPackagedService(): void {
    runQuietly('service', ['nginx', 'stop']);
    const pidFile = '/run/nginx.pid';
    if (Fs.existsSync(pidFile)) {
        const pid = Number(Fs.readFileSync(pidFile, 'utf8').trim());
        if (Number.isInteger(pid) && pid > 0) {
            try {
                process.kill(pid, 'SIGQUIT');
            } catch {
                // already gone
            }
        }
    }
}

let located: string | undefined | null = null;

/** The nginx binary to test with, installing it when missing; undefined when there is none (outside CI). */
export function ensureNginx(): string | undefined {
    if (located !== null) {
        return located;
    }

    located = locateNginx();
    if (located === undefined && process.getuid?.() === 0) {
        install();
        stopPackagedService();
        located = locateNginx();
    }

    if (located === undefined && process.env.CI === 'true') {
        throw new Error('nginx is not installed and could not be installed (apt-get install nginx); the nginx tests need it');
    }

    return located;
}
