/**
 * From a project plan (compose-plan.ts) to a Swarm stack, as `docker stack deploy` makes one: a service per compose
 * service named `<app>_<service>`, on overlay networks of the app, with the compose file's `deploy:` keys honoured
 * (mode and replicas, placement, resources, restart policy, update and rollback configuration, endpoint mode).
 * What a container would have had (image, command, environment, mounts, health check, labels) becomes the task's
 * container spec; ports are published through the routing mesh unless the compose file asks for host mode. The
 * top-level secrets and configs become Swarm secrets and configs, mounted as files in the tasks that name them.
 */
import Crypto from 'node:crypto';

import type Docker from 'dockerode';

import type { ComposeService } from '../compose/compose-types.ts';
import { LABEL } from '../host/compose-labels.ts';
import { durationNs } from './compose-plan.ts';
import { type DeclaredObject, type ObjectKind, type ProjectPlan, type ServicePlan, PlanError } from './plan-model.ts';

/** The label `docker stack` puts on a stack's services, networks and containers. */
export const STACK_LABEL = 'com.docker.stack.namespace';

export interface StackServicePlan {
    service: string;
    /** `<app>_<service>`, as `docker stack deploy` names it. */
    name: string;
    dependsOn: ServicePlan['dependsOn'];
    /** The replicas asked for (a global service: undefined). */
    replicas: number | undefined;
    spec: Docker.CreateServiceOptions;
}

export interface StackPlan {
    project: string;
    networks: Array<{ name: string; external: boolean }>;
    /** The stack's secrets and configs, made (or found) before the services that mount them. */
    objects: StackObjectPlan[];
    services: StackServicePlan[];
}

/** A Swarm secret or config of the stack. */
export interface StackObjectPlan {
    kind: ObjectKind;
    key: string;
    /**
     * `<app>_<key>_<hash of its value>`: Swarm's secrets and configs cannot change, so a changed value is a new object,
     * and the services that mount it are updated to it. An external one: its own name.
     */
    name: string;
    /**
     * What it is made of; none for an external one, which is only found. `data` is a function, so that the plan
     * written out (JSON) never holds the value.
     */
    make?: { labels: Record<string, string>; data: () => Buffer };
}

/** Swarm's longest name of a secret or config. */
const OBJECT_NAME_MAX = 64;

/** The compose `deploy:` keys Gatehouse reads (the Compose specification's names). */
interface ComposeDeploy {
    mode?: 'replicated' | 'global';
    replicas?: number;
    endpoint_mode?: 'vip' | 'dnsrr';
    placement?: {
        constraints?: string[];
        preferences?: Array<{ spread: string }>;
        max_replicas_per_node?: number;
    };
    resources?: {
        limits?: { cpus?: string | number; memory?: string };
        reservations?: { cpus?: string | number; memory?: string };
    };
    restart_policy?: { condition?: 'none' | 'on-failure' | 'any'; delay?: string; max_attempts?: number; window?: string };
    update_config?: ComposeUpdateConfig;
    rollback_config?: ComposeUpdateConfig;
    labels?: Record<string, string> | string[];
}

interface ComposeUpdateConfig {
    parallelism?: number;
    delay?: string;
    failure_action?: 'continue' | 'pause' | 'rollback';
    monitor?: string;
    max_failure_ratio?: number;
    order?: 'stop-first' | 'start-first';
}

export function planStack(plan: ProjectPlan): StackPlan {
    const objects = plan.objects.map((object) => planObject(plan.project, object));
    return {
        project: plan.project,
        networks: plan.networks,
        objects,
        services: plan.services.map((service) => planStackService(plan.project, service, objects)),
    };
}

/** The labels of what a stack has besides its services: `docker stack`'s, Compose's project and Gatehouse's own. */
export function stackLabels(project: string): Record<string, string> {
    return { [STACK_LABEL]: project, [LABEL.project]: project, [LABEL.managed]: 'true' };
}

function planObject(project: string, object: DeclaredObject): StackObjectPlan {
    const { kind, key } = object;
    if ('external' in object) {
        return { kind, key, name: object.external };
    }

    const data = object.read();
    const name = `${project}_${key}_${object.fingerprint(data).slice(0, 12)}`;
    if (name.length > OBJECT_NAME_MAX) {
        throw new PlanError(`${kind}s.${key}: the Swarm ${kind} would be named ${name}, longer than Swarm's ${OBJECT_NAME_MAX} characters`);
    }

    return { kind, key, name, make: { labels: stackLabels(project), data: () => data } };
}

/** The task's container may not do what Swarm cannot give it: said before anything is made. */
const UNSUPPORTED: Array<[keyof ComposeService, string]> = [
    ['privileged', 'privileged containers'],
    ['network_mode', 'network_mode'],
    ['pid', 'pid'],
];

