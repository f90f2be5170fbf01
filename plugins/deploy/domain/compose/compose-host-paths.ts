/**
 * Host paths as the engine will use them, and what they give a container. A path is resolved the way the
 * deploy resolves it (variables substituted, relative to the app's folder, `~/` as the home folder,
 * normalised), then its symbolic links are followed the way Docker follows them when it mounts it.
 */
import Fs from 'node:fs';
import Path from 'node:path';

import type { Config } from '../../../../lib/config.ts';
import { ROOT_DIR } from '../../../../lib/paths.ts';
import { interpolate } from './compose-interpolation.ts';

/** Gatehouse's own code, its build (dist/) included. */
const INSTALL_DIR = ROOT_DIR;

const DOCKER_SOCKETS = ['/var/run/docker.sock', '/run/docker.sock'];

/** Host trees whose mount gives a container power over the host, or its secrets; subpaths included. */
const SYSTEM_TREES = [
    '/etc',
    '/root',
    '/var/run',
    '/run',
    '/proc',
    '/sys',
    '/boot',
    '/dev',
    '/var/lib/docker',
    '/var/lib/containerd',
    '/usr',
    '/bin',
    '/sbin',
    '/lib',
    '/lib64',
];

/** Mounted whole, these are too much; their subfolders (/srv/media) are ordinary data outside the app. */
const SYSTEM_EXACT = ['/', '/home', '/var', '/var/lib', '/srv', '/mnt', '/media', '/opt', '/tmp'];

/** Read-only files from /etc that images commonly need and that give nothing away: no finding at all. */
const HARMLESS_READ_ONLY = ['/etc/localtime', '/etc/timezone', '/etc/machine-id', '/etc/hosts', '/etc/resolv.conf'];

/** The files of the app's folder that Gatehouse deploys from (see engine/run-context.ts). */
const DEPLOYED_FILES = ['compose.yaml', 'secrets.env'];

/** A place on the host that belongs to Gatehouse or the engine, and what it holds. */
export interface HostPlace {
    path: string;
    what: string;
    /** How to do without it, when there is a better way than a folder of the app. */
    fix?: string;
}

export interface LintContext {
    /** The app, when there is one: its own volumes and networks are named `<app>_...`. */
    app?: string;
    /** The app's folder: relative host paths resolve against it, and what is in it belongs to the app. */
    appDir: string;
    /** The values `${VAR}` takes at deploy (the app's secrets): a path is judged after substitution. */
    values: Record<string, string>;
    /** Gatehouse's folders, its database and the engine's socket: mounting them, or a folder holding them, is a risk. */
    places: HostPlace[];
    /** Images (as the deploy substitutes them) known to declare their own HEALTHCHECK. */
    imagesWithHealthcheck?: ReadonlySet<string>;
}

export type LintConfig = Pick<Config, 'dataDir' | 'repositoriesDir' | 'packagesDir' | 'databaseUrl' | 'apps' | 'host'>;

/**
 * What the lint needs to know about this Gatehouse. Without an app (checking a compose file on its own), paths
 * are resolved against a folder standing for the app's, in APPS_DIR.
 */
export function lintContextFor(config: LintConfig, options: { app?: string; values?: Record<string, string> } = {}): LintContext {
    return {
        ...(options.app === undefined ? {} : { app: options.app }),
        appDir: Path.join(config.apps.appsDir, options.app ?? '<app>'),
        values: options.values ?? {},
        places: withLinksFollowed(gatehousePlaces(config)),
    };
}

/** Each place also where its links lead, so that a mount of the real folder behind a configured one is seen. */
function withLinksFollowed(places: HostPlace[]): HostPlace[] {
    const real = places
        .map((place) => ({ ...place, path: followLinks(place.path) }))
        .filter((place, index) => place.path !== places[index]?.path);
    return [...places, ...real];
}

