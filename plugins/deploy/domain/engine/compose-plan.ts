/**
 * From a compose model to what the Docker engine is asked to create: one container per service with
 * Docker Compose's own labels, so that `docker compose -p <app> ps` sees the same project, and a hash of
 * each service's configuration, so that a re-deploy recreates only what changed.
 */
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import type Docker from 'dockerode';

import { describePort, describeVolume } from '../compose/compose-entries.ts';
import { interpolate } from '../compose/compose-interpolation.ts';
import type { ComposeHealthcheck, ComposeService, ComposeSpec } from '../compose/compose-types.ts';
import { LABEL } from '../host/compose-labels.ts';
import { declaredObjects, objectFilesOf } from './compose-objects.ts';
import { parseEnvFile, splitCommand } from './env-file.ts';
import {
    type DeclaredObject,
    type DependencyCondition,
    hostPathOf,
    isExternal,
    type PlanInput,
    PlanError,
    type ProjectPlan,
    type ServicePlan,
} from './plan-model.ts';

/** The Compose version our labels imitate; `docker compose` only reads it. */
const COMPOSE_VERSION = '2.29.0';

/** The project's plan; throws PlanError for what the engine could not create (cycles, unknown services). */
export function planProject(spec: ComposeSpec, input: PlanInput): ProjectPlan {
    const networks = Object.entries(spec.networks ?? {}).map(([key, network]) => ({
        key,
        name: network?.name ?? (isExternal(network?.external) ? key : `${input.project}_${key}`),
        external: isExternal(network?.external),
    }));
    if (!networks.some((network) => network.key === 'default')) {
        networks.unshift({ key: 'default', name: `${input.project}_default`, external: false });
    }

    const volumes = Object.entries(spec.volumes ?? {}).map(([key, volume]) => ({
        key,
        name: volume?.name ?? (isExternal(volume?.external) ? key : `${input.project}_${key}`),
        external: isExternal(volume?.external),
    }));
    const networkName = (key: string) => networks.find((network) => network.key === key)?.name ?? `${input.project}_${key}`;
    const volumeName = (key: string) => volumes.find((volume) => volume.key === key)?.name ?? `${input.project}_${key}`;
    const objects = declaredObjects(spec, input);
    const services = startOrder(spec).map((name) =>
        planService(name, spec.services[name] as ComposeService, input, { networkName, volumeName, objects }),
    );
    return {
        project: input.project,
        workingDir: input.workingDir,
        networks: networks.map(({ name, external }) => ({ name, external })),
        volumes: volumes.map(({ name, external }) => ({ name, external })),
        services,
        objects,
    };
}

export function dependenciesOf(service: ComposeService): Record<string, DependencyCondition> {
    const dependsOn = service.depends_on;
    if (Array.isArray(dependsOn)) {
        return Object.fromEntries(dependsOn.map((name) => [name, 'service_started' as const]));
    }

    return Object.fromEntries(Object.entries(dependsOn ?? {}).map(([name, dependency]) => [name, dependency.condition]));
}

/** Services ordered so that each comes after its dependencies; a cycle or an unknown service is a PlanError. */
export function startOrder(spec: ComposeSpec): string[] {
    const order: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (name: string, from?: string) => {
        const service = spec.services[name];
        if (!service) {
            throw new PlanError(`services.${from}.depends_on: no service named ${name}`);
        }

        if (state.get(name) === 'done') {
            return;
        }

        if (state.get(name) === 'visiting') {
            throw new PlanError(`services.${name}.depends_on: a dependency cycle goes through ${name}`);
        }

        state.set(name, 'visiting');
        Object.keys(dependenciesOf(service)).forEach((dependency) => visit(dependency, name));
        state.set(name, 'done');
        order.push(name);
    };
    Object.keys(spec.services)
        .sort()
        .forEach((name) => visit(name));
    return order;
}

interface Namers {
    networkName: (key: string) => string;
    volumeName: (key: string) => string;
    objects: DeclaredObject[];
}

