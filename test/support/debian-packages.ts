/**
 * The Debian packages the tests drive are installed by the tests themselves when missing (as root), so that the
 * README's test command works on a fresh machine with nothing else run first. A package may start a service of its
 * own on install; the tests never use those, and stop them so they hold no port.
 */
import { spawnSync } from 'node:child_process';
import Fs from 'node:fs';

const APT_ENVIRONMENT = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

function runQuietly(command: string, args: string[]): boolean {
    return spawnSync(command, args, { env: APT_ENVIRONMENT, stdio: 'ignore', timeout: 600_000 }).status === 0;
}

export interface DebianPackage {
    /** The package's name for apt-get. */
    name: string;
    /** A file the package installs: its presence says the package is there. */
    file: string;
    /** Services the package may start on install, stopped at once. */
    services?: string[];
}

/**
 * True when the package's file is there, after installing the package if it was missing and we are root. Under
 * CI=true a package that is still missing throws, naming it and what needs it.
 */
export function ensureDebianPackage(pkg: DebianPackage, neededBy: string): boolean {
    if (!Fs.existsSync(pkg.file) && process.getuid?.() === 0) {
        const install = ['install', '-y', '--no-install-recommends', pkg.name];
        if (!runQuietly('apt-get', install)) {
            runQuietly('apt-get', ['update']);
            runQuietly('apt-get', install);
        }

        for (const service of pkg.services ?? []) {
            runQuietly('service', [service, 'stop']);
        }
    }

    const present = Fs.existsSync(pkg.file);
    if (!present && process.env.CI === 'true') {
        throw new Error(`${pkg.file} is missing and apt-get install ${pkg.name} did not bring it; ${neededBy} need it`);
    }

    return present;
}