function gatehousePlaces(config: LintConfig): HostPlace[] {
    const database = config.databaseUrl.startsWith('sqlite:')
        ? [{ path: Path.resolve(config.databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '')), what: "Gatehouse's database" }]
        : [];
    const nginxConf = config.host.nginxConf === undefined ? [] : [{ path: config.host.nginxConf, what: "nginx's configuration" }];
    return [
        ...dockerSockets().map((path) => ({
            path,
            what: 'the Docker socket: whoever holds it starts containers as root on the host',
            fix: 'remove the mount, or put a socket proxy that allows only the calls it needs in between',
        })),
        { path: config.dataDir, what: "Gatehouse's data folder, with its master key and database" },
        ...database,
        { path: config.apps.appsDir, what: "the apps' folders, with every app's files and secrets" },
        { path: config.apps.certificatesDir, what: 'the TLS certificates and their private keys' },
        { path: config.apps.nginxSitesDir, what: "the nginx sites, which nginx loads as root's configuration" },
        ...nginxConf,
        { path: config.apps.archivesDir, what: "the archives of deleted apps' data" },
        { path: config.host.acmeWebroot, what: 'the ACME challenge folder, which proves control of the domains' },
        { path: config.repositoriesDir, what: 'the git repositories' },
        { path: config.packagesDir, what: 'the package registry' },
        { path: INSTALL_DIR, what: "Gatehouse's own code" },
        ...homeFolder(),
    ];
}

/** The home folder of the user Gatehouse runs as (SSH keys, registry credentials), unless it is the root of everything. */
function homeFolder(): HostPlace[] {
    const home = process.env.HOME;
    return home && home !== '/' ? [{ path: Path.resolve(home), what: 'the home folder of the user Gatehouse runs as' }] : [];
}

/** The sockets dockerode reaches the engine through: DOCKER_HOST when it names one, and the usual places. */
function dockerSockets(): string[] {
    const configured = /^unix:\/\/(\/.+)$/.exec(process.env.DOCKER_HOST ?? '')?.[1];
    return configured === undefined ? DOCKER_SOCKETS : [Path.resolve(configured), ...DOCKER_SOCKETS];
}

export interface HostPath {
    /** As the compose file writes it: what findings show, since the values of its variables come from the secrets. */
    written: string;
    /** Substituted, resolved against the app's folder and normalised: what the engine hands to Docker. */
    resolved: string;
    /** The same with symbolic links followed, as Docker follows them. */
    real: string;
}

/** Resolves a host path of the compose file as the deploy does (engine/compose-plan.ts), links followed. */
export function resolveHostPath(written: string, context: LintContext): HostPath {
    return resolveSubstituted(interpolate(written, context.values), written, context);
}

/** The same for a path whose variables are already substituted; `written` is how the file wrote it. */
export function resolveSubstituted(substituted: string, written: string, context: LintContext): HostPath {
    // The deploy expands only `~/`, and leaves `~` alone when HOME is unset; taking both as a home folder errs on the safe side.
    const expanded = substituted.replace(/^~(?=\/|$)/, process.env.HOME ?? '/root');
    const resolved = Path.resolve(context.appDir, expanded);
    return { written, resolved, real: followLinks(resolved) };
}

/** The path with every symbolic link followed, `..` after a link taken physically; what does not exist stays as written. */
export function followLinks(path: string): string {
    const pending = path.split('/').filter(Boolean);
    let resolved = '/';
    let links = 0;
    for (let part = pending.shift(); part !== undefined; part = pending.shift()) {
        if (part === '.' || part === '..') {
            resolved = part === '..' ? Path.dirname(resolved) : resolved;
            continue;
        }

        const next = Path.join(resolved, part);
        const target = linkTarget(next);
        if (target === null) {
            return Path.join(next, ...pending);
        }

        if (target === undefined) {
            resolved = next;
            continue;
        }

        links += 1;
        if (links > 40) {
            return Path.join(next, ...pending);
        }

        pending.unshift(...target.split('/').filter(Boolean));
        resolved = target.startsWith('/') ? '/' : resolved;
    }

    return resolved;
}

/** A link's target, undefined for anything else that exists, null for what does not (or cannot be read). */
function linkTarget(path: string): string | undefined | null {
    try {
        return Fs.lstatSync(path).isSymbolicLink() ? Fs.readlinkSync(path) : undefined;
    } catch {
        return null;
    }
}

