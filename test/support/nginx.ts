/**
 * Makes sure the tests have a real nginx binary: Debian's `nginx` package, installed with apt-get when
 * missing (as root). The service the package may start is stopped at once, so nothing holds port 80;
 * the tests only ever run `nginx -t` in a throw-away prefix. Under CI=true a missing nginx fails loudly.
 */
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';

import { nginxBinary } from '../../plugins/deploy/domain/host/nginx-binary.ts';
import { ensureDebianPackage } from './debian-packages.ts';

function runQuietly(command: string, args: string[]): boolean {
    return spawnSync(command, args, { stdio: 'ignore', timeout: 60_000 }).status === 0;
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

    const binary = nginxBinary();
    if (!Fs.existsSync(binary) && ensureDebianPackage({ name: 'nginx', file: binary }, 'the nginx tests')) {
        stopPackagedService();
    }

    located = Fs.existsSync(binary) ? binary : undefined;
    return located;
}

/**
 * The main configuration of an nginx of a test's own: its pid file, error log and temporary files under `dir`, the
 * lines of its http block as given (indented here).
 */
export function ownNginxConfiguration(dir: string, http: string[], workerProcesses = 1): string {
    return [
        `worker_processes ${workerProcesses};`,
        `pid ${dir}/nginx.pid;`,
        `error_log ${dir}/error.log;`,
        'events { worker_connections 256; }',
        'http {',
        `    access_log off; client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;`,
        `    fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;`,
        ...http.map((line) => `    ${line}`),
        '}',
        '',
    ].join('\n');
}
