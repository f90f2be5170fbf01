/**
 * The secrets and configs of a compose file: the top-level declarations (a file of the app's folder, a variable of
 * its secrets file, a config's content, or a Swarm's existing object), the files each service names, and, for compose
 * mode, what is copied into each container before it starts.
 */
import Crypto from 'node:crypto';
import Fs from 'node:fs';

import { interpolate } from '../compose/compose-interpolation.ts';
import type { ComposeService, ComposeSpec } from '../compose/compose-types.ts';
import { isPlainObject } from '../compose/shape-reader.ts';
import type { ArchiveFile } from './file-archive.ts';
import {
    type DeclaredObject,
    hostPathOf,
    isExternal,
    type ObjectFile,
    type ObjectKind,
    type PlanInput,
    PlanError,
    type ProjectPlan,
} from './plan-model.ts';

export function declaredObjects(spec: ComposeSpec, input: PlanInput): DeclaredObject[] {
    return (['secret', 'config'] as const).flatMap((kind) => {
        const entries = spec.extra?.[`${kind}s`];
        return Object.entries(isPlainObject(entries) ? entries : {}).map(([key, entry]) => declaredObject(kind, key, entry, input));
    });
}

function declaredObject(kind: ObjectKind, key: string, entry: unknown, input: PlanInput): DeclaredObject {
    const at = `${kind}s.${key}`;
    const declared = isPlainObject(entry) ? entry : {};
    const external = declared.external as boolean | { name?: string } | undefined;
    if (isExternal(external)) {
        const legacyName = typeof external === 'object' ? external.name : undefined;
        const name = typeof declared.name === 'string' ? declared.name : (legacyName ?? key);
        return { kind, key, external: interpolate(name, input.values) };
    }

    const { file, environment, content } = declared;
    return {
        kind,
        key,
        fingerprint: (value) => Crypto.createHmac('sha256', input.objectKey).update(value).digest('hex'),
        read: () => {
            if (typeof file === 'string') return readObjectFile(at, hostPathOf(interpolate(file, input.values), input.workingDir));
            if (typeof environment === 'string') return valueOfVariable(at, environment, input.values);
            if (kind === 'config' && typeof content === 'string') return Buffer.from(interpolate(content, input.values));
            throw new PlanError(
                `${at}: give file: (a file of the app's folder), environment: (a variable of the secrets file)${kind === 'config' ? ', content:' : ''} or external: true`,
            );
        },
    };
}

/** The service's `secrets:` and `configs:` lists, each entry matched with its top-level declaration. */
export function objectFilesOf(name: string, service: ComposeService, objects: DeclaredObject[]): ObjectFile[] {
    return (['secret', 'config'] as const).flatMap((kind) => {
        const at = `services.${name}.${kind}s`;
        const written = service.extra?.[`${kind}s`] ?? [];
        if (!Array.isArray(written)) {
            throw new PlanError(`${at}: must be a list`);
        }

        return written.map((entry: unknown) => {
            const reference = referenceOf(at, entry);
            const object = objects.find((candidate) => candidate.kind === kind && candidate.key === reference.source);
            if (!object) {
                throw new PlanError(`${at}: no ${kind} ${reference.source} is declared under ${kind}s`);
            }

            return {
                object,
                target: reference.target ?? (kind === 'secret' ? reference.source : `/${reference.source}`),
                uid: idOf(at, 'uid', reference.uid),
                gid: idOf(at, 'gid', reference.gid),
                mode: modeOf(at, reference.mode),
            };
        });
    });
}

interface ObjectReference {
    source: string;
    target?: string;
    uid?: string | number;
    gid?: string | number;
    mode?: string | number;
}

function referenceOf(at: string, entry: unknown): ObjectReference {
    if (typeof entry === 'string') {
        return { source: entry };
    }

    if (isPlainObject(entry) && typeof entry.source === 'string') {
        return entry as unknown as ObjectReference;
    }

    throw new PlanError(`${at}: each entry is a name, or a mapping with source: (and target:, uid:, gid:, mode:)`);
}

/** A numeric user or group id (root's when none is given). */
function idOf(at: string, field: 'uid' | 'gid', id: string | number | undefined): string {
    const text = String(id ?? '0');
    if (!/^\d{1,7}$/.test(text)) throw new PlanError(`${at}: ${field} ${text} is not a numeric ${field === 'uid' ? 'user' : 'group'} id`);
    return text;
}

/** A number (`0440` is octal in a compose file, as Compose reads it) or octal text. */
function modeOf(at: string, mode: string | number | undefined): number {
    if (mode === undefined) return 0o444;
    if (typeof mode === 'number') return mode;
    if (/^0?[0-7]{1,4}$/.test(mode)) return parseInt(mode, 8);
    throw new PlanError(`${at}: ${mode} is not a file mode (write 0440)`);
}

/**
 * Where a container of compose mode finds the file, as `docker compose` puts it: a secret's relative target under
 * /run/secrets, a config's relative target under /.
 */
export function containerPathOf(file: ObjectFile): string {
    if (file.target.startsWith('/')) return file.target;
    return file.object.kind === 'secret' ? `/run/secrets/${file.target}` : `/${file.target}`;
}

function readObjectFile(at: string, path: string): Buffer {
    if (!Fs.existsSync(path) || !Fs.statSync(path).isFile()) {
        throw new PlanError(`${at}.file: ${path} is not a file`);
    }

    return Fs.readFileSync(path);
}

function valueOfVariable(at: string, variable: string, values: Record<string, string>): Buffer {
    const value = values[variable];
    if (value === undefined) {
        throw new PlanError(`${at}.environment: ${variable} is not in the app's secrets file`);
    }

    return Buffer.from(value);
}

/** What compose mode puts in a service's container before it starts: its secrets and configs, and their fingerprints. */
export interface ContainerFiles {
    files: ArchiveFile[];
    fingerprints: string[];
}

/**
 * Each service's secrets and configs read for compose mode, before anything is created: an external one is a Swarm's
 * object, which compose mode has no way to read (as `docker compose` refuses it without a Swarm).
 */
export function containerFilesOf(plan: ProjectPlan): Map<string, ContainerFiles> {
    return new Map(
        plan.services.map((service) => {
            const files = service.objectFiles.map((file) => {
                const { object } = file;
                if ('external' in object) {
                    throw new PlanError(
                        `${object.kind}s.${object.key}: an external ${object.kind} is a Swarm's (DEPLOY_ENGINE=swarm); give file: or environment:`,
                    );
                }

                const content = object.read();
                const path = containerPathOf(file);
                const fingerprint = `${path} ${file.uid}:${file.gid} ${file.mode.toString(8)} ${object.fingerprint(content)}`;
                return { archived: { path, content, uid: Number(file.uid), gid: Number(file.gid), mode: file.mode }, fingerprint };
            });
            const contents = { files: files.map(({ archived }) => archived), fingerprints: files.map(({ fingerprint }) => fingerprint) };
            return [service.service, contents];
        }),
    );
}