function planService(name: string, service: ComposeService, input: PlanInput, namers: Namers): ServicePlan {
    const values = input.values;
    const text = (value: string) => interpolate(value, values);
    if (!service.image) {
        throw new PlanError(`services.${name}.image: an image is needed (building images is not supported)`);
    }

    const image = text(service.image);
    const containerName = service.container_name ? text(service.container_name) : `${input.project}-${name}-1`;
    const dependsOn = dependenciesOf(service);
    const networks = serviceNetworks(name, service).map(({ key, aliases }) => ({ name: namers.networkName(key), aliases }));
    const [firstNetwork, ...extraNetworks] = networks;
    const labels: Record<string, string> = {
        ...userLabels(service.labels, text),
        [LABEL.project]: input.project,
        [LABEL.service]: name,
        [LABEL.number]: '1',
        [LABEL.oneoff]: 'False',
        [LABEL.workingDir]: input.workingDir,
        [LABEL.configFiles]: input.composeFile,
        [LABEL.dependsOn]: Object.entries(dependsOn)
            .map(([dependency, condition]) => `${dependency}:${condition}:false`)
            .join(','),
        [LABEL.image]: image,
        [LABEL.version]: COMPOSE_VERSION,
        [LABEL.managed]: 'true',
    };
    const { exposed, bindings } = portsOf(service, values);
    const create: Docker.ContainerCreateOptions = {
        name: containerName,
        Image: image,
        Env: environmentOf(service, input),
        Labels: labels,
        ExposedPorts: exposed,
        ...(service.command !== undefined ? { Cmd: commandOf(service.command, text) } : {}),
        ...(service.entrypoint !== undefined ? { Entrypoint: commandOf(service.entrypoint, text) } : {}),
        ...(service.user ? { User: text(service.user) } : {}),
        ...(service.working_dir ? { WorkingDir: text(service.working_dir) } : {}),
        ...(service.healthcheck ? { Healthcheck: healthcheckOf(service.healthcheck, text) } : {}),
        HostConfig: {
            PortBindings: bindings,
            Mounts: mountsOf(service, input, namers.volumeName),
            RestartPolicy: restartPolicyOf(service.restart),
            NetworkMode: service.network_mode ?? firstNetwork?.name ?? 'bridge',
            ...(service.cap_add ? { CapAdd: service.cap_add } : {}),
            ...(service.privileged ? { Privileged: true } : {}),
            ...(service.extra_hosts ? { ExtraHosts: extraHostsOf(service.extra_hosts) } : {}),
            ...(service.logging?.driver
                ? { LogConfig: { Type: service.logging.driver, Config: stringValues(service.logging.options ?? {}) } }
                : {}),
        },
        ...(firstNetwork && !service.network_mode
            ? { NetworkingConfig: { EndpointsConfig: { [firstNetwork.name]: { Aliases: firstNetwork.aliases } } } }
            : {}),
    };
    return {
        service: name,
        containerName,
        image,
        dependsOn,
        extraNetworks: service.network_mode ? [] : extraNetworks,
        create,
        source: service,
        objectFiles: objectFilesOf(name, service, namers.objects),
    };
}

/**
 * The hash a container carries: its whole creation request and the image it runs, so a new image recreates it, and
 * the files put in it (keyed fingerprints of their values, from ContainerFiles), so a changed secret does too.
 */
export function configHash(plan: ServicePlan, imageId: string, files: string[] = []): string {
    const hashed = { create: plan.create, extraNetworks: plan.extraNetworks, imageId, ...(files.length > 0 ? { files } : {}) };
    return Crypto.createHash('sha256').update(JSON.stringify(hashed)).digest('hex');
}

function serviceNetworks(name: string, service: ComposeService): Array<{ key: string; aliases: string[] }> {
    const networks = service.networks;
    if (networks === undefined) {
        return [{ key: 'default', aliases: [name] }];
    }

    if (Array.isArray(networks)) {
        return networks.map((key) => ({ key, aliases: [name] }));
    }

    return Object.entries(networks).map(([key, options]) => ({ key, aliases: [name, ...(options?.aliases ?? [])] }));
}

function userLabels(labels: ComposeService['labels'], text: (value: string) => string): Record<string, string> {
    if (Array.isArray(labels)) {
        return Object.fromEntries(
            labels.map((entry) => {
                const equals = entry.indexOf('=');
                return equals < 0 ? [entry, ''] : [entry.slice(0, equals), text(entry.slice(equals + 1))];
            }),
        );
    }

    return Object.fromEntries(Object.entries(labels ?? {}).map(([key, value]) => [key, text(value)]));
}