function planStackService(project: string, service: ServicePlan, objects: StackObjectPlan[]): StackServicePlan {
    const compose = service.source;
    for (const [key, what] of UNSUPPORTED) {
        if (compose[key] !== undefined && compose[key] !== false) {
            throw new PlanError(`services.${service.service}.${key}: a Swarm service cannot have ${what}`);
        }
    }

    const deploy = (compose.extra?.deploy ?? {}) as ComposeDeploy;
    const create = service.create;
    const labels = { ...create.Labels, [STACK_LABEL]: project };
    const replicas = deploy.mode === 'global' ? undefined : (deploy.replicas ?? 1);
    const spec: Docker.CreateServiceOptions = {
        Name: stackServiceName(project, service.service),
        Labels: { ...labels, ...deployLabels(deploy.labels) },
        TaskTemplate: {
            ContainerSpec: {
                Image: service.image,
                Labels: labels,
                ...(create.Entrypoint ? { Command: create.Entrypoint as string[] } : {}),
                ...(create.Cmd ? { Args: create.Cmd as string[] } : {}),
                Env: create.Env ?? [],
                ...(create.User ? { User: create.User } : {}),
                ...(create.WorkingDir ? { Dir: create.WorkingDir } : {}),
                Mounts: (create.HostConfig?.Mounts ?? []).map((mount) => ({
                    Type: mount.Type,
                    Source: mount.Source,
                    Target: mount.Target,
                    ReadOnly: mount.ReadOnly ?? false,
                })),
                ...(create.Healthcheck ? { HealthCheck: definedOnly(create.Healthcheck) } : {}),
                ...(create.HostConfig?.CapAdd ? { CapabilityAdd: create.HostConfig.CapAdd } : {}),
                ...stopGraceOf(compose),
                ...mountedObjects(service, objects),
            },
            RestartPolicy: restartPolicyOf(deploy.restart_policy),
            Placement: placementOf(deploy.placement),
            Resources: resourcesOf(service.service, deploy.resources),
            Networks: networksOf(service),
            ...(create.HostConfig?.LogConfig
                ? { LogDriver: { Name: create.HostConfig.LogConfig.Type, Options: create.HostConfig.LogConfig.Config } }
                : {}),
        },
        Mode: replicas === undefined ? { Global: {} } : { Replicated: { Replicas: replicas } },
        // A failed update is rolled back by Swarm itself unless the compose file says otherwise.
        UpdateConfig: updateConfigOf(deploy.update_config, 'rollback'),
        RollbackConfig: updateConfigOf(deploy.rollback_config, 'pause'),
        EndpointSpec: { Mode: deploy.endpoint_mode ?? 'vip', Ports: portsOf(service) },
    };
    return { service: service.service, name: spec.Name as string, dependsOn: service.dependsOn, replicas, spec: withHash(spec) };
}

type ObjectFileSpec = { Name: string; UID: string; GID: string; Mode: number };

/** The secrets and configs the service names, as files of its tasks; their IDs are added once they exist (swarm-objects.ts). */
function mountedObjects(service: ServicePlan, objects: StackObjectPlan[]): Pick<Docker.ContainerSpec, 'Secrets' | 'Configs'> {
    const mounted = (kind: ObjectKind) =>
        service.objectFiles
            .filter((file) => file.object.kind === kind)
            .map((file) => {
                const object = objects.find((candidate) => candidate.kind === kind && candidate.key === file.object.key);
                const spec: ObjectFileSpec = { Name: file.target, UID: file.uid, GID: file.gid, Mode: file.mode };
                return { name: object?.name ?? file.object.key, file: spec };
            });
    const secrets = mounted('secret').map(({ name, file }) => ({ SecretName: name, File: file }));
    const configs = mounted('config').map(({ name, file }) => ({ ConfigName: name, File: file }));
    return { ...(secrets.length > 0 ? { Secrets: secrets } : {}), ...(configs.length > 0 ? { Configs: configs } : {}) };
}

function definedOnly<T extends object>(value: T): T {
    return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}

/** `<app>_<service>`, as `docker stack deploy` names a stack's services. */
export function stackServiceName(project: string, service: string): string {
    return `${project}_${service}`;
}

/** The spec's hash as a label: an unchanged service is left as it runs. */
function withHash(spec: Docker.CreateServiceOptions): Docker.CreateServiceOptions {
    const hash = Crypto.createHash('sha256').update(JSON.stringify(spec)).digest('hex');
    return { ...spec, Labels: { ...spec.Labels, [LABEL.hash]: hash } };
}

