/**
 * Lint rules on host paths: bind mounts, env files, build contexts, bind volumes, secret and config files.
 * Every path is judged where the deploy will find it (compose-host-paths.ts): in the app's folder it is the
 * app's own; elsewhere at least a warning; in or around a sensitive place a risk.
 */
import { describeVolume } from './compose-entries.ts';
import { type HostPath, isInAppFolder, judgeHostPath, resolveHostPath, resolveSubstituted } from './compose-host-paths.ts';
import type { ProjectLint, ServiceLint, ServiceRule } from './compose-lint-types.ts';
import type { ComposeNetwork, ComposeVolume } from './compose-types.ts';
import { isPlainObject } from './shape-reader.ts';

/** Volume types whose device is on another machine (or in memory), not a path of this host. */
const REMOTE_VOLUME_TYPES = ['nfs', 'nfs4', 'cifs', 'smb', 'smb3', 'smbfs', 'ceph', 'glusterfs', 'tmpfs'];

const OWN_FOLDER_FIX = 'use a named volume or a folder of the app instead (./data:/data)';

export const HOST_PATH_RULES: ServiceRule[] = [bindMounts, envFiles, buildContexts];

/**
 * "./x (/srv/apps/app/x, a link to /etc)": the path as written, and where it leads when that says more. A path
 * with variables is shown as written only: their values come from the secrets, which findings never show.
 */
function describePath(path: HostPath): string {
    if (path.written.includes('$')) {
        return path.written;
    }

    const notes = [
        ...(path.resolved === path.written ? [] : [path.resolved]),
        ...(path.real === path.resolved ? [] : [`a link to ${path.real}`]),
    ];
    return notes.length === 0 ? path.written : `${path.written} (${notes.join(', ')})`;
}

function bindMounts({ name, service, context, report }: ServiceLint): void {
    (service.volumes ?? []).forEach((volume, index) => {
        const mount = describeVolume(volume, context.values);
        if (mount.type !== 'bind') {
            return;
        }

        // A long-syntax bind without a source mounts the app's folder, as the deploy resolves it.
        const written = typeof volume === 'string' ? volume : (volume.source ?? '');
        const path = resolveSubstituted(mount.source ?? '', written.includes('$') ? written : (mount.source ?? ''), context);
        const verdict = judgeHostPath(path, mount.readOnly, context);
        if (verdict !== undefined) {
            const fix =
                verdict.fix ?? (verdict.level === 'risk' ? OWN_FOLDER_FIX : `${OWN_FOLDER_FIX}, unless it is meant to share this folder`);
            report(verdict.level, ['volumes', index], `${name} mounts ${describePath(path)}: ${verdict.reason}`, fix);
        }
    });
}

/** Gatehouse reads env files itself, on the host and with its own rights: one outside the app's folder is always a risk. */
function envFiles({ name, service, context, report }: ServiceLint): void {
    const entries = service.env_file === undefined ? [] : Array.isArray(service.env_file) ? service.env_file : [service.env_file];
    entries.forEach((entry, index) => {
        const path = resolveHostPath(typeof entry === 'string' ? entry : entry.path, context);
        if (!isInAppFolder(path, context)) {
            const reason = judgeHostPath(path, false, context)?.reason ?? "it is outside the app's folder";
            report(
                'risk',
                Array.isArray(service.env_file) ? ['env_file', index] : ['env_file'],
                `${name} reads the env file ${describePath(path)}, which Gatehouse reads on the host and hands to the container: ${reason}`,
                "keep env files in the app's folder (./app.env), or put the values in the secrets file",
            );
        }
    });
}

/** A build sends its context to the engine, and may copy any of it into the image. */
function buildContexts({ name, service, context, report }: ServiceLint): void {
    for (const { field, written } of buildPaths(service.extra?.build)) {
        const path = resolveHostPath(written, context);
        const verdict = judgeHostPath(path, true, context);
        if (verdict !== undefined) {
            report(
                verdict.level,
                field,
                `${name} builds from ${describePath(path)}: ${verdict.reason}`,
                'build from a folder of the app (context: ./build), or use a published image',
            );
        }
    }
}

type FieldPath = { field: Array<string | number>; written: string };

