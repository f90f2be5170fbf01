/** The managed nginx itself: test its whole configuration and reload it (waiting until it has), as the deploy runs do. */
import { execFile } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

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

// The running nginx's master process and its workers, read from its pid file and /proc: what tells that a reload
// has taken (the master starts new workers, and tells the old ones to stop taking connections).

/** `nginx -V` of each binary: what it was built with does not change while it is installed. */
const buildSettings = new Map<string, Promise<string>>();

const PID_DIRECTIVE = /^\s*pid\s+["']?([^"';\s]+)["']?\s*;/m;

/** The running nginx's pid file: the main configuration's `pid` directive, else the one nginx was built with. */
export async function nginxPidFile(host: HostConfig): Promise<string | undefined> {
    const binary = nginxBinary(host.nginxBin);
    if (!buildSettings.has(binary)) {
        buildSettings.set(
            binary,
            nginxBuildSettings(host).then((outcome) => outcome.output),
        );
    }

    const built = (await buildSettings.get(binary)) ?? '';
    const confPath = host.nginxConf ?? /--conf-path=(\S+)/.exec(built)?.[1];
    const confText = confPath && Fs.existsSync(confPath) ? Fs.readFileSync(confPath, 'utf8') : '';
    const named = PID_DIRECTIVE.exec(confText)?.[1] ?? /--pid-path=(\S+)/.exec(built)?.[1];
    return named === undefined ? undefined : Path.resolve(confPath ? Path.dirname(confPath) : '/', named);
}

/** The pid the configuration's pid file names (whether it can be watched, `workersOf` tells). */
async function nginxMasterOf(host: HostConfig): Promise<number | undefined> {
    const pidFile = await nginxPidFile(host);
    let pid: number;
    try {
        pid = Number(Fs.readFileSync(pidFile ?? '', 'utf8').trim());
    } catch {
        return undefined;
    }

    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function childrenFile(pid: number): string {
    return `/proc/${pid}/task/${pid}/children`;
}

function commandLineOf(pid: number): string {
    try {
        return Fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    } catch {
        return '';
    }
}

/** The master's worker processes that take connections (not its cache processes, nor workers shutting down). */
function workersOf(master: number): Set<number> | undefined {
    let children: string;
    try {
        children = Fs.readFileSync(childrenFile(master), 'utf8');
    } catch {
        return undefined;
    }

    const pids = children.split(/\s+/).filter(Boolean).map(Number);
    return new Set(pids.filter((pid) => commandLineOf(pid) === 'nginx: worker process'));
}

/** New workers are taking connections and none of the old ones still is. */
function workersReplaced(master: number, before: Set<number>): boolean {
    const now = workersOf(master);
    return now !== undefined && now.size > 0 && [...now].every((pid) => !before.has(pid));
}

/** How long a reload may take to have its new workers answering before the run is told it did not take. */
const RELOAD_TIMEOUT_MS = 10_000;

/** Where nginx's worker processes cannot be seen, how long its new workers are given to take over. */
const UNSEEN_RELOAD_MS = 300;

/**
 * Asks the running nginx to load its configuration again (`nginx -s reload`) and waits until it has: its master
 * answers the signal at once but starts the workers that serve the new configuration a moment later, and only
 * then do the old ones stop taking connections. Where the master cannot be watched (no pid file, no /proc, no
 * workers of its own seen), a short fixed wait stands in.
 */
export async function reloadNginx(host: HostConfig): Promise<NginxOutcome> {
    const master = await nginxMasterOf(host);
    const before = master === undefined ? undefined : workersOf(master);
    const outcome = await runNginx(host, ['-s', 'reload']);
    if (!outcome.ok) {
        return outcome;
    }

    if (master === undefined || before === undefined || before.size === 0) {
        await sleep(UNSEEN_RELOAD_MS);
        return outcome;
    }

    const deadline = Date.now() + RELOAD_TIMEOUT_MS;
    while (!workersReplaced(master, before)) {
        if (Date.now() > deadline) {
            return { ok: false, output: `nginx took the reload but started no new workers within ${RELOAD_TIMEOUT_MS / 1000} s` };
        }

        await sleep(10);
    }

    return outcome;
}