/** env_file entries first, then `environment`, as Compose layers them; a name without a value is left out. */
function environmentOf(service: ComposeService, input: PlanInput): string[] {
    const merged: Record<string, string> = {};
    const files = service.env_file === undefined ? [] : Array.isArray(service.env_file) ? service.env_file : [service.env_file];
    for (const entry of files) {
        const file = typeof entry === 'string' ? { path: entry, required: true } : entry;
        const path = Path.resolve(input.workingDir, interpolate(file.path, input.values));
        if (!Fs.existsSync(path)) {
            if (file.required !== false) {
                throw new PlanError(`env_file ${file.path}: not found in ${input.workingDir}`);
            }

            continue;
        }

        Object.assign(merged, parseEnvFile(Fs.readFileSync(path, 'utf8')));
    }

    for (const [key, value] of Object.entries(service.environment ?? {})) {
        if (value !== null) {
            merged[key] = interpolate(value, input.values);
        }
    }

    return Object.entries(merged).map(([key, value]) => `${key}=${value}`);
}

/** Ports are published on loopback only: an address other than 127.0.0.1 or ::1 is replaced by 127.0.0.1. */
function portsOf(service: ComposeService, values: Record<string, string>) {
    const exposed: Record<string, Record<string, never>> = {};
    const bindings: Record<string, Array<{ HostIp: string; HostPort: string }>> = {};
    for (const expose of service.expose ?? []) {
        exposed[String(expose).includes('/') ? String(expose) : `${expose}/tcp`] = {};
    }

    for (const port of service.ports ?? []) {
        const description = describePort(port, values);
        const key = `${description.target}/${description.protocol}`;
        exposed[key] = {};
        const hostIp = description.hostIp === '::1' ? '::1' : '127.0.0.1';
        (bindings[key] ??= []).push({ HostIp: hostIp, HostPort: description.published ?? '' });
    }

    return { exposed, bindings };
}

function mountsOf(service: ComposeService, input: PlanInput, volumeName: (key: string) => string): Docker.MountSettings[] {
    return (service.volumes ?? []).map((volume) => {
        const description = describeVolume(volume, input.values);
        if (description.type === 'bind') {
            const source = hostPathOf(description.source ?? '', input.workingDir);
            return { Type: 'bind', Source: source, Target: description.target, ReadOnly: description.readOnly };
        }

        if (description.type === 'tmpfs') {
            return { Type: 'tmpfs', Source: '', Target: description.target };
        }

        // An empty source is an anonymous volume.
        return {
            Type: 'volume',
            Source: description.source ? volumeName(description.source) : '',
            Target: description.target,
            ReadOnly: description.readOnly,
        };
    });
}

function commandOf(command: string | string[], text: (value: string) => string): string[] {
    return Array.isArray(command) ? command.map(text) : splitCommand(text(command));
}

/** Compose durations (`1m30s`, `500ms`) in nanoseconds, as the engine's API takes them. */
export function durationNs(duration: string | undefined): number | undefined {
    if (duration === undefined) {
        return undefined;
    }

    const units: Record<string, number> = { ns: 1, us: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
    let total = 0;
    const pattern = /(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)/g;
    let consumed = 0;
    for (const match of duration.matchAll(pattern)) {
        total += Number(match[1]) * (units[match[2] ?? 's'] ?? 0);
        consumed += match[0].length;
    }

    if (consumed !== duration.length || consumed === 0) {
        throw new PlanError(`healthcheck: ${duration} is not a duration (write 10s, 1m30s, 500ms)`);
    }

    return Math.round(total);
}

function healthcheckOf(healthcheck: ComposeHealthcheck, text: (value: string) => string): Docker.HealthConfig {
    if (healthcheck.disable) {
        return { Test: ['NONE'] };
    }

    const test = healthcheck.test;
    return {
        Test: test === undefined ? [] : Array.isArray(test) ? test.map(text) : ['CMD-SHELL', text(test)],
        Interval: durationNs(healthcheck.interval),
        Timeout: durationNs(healthcheck.timeout),
        StartPeriod: durationNs(healthcheck.start_period),
        ...(healthcheck.retries !== undefined ? { Retries: healthcheck.retries } : {}),
    };
}

function restartPolicyOf(restart: string | undefined): Docker.HostRestartPolicy {
    const [name = 'no', count] = (restart ?? 'no').split(':');
    return { Name: name, ...(count ? { MaximumRetryCount: Number(count) } : {}) };
}

function extraHostsOf(hosts: string[] | Record<string, string>): string[] {
    return Array.isArray(hosts)
        ? hosts.map((entry) => entry.replace('=', ':'))
        : Object.entries(hosts).map(([host, ip]) => `${host}:${ip}`);
}

function stringValues(options: Record<string, unknown>): Record<string, string> {
    return Object.fromEntries(Object.entries(options).map(([key, value]) => [key, String(value)]));
}