function buildPaths(build: unknown): FieldPath[] {
    if (typeof build === 'string') {
        return isLocalPath(build) ? [{ field: ['build'], written: build }] : [];
    }

    if (!isPlainObject(build)) {
        return [];
    }

    const context = typeof build.context === 'string' ? build.context : '.';
    const paths: FieldPath[] = isLocalPath(context) ? [{ field: ['build', 'context'], written: context }] : [];
    const additional = build.additional_contexts;
    const entries = Array.isArray(additional)
        ? additional.map((item, index) => [index, typeof item === 'string' ? item.slice(item.indexOf('=') + 1) : undefined] as const)
        : Object.entries(isPlainObject(additional) ? additional : {}).map(
              ([key, item]) => [key, typeof item === 'string' ? item : undefined] as const,
          );
    for (const [key, written] of entries) {
        if (written !== undefined && isLocalPath(written)) {
            paths.push({ field: ['build', 'additional_contexts', key], written });
        }
    }

    return paths;
}

/** Not a URL (https://, git://, docker-image://...), a git remote, or another service or stage. */
function isLocalPath(context: string): boolean {
    return !/^[a-z][a-z0-9+.-]*:\/\//i.test(context) && !/^(git@|service:|target:)/.test(context);
}

export function bindVolumes({ spec, context, report }: ProjectLint): void {
    for (const [key, volume] of Object.entries(spec.volumes ?? {})) {
        const device = hostDeviceOf(volume);
        if (device === undefined) {
            continue;
        }

        const path = resolveHostPath(device.written, context);
        const verdict = judgeHostPath(path, device.readOnly, context);
        if (verdict !== undefined) {
            report(
                verdict.level,
                ['volumes', key, 'driver_opts', 'device'],
                `the volume ${key} binds ${describePath(path)}: ${verdict.reason}`,
                verdict.fix ?? 'remove driver_opts, so that the volume is an ordinary named volume, or mount a folder of the app',
            );
        }
    }
}

/** The host path the local driver mounts for a volume (o: bind, type: none, or a device such as /dev/sdb1). */
function hostDeviceOf(volume: ComposeVolume | null): { written: string; readOnly: boolean } | undefined {
    const options = volume?.driver_opts;
    if (options?.device === undefined || (volume?.driver !== undefined && volume.driver !== 'local')) {
        return undefined;
    }

    const mountOptions = String(options.o ?? '').split(',');
    const type = String(options.type ?? '').toLowerCase();
    if (REMOTE_VOLUME_TYPES.includes(type) || mountOptions.some((option) => option.startsWith('addr='))) {
        return undefined;
    }

    return { written: String(options.device), readOnly: mountOptions.includes('ro') };
}

export function secretFiles({ spec, context, report }: ProjectLint): void {
    for (const kind of ['secrets', 'configs'] as const) {
        const definitions = spec.extra?.[kind];
        for (const [key, definition] of Object.entries(isPlainObject(definitions) ? definitions : {})) {
            if (!isPlainObject(definition) || typeof definition.file !== 'string') {
                continue;
            }

            const path = resolveHostPath(definition.file, context);
            const verdict = judgeHostPath(path, true, context);
            if (verdict !== undefined) {
                report(
                    verdict.level,
                    [kind, key, 'file'],
                    `the ${kind === 'secrets' ? 'secret' : 'config'} ${key} is read from ${describePath(path)}: ${verdict.reason}`,
                    `keep the file in the app's folder (file: ./${key}), or give the value in the secrets file (environment: NAME)`,
                );
            }
        }
    }
}

/** A volume or network that is external, or named outside the app's project, may be another app's. */
export function foreignResources({ spec, context, report, text }: ProjectLint): void {
    const kinds = [
        { kind: 'volumes', entries: spec.volumes ?? {}, may: "hold another app's data" },
        { kind: 'networks', entries: spec.networks ?? {}, may: "connect to another app's services" },
    ] as const;
    for (const { kind, entries, may } of kinds) {
        for (const [key, resource] of Object.entries(entries) as Array<[string, ComposeVolume | ComposeNetwork | null]>) {
            const external = resource?.external;
            const named = resource?.name === undefined ? undefined : text(resource.name);
            const own = named !== undefined && context.app !== undefined && named.startsWith(`${context.app}_`);
            if ((external !== undefined && external !== false) || (named !== undefined && !own)) {
                const what = external !== undefined && external !== false ? 'external' : `named ${resource?.name}`;
                report(
                    'warning',
                    [kind, key],
                    `the ${kind === 'volumes' ? 'volume' : 'network'} ${key} is ${what}, not this app's own: it may ${may}`,
                    `remove ${external !== undefined && external !== false ? 'external' : 'name'}, unless it is meant to be shared`,
                );
            }
        }
    }
}
