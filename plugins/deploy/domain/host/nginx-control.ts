/** The managed nginx itself: test its whole configuration and reload it, as the deploy runs do. */
import { execFile } from 'node:child_process';

import type { HostConfig } from '../../../../lib/config.ts';
import { nginxBinary } from './nginx-binary.ts';

export interface NginxOutcome {
    ok: boolean;
    output: string;
}

/** `-e stderr` keeps nginx from opening its compiled-in error log before it has read the configuration. */
function baseArguments(host: HostConfig): string[] {
    return ['-e', 'stderr', ...(host.nginxConf ? ['-c', host.nginxConf] : [])];
}

function runNginx(host: HostConfig, args: string[]): Promise<NginxOutcome> {
    return new Promise((resolve) => {
        execFile(nginxBinary(host.nginxBin), [...baseArguments(host), ...args], { timeout: 30_000 }, (error, stdout, stderr) => {
            resolve({ ok: !error, output: `${stdout}${stderr}`.trim() });
        });
    });
}

/** `nginx -t` on the managed nginx's whole configuration, with the sites it includes. */
export async function testNginxConfiguration(host: HostConfig): Promise<NginxOutcome> {
    return await runNginx(host, ['-t']);
}

/** `nginx -T`: the whole configuration as nginx reads it, included files and all (for reading, never to show). */
export async function dumpNginxConfiguration(host: HostConfig): Promise<NginxOutcome> {
    return await runNginx(host, ['-T']);
}

/** `nginx -V`: the version and the compiled-in settings, such as the default pid file. */
export async function nginxBuildSettings(host: HostConfig): Promise<NginxOutcome> {
    return await runNginx(host, ['-V']);
}

/** Asks the running nginx to load its configuration again (`nginx -s reload`). */
export async function reloadNginx(host: HostConfig): Promise<NginxOutcome> {
    return await runNginx(host, ['-s', 'reload']);
}