/** How long a task is given to stop before it is killed (`stop_grace_period`; Swarm's default is 10 s). */
function stopGraceOf(compose: ComposeService): { StopGracePeriod?: number } {
    const grace = compose.extra?.stop_grace_period;
    return typeof grace === 'string' ? { StopGracePeriod: durationNs(grace) } : {};
}

function deployLabels(labels: ComposeDeploy['labels']): Record<string, string> {
    if (Array.isArray(labels)) {
        return Object.fromEntries(labels.map((entry) => [entry.split('=')[0] ?? entry, entry.split('=').slice(1).join('=')]));
    }

    return labels ?? {};
}

function networksOf(service: ServicePlan): Docker.NetworkAttachmentConfig[] {
    const first = Object.entries(service.create.NetworkingConfig?.EndpointsConfig ?? {}).map(([name, endpoint]) => ({
        Target: name,
        Aliases: endpoint.Aliases ?? [service.service],
    }));
    return [...first, ...service.extraNetworks.map((network) => ({ Target: network.name, Aliases: network.aliases }))];
}

/** Published ports through the routing mesh (`mode: host` in the long syntax binds on the task's node only). */
function portsOf(service: ServicePlan): Docker.PortConfig[] {
    const hostMode = new Set(
        (service.source.ports ?? [])
            .filter((port) => typeof port === 'object' && (port as { mode?: string }).mode === 'host')
            .map((port) => String((port as { target: number | string }).target)),
    );
    return Object.entries(service.create.HostConfig?.PortBindings ?? {}).flatMap(([key, bindings]) => {
        const [target = '', protocol = 'tcp'] = key.split('/');
        return (bindings as Array<{ HostPort: string }>).map((binding) => ({
            Protocol: protocol as 'tcp' | 'udp' | 'sctp',
            TargetPort: Number(target),
            ...(binding.HostPort ? { PublishedPort: Number(binding.HostPort) } : {}),
            PublishMode: hostMode.has(target) ? ('host' as const) : ('ingress' as const),
        }));
    });
}

function restartPolicyOf(policy: ComposeDeploy['restart_policy']): Docker.TaskRestartPolicy {
    return {
        Condition: policy?.condition ?? 'any',
        ...(policy?.delay ? { Delay: durationNs(policy.delay) } : {}),
        ...(policy?.max_attempts !== undefined ? { MaxAttempts: policy.max_attempts } : {}),
        ...(policy?.window ? { Window: durationNs(policy.window) } : {}),
    };
}

function placementOf(placement: ComposeDeploy['placement']): Docker.Placement {
    return {
        ...(placement?.constraints ? { Constraints: placement.constraints } : {}),
        ...(placement?.preferences
            ? { Preferences: placement.preferences.map((preference) => ({ Spread: { SpreadDescriptor: preference.spread } })) }
            : {}),
        ...(placement?.max_replicas_per_node !== undefined ? { MaxReplicas: placement.max_replicas_per_node } : {}),
    };
}

function resourcesOf(service: string, resources: ComposeDeploy['resources']): Docker.ResourceRequirements {
    const amount = (which: 'limits' | 'reservations') => {
        const given = resources?.[which];
        if (!given) return undefined;
        return {
            ...(given.cpus !== undefined ? { NanoCPUs: Math.round(Number(given.cpus) * 1e9) } : {}),
            ...(given.memory !== undefined ? { MemoryBytes: bytesOf(service, given.memory) } : {}),
        };
    };
    const limits = amount('limits');
    const reservations = amount('reservations');
    return { ...(limits ? { Limits: limits } : {}), ...(reservations ? { Reservations: reservations } : {}) };
}

/** Compose byte values (`512m`, `1g`, `1024`, `100kb`) in bytes. */
export function bytesOf(service: string, value: string | number): number {
    const match = /^(\d+(?:\.\d+)?)\s*([kmgt]?)b?$/i.exec(String(value).trim());
    if (!match) {
        throw new PlanError(`services.${service}.deploy.resources: ${value} is not an amount of memory (write 512m, 1g)`);
    }

    const power = ['', 'k', 'm', 'g', 't'].indexOf((match[2] ?? '').toLowerCase());
    return Math.round(Number(match[1]) * 1024 ** power);
}

function updateConfigOf(config: ComposeUpdateConfig | undefined, failureAction: 'rollback' | 'pause'): Docker.UpdateConfig {
    return {
        Parallelism: config?.parallelism ?? 1,
        ...(config?.delay ? { Delay: durationNs(config.delay) } : {}),
        FailureAction: config?.failure_action ?? failureAction,
        ...(config?.monitor ? { Monitor: durationNs(config.monitor) } : {}),
        ...(config?.max_failure_ratio !== undefined ? { MaxFailureRatio: config.max_failure_ratio } : {}),
        Order: config?.order ?? 'stop-first',
    };
}
