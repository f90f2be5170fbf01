/**
 * What a compose file is planned into (compose-plan.ts, compose-objects.ts, swarm-plan.ts read it): the plan's
 * shapes, its error, and the rules of the compose file they share.
 */
import Path from 'node:path';

import type Docker from 'dockerode';

import type { ComposeDependency, ComposeService } from '../compose/compose-types.ts';

export type DependencyCondition = ComposeDependency['condition'];

export interface ServicePlan {
    service: string;
    containerName: string;
    image: string;
    /** Services this one waits for, and how. */
    dependsOn: Record<string, DependencyCondition>;
    /** Networks after the first, connected once the container exists. */
    extraNetworks: Array<{ name: string; aliases: string[] }>;
    /** Everything but the config-hash label and the image id, which are added when the image is known. */
    create: Docker.ContainerCreateOptions;
    /** The compose file's entry it was planned from: a Swarm reads its `deploy:` keys (swarm-plan.ts). */
    source: ComposeService;
    /** The secrets and configs it names, as files of its container (compose mode) or its tasks (a Swarm). */
    objectFiles: ObjectFile[];
}

export interface ProjectPlan {
    project: string;
    workingDir: string;
    networks: Array<{ name: string; external: boolean }>;
    volumes: Array<{ name: string; external: boolean }>;
    /** In start order: every service after the services it depends on. */
    services: ServicePlan[];
    /** The top-level secrets and configs: a Swarm makes them objects (swarm-plan.ts); compose mode copies them in (containerFilesOf). */
    objects: DeclaredObject[];
}

export type ObjectKind = 'secret' | 'config';

/**
 * A top-level secret or config: an existing object of a Swarm found by its name (`external`), or one made from its
 * value, which `read` answers (a file of the app's folder, or a variable of the secrets file). Read only when asked,
 * so that compose mode, which does not ask, works as it did with whatever the entries say.
 */
export type DeclaredObject = { kind: ObjectKind; key: string } & (
    { external: string } | { read: () => Buffer; fingerprint: (value: Buffer) => string }
);

/**
 * A secret or config a service names (`secrets: [db_password]`, or the long syntax with `source`, `target`, `uid`,
 * `gid`, `mode`), with Docker's defaults: mode 0444, owned by root.
 */
export interface ObjectFile {
    object: DeclaredObject;
    /** As written, or the default: a secret's `source` (under /run/secrets), a config's `/<source>`. */
    target: string;
    uid: string;
    gid: string;
    mode: number;
}

export interface PlanInput {
    project: string;
    workingDir: string;
    composeFile: string;
    /** The values `${VAR}` takes (the app's secrets). */
    values: Record<string, string>;
    /**
     * The key a secret's or config's name is made with from its value (an HMAC, objectNameKey): the name changes
     * with the value, as a Swarm's objects cannot, without telling the value to whoever reads the names.
     */
    objectKey: Buffer;
}

export class PlanError extends Error {}

/** A host path (`./x`, `~/x`; its variables substituted) from the app's folder. */
export function hostPathOf(path: string, workingDir: string): string {
    return Path.resolve(workingDir, path.replace(/^~(?=\/)/, process.env.HOME ?? '~'));
}

export function isExternal(external: boolean | { name?: string } | undefined): boolean {
    return external === true || (typeof external === 'object' && external !== null);
}