export interface PathVerdict {
    level: 'risk' | 'warning';
    /** Completes "<service> mounts <path>: ...". */
    reason: string;
    fix?: string;
}

/**
 * What a host path gives a container: a risk when it is, holds or lies in a sensitive place (the system,
 * a home folder, Gatehouse's own places, the Docker socket); a warning anywhere else outside the app's folder;
 * nothing inside it. A path is judged as written and with its links followed, and the worse verdict counts.
 */
export function judgeHostPath(path: HostPath, readOnly: boolean, context: LintContext): PathVerdict | undefined {
    if (readOnly && HARMLESS_READ_ONLY.includes(path.resolved)) {
        return undefined;
    }

    const appDirs = [context.appDir, followLinks(context.appDir)];
    const verdicts = [path.resolved, path.real].map((candidate) => judgeResolved(candidate, readOnly, appDirs, context.places));
    return verdicts.find((verdict) => verdict?.level === 'risk') ?? verdicts.find((verdict) => verdict !== undefined);
}

function judgeResolved(path: string, readOnly: boolean, appDirs: string[], places: HostPlace[]): PathVerdict | undefined {
    if (appDirs.some((appDir) => isWithin(path, appDir))) {
        return judgeInApp(path, readOnly, appDirs, places);
    }

    const reason = placeReason(path, places, ['it is', 'it is in']) ?? systemReason(path) ?? placeReason(path, places, ['it holds']);
    if (reason !== undefined) {
        return { level: 'risk', ...reason };
    }

    return { level: 'warning', reason: "it is outside the app's folder: the container shares it with the host" };
}

function judgeInApp(path: string, readOnly: boolean, appDirs: string[], places: HostPlace[]): PathVerdict | undefined {
    const held = placeReason(path, places, ['it holds']);
    if (held !== undefined) {
        return { level: 'risk', ...held };
    }

    const deployedFrom = appDirs.some((appDir) => path === appDir || DEPLOYED_FILES.some((file) => path === Path.join(appDir, file)));
    if (deployedFrom && !readOnly) {
        return { level: 'warning', reason: 'the container may rewrite compose.yaml and secrets.env, which Gatehouse deploys from' };
    }

    return undefined;
}

type Relation = 'it is' | 'it is in' | 'it holds';

function relation(path: string, place: string): Relation | undefined {
    if (path === place) {
        return 'it is';
    }

    if (isWithin(path, place)) {
        return 'it is in';
    }

    return isWithin(place, path) ? 'it holds' : undefined;
}

type Reason = Omit<PathVerdict, 'level'>;

/** The most specific place the path has one of the wanted relations with: the certificates before the data folder holding them. */
function placeReason(path: string, places: HostPlace[], wanted: Relation[]): Reason | undefined {
    let best: { place: HostPlace; found: Relation } | undefined;
    for (const place of places) {
        const found = relation(path, place.path);
        if (found !== undefined && wanted.includes(found) && place.path.length > (best?.place.path.length ?? -1)) {
            best = { place, found };
        }
    }

    return best === undefined
        ? undefined
        : { reason: `${best.found} ${best.place.what}`, ...(best.place.fix === undefined ? {} : { fix: best.place.fix }) };
}

function systemReason(path: string): Reason | undefined {
    if (path === '/') {
        return { reason: "it is the host's whole file system" };
    }

    if (SYSTEM_EXACT.includes(path) || /^\/home\/[^/]+$/.test(path)) {
        return { reason: `it is ${path.startsWith('/home/') ? 'a home folder' : 'a system folder'} of the host` };
    }

    for (const tree of SYSTEM_TREES) {
        const found = relation(path, tree);
        if (found !== undefined) {
            return { reason: `${found} ${tree}, a sensitive part of the host` };
        }
    }

    return undefined;
}

/** The path lies in the app's folder, as written and with its links followed. */
export function isInAppFolder(path: HostPath, context: LintContext): boolean {
    const appDirs = [context.appDir, followLinks(context.appDir)];
    return [path.resolved, path.real].every((candidate) => appDirs.some((appDir) => isWithin(candidate, appDir)));
}

/** `path` is `folder` or inside it. */
export function isWithin(path: string, folder: string): boolean {
    return path === folder || path.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
}
