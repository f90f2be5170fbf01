/**
 * Brings a stack plan up on a Docker Swarm through dockerode, as `docker stack deploy` would, and waits for it as
 * `docker stack deploy` does not: overlay networks, then each service in dependency order (a service waits for the
 * services it depends on to have their replicas running, or healthy), created or updated in place; the secrets and
 * configs they mount are made first (swarm-objects.ts). An update is Swarm's own rolling update under the service's
 * update configuration; Gatehouse waits until it completed, and a run's rollback is Swarm's own rollback to the
 * previous spec (services, secrets and configs the run made are removed).
 */
import { isDeepStrictEqual } from 'node:util';

import type Docker from 'dockerode';

import type { HostConfig } from '../../../../lib/config.ts';
import { LABEL } from '../host/compose-labels.ts';
import { registryAuth } from '../host/docker-client.ts';
import {
    type AppEngine,
    ensureNetworks,
    type ExecOptions,
    type ExecResult,
    execInContainer,
    freshOutcome,
    type Log,
    type UpOptions,
    type UpOutcome,
} from './app-engine.ts';
import type { DependencyCondition, ProjectPlan, ServicePlan } from './plan-model.ts';
import { type PullImagesOptions, imagesAtHand, imagesOf, pullImages } from './image-pull.ts';
import type { JournalEntry } from './run-journal.ts';
import { ensureObjects, mountedObjectIds, removeIfPresent, removeObject, stackObjects, withObjectIds } from './swarm-objects.ts';
import { planStack, STACK_LABEL, stackLabels, stackServiceName, type StackPlan, type StackServicePlan } from './swarm-plan.ts';

const POLL_MS = 250;
const ROLLBACK_TIMEOUT_MS = 120_000;
const NETWORK_REMOVAL_TIMEOUT_MS = 60_000;
/** A task is killed after its stop grace period (10 s by default): this is long past it. */
const STOP_TIMEOUT_MS = 120_000;

type SwarmTask = {
    ID: string;
    NodeID?: string;
    DesiredState?: string;
    CreatedAt?: string;
    Status?: { State?: string; Err?: string; Message?: string; Timestamp?: string; ContainerStatus?: { ContainerID?: string } };
    Spec?: { ContainerSpec?: { Image?: string }; ForceUpdate?: number };
    Version?: { Index?: number };
};

type SwarmService = {
    ID: string;
    Version: { Index: number };
    Spec: Docker.CreateServiceOptions;
    PreviousSpec?: Docker.CreateServiceOptions;
    UpdateStatus?: { State?: string; Message?: string };
};

export class SwarmEngine implements AppEngine {
    readonly #docker: Docker;
    readonly #host: HostConfig | undefined;
    readonly #log: Log;
    readonly #journal: (entry: JournalEntry) => Promise<void>;

    /** `host`: the registries' credentials, sent with each service so that every node can pull a private image. */
    constructor(
        docker: Docker,
        host: HostConfig | undefined,
        log: Log,
        journal: (entry: JournalEntry) => Promise<void> = () => Promise.resolve(),
    ) {
        this.#docker = docker;
        this.#host = host;
        this.#log = log;
        this.#journal = journal;
    }

    /** Pulled on the manager, which checks that each image can be had; every node pulls it again for its tasks. */
    async pullImages(plan: ProjectPlan, options: PullImagesOptions): Promise<{ imageIds: Map<string, string>; pulled: string[] }> {
        return await pullImages(this.#docker, this.#requireHost(), this.#log, imagesOf(plan), options);
    }

    async imagesAtHand(plan: ProjectPlan, options: PullImagesOptions): Promise<Map<string, string>> {
        return await imagesAtHand(this.#docker, this.#requireHost(), this.#log, imagesOf(plan), options);
    }

    #requireHost(): HostConfig {
        if (!this.#host) throw new Error('the swarm engine was made without the host configuration');
        return this.#host;
    }

    /** A swarm's tasks run on any node: no one gateway address reaches the manager's nginx from all of them. */
    async appNetworkGateway(plan: ProjectPlan, outcome: UpOutcome): Promise<string | undefined> {
        await this.#ensureNetworks(planStack(plan), outcome);
        return undefined;
    }

    /** The stack's services as the manager knows them. */
    async stackServices(project: string): Promise<SwarmService[]> {
        return (await this.#docker.listServices({ filters: { label: [`${STACK_LABEL}=${project}`] } })) as unknown as SwarmService[];
    }

    async up(project: ProjectPlan, _imageIds: Map<string, string>, options: UpOptions, outcome = freshOutcome()): Promise<UpOutcome> {
        try {
            const plan = planStack(project);
            await this.#ensureNetworks(plan, outcome);
            const objectIds = await this.#ensureObjects(plan, outcome);
            const existing = await this.stackServices(plan.project);
            for (const service of plan.services) {
                await this.#waitForDependencies(plan, service, options);
                await this.#upService({ ...service, spec: withObjectIds(service.spec, objectIds) }, existing, outcome);
            }

            const names = new Set(plan.services.map((service) => service.name));
            outcome.orphanServices = existing.filter((service) => !names.has(service.Spec.Name ?? '')).map((service) => service.ID);
            for (const service of plan.services) {
                await this.waitFor(service, 'service_healthy', options.healthTimeoutMs);
            }

            await this.#settle(plan, options.settleMs);
            return outcome;
        } catch (error) {
            (error as Error & { outcome?: UpOutcome }).outcome = outcome;
            throw error;
        }
    }

    async #ensureNetworks(plan: StackPlan, outcome: UpOutcome): Promise<void> {
        await ensureNetworks(this.#docker, plan, outcome, {
            journal: this.#journal,
            log: this.#log,
            create: (name) => ({
                Name: name,
                Driver: 'overlay',
                Attachable: true,
                Labels: stackLabels(plan.project),
            }),
        });
    }

    /** The plan's secrets and configs, made when missing; the app's others are the plan's no more (see commit). */
    async #ensureObjects(plan: StackPlan, outcome: UpOutcome): Promise<Map<string, string>> {
        const ids = await ensureObjects(this.#docker, plan.objects, outcome, { journal: this.#journal, log: this.#log });
        const planned = new Set(plan.objects.map((object) => object.name));
        outcome.orphanObjects = (await stackObjects(this.#docker, plan.project)).filter((object) => !planned.has(object.name));
        return ids;
    }

    async #upService(service: StackServicePlan, existing: SwarmService[], outcome: UpOutcome): Promise<void> {
        const current = existing.find((candidate) => candidate.Spec.Name === service.name);
        const auth = this.#host ? registryAuth(this.#host, imageOf(service)) : undefined;
        if (current && current.Spec.Labels?.[LABEL.hash] === service.spec.Labels?.[LABEL.hash]) {
            outcome.kept.push(service.service);
            const replicas = current.Spec.Mode?.Replicated?.Replicas;
            if (service.replicas !== undefined && replicas !== service.replicas) {
                // Stopped (scaled to none) since: its configuration is unchanged, so it is only started again.
                await this.#scale(service, service.replicas);
                this.#log(`Started ${service.name} (configuration unchanged)`);
            } else {
                this.#log(`Kept ${service.name}: its configuration has not changed`);
            }

            return;
        }

        if (current) {
            await this.#journal({ type: 'service-update', id: current.ID, name: service.name });
            await this.#docker.getService(current.ID).update({
                _query: { version: current.Version.Index },
                _body: service.spec,
                ...(auth ? { authconfig: auth } : {}),
            });
            outcome.updatedServices.push(current.ID);
            this.#log(`Updating ${service.name} (${imageOf(service)}), as its update configuration says`);
            return;
        }

        await this.#journal({ type: 'service', name: service.name });
        const created = (await this.#docker.createService({ ...service.spec, ...(auth ? { authconfig: auth } : {}) })) as {
            id?: string;
            ID?: string;
        };
        outcome.created.push(created.id ?? created.ID ?? service.name);
        this.#log(
            `Created ${service.name} (${imageOf(service)}, ${service.replicas === undefined ? 'on every node' : `${service.replicas} replica(s)`})`,
        );
    }

    async #waitForDependencies(plan: StackPlan, service: StackServicePlan, options: UpOptions): Promise<void> {
        for (const [name, condition] of Object.entries(service.dependsOn)) {
            const dependency = plan.services.find((candidate) => candidate.service === name);
            if (dependency) {
                await this.waitFor(dependency, condition, options.healthTimeoutMs);
            }
        }
    }

    /**
     * Waits until the service's update (if one is under way) has completed and the replicas asked for run the
     * service's current spec (`running` is after the health check passed, for a task with one). A rolled back or
     * paused update, or the time running out, throws with the tasks' last errors.
     */
    async waitFor(service: StackServicePlan, condition: DependencyCondition, timeoutMs: number): Promise<void> {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const inspect = (await this.#docker.getService(service.name).inspect()) as SwarmService;
            const update = inspect.UpdateStatus?.State;
            // The state of the service's last update stays after it ended: it is this plan's only while the spec is.
            const planned = inspect.Spec.Labels?.[LABEL.hash] === service.spec.Labels?.[LABEL.hash];
            if (!planned || update === 'paused') {
                const what = update?.startsWith('rollback') ? 'rolled back' : update === 'paused' ? 'paused' : 'replaced';
                const reason = inspect.UpdateStatus?.Message ?? 'no reason given';
                throw new Error(`${service.name}: Swarm ${what} the update (${reason})${await this.#taskErrors(service)}`);
            }

            const tasks = await this.tasksOf(service.name);
            const current = tasks.filter((task) => task.DesiredState === 'running' && runsSpec(task, inspect.Spec));
            const running = current.filter((task) => task.Status?.State === 'running');
            const wanted = service.replicas ?? (await this.#readyNodeCount());
            const updating = update === 'updating';
            const completed = condition === 'service_completed_successfully' && tasks.some((task) => task.Status?.State === 'complete');
            if (completed || (!updating && running.length >= wanted && current.length === running.length)) {
                return;
            }

            if (Date.now() > deadline) {
                throw new Error(
                    `${service.name}: ${running.length} of ${wanted} replica(s) running after ${timeoutMs / 1000} s${await this.#taskErrors(service)}`,
                );
            }

            await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
    }

    /** The service's tasks, newest first. */
    async tasksOf(serviceName: string): Promise<SwarmTask[]> {
        const tasks = (await this.#docker.listTasks({ filters: { service: [serviceName] } })) as SwarmTask[];
        return tasks.sort((one, other) => Date.parse(other.CreatedAt ?? '') - Date.parse(one.CreatedAt ?? ''));
    }

    async #readyNodeCount(): Promise<number> {
        const nodes = (await this.#docker.listNodes()) as Array<{ Status?: { State?: string }; Spec?: { Availability?: string } }>;
        return nodes.filter((node) => node.Status?.State === 'ready' && node.Spec?.Availability === 'active').length;
    }

    async #taskErrors(service: StackServicePlan): Promise<string> {
        const failed = (await this.tasksOf(service.name))
            .filter((task) => task.Status?.Err || task.Status?.State === 'failed' || task.Status?.State === 'rejected')
            .slice(0, 3)
            .map((task) => `${task.Status?.State ?? 'task'}: ${task.Status?.Err ?? task.Status?.Message ?? ''}`.trim());
        return failed.length > 0 ? `; its tasks: ${failed.join(' | ')}` : '';
    }

    /** Watches the services for `settleMs`: a task of the current spec that fails in that time fails the up. */
    async #settle(plan: StackPlan, settleMs: number): Promise<void> {
        if (settleMs <= 0) return;
        const since = Date.now();
        this.#log(`Watching that the services stay up for ${Math.ceil(settleMs / 1000)} s`);
        for (;;) {
            for (const service of plan.services) {
                const failed = (await this.tasksOf(service.name)).find(
                    (task) =>
                        Date.parse(task.Status?.Timestamp ?? '') >= since &&
                        (task.Status?.State === 'failed' || task.Status?.State === 'rejected'),
                );
                if (failed) {
                    throw new Error(
                        `${service.name}: a task ${failed.Status?.State} while settling (${failed.Status?.Err ?? 'no reason given'})`,
                    );
                }
            }

            const left = since + settleMs - Date.now();
            if (left <= 0) return;
            await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, left)));
        }
    }

    /** The deploy succeeded: services the plan no longer has are removed, and the older secrets and configs no service mounts. */
    async commit(outcome: UpOutcome): Promise<void> {
        for (const id of outcome.orphanServices) {
            await removeIfPresent(this.#docker.getService(id));
        }

        const mounted = await mountedObjectIds(this.#docker);
        for (const object of outcome.orphanObjects.filter((orphan) => !mounted.has(orphan.id))) {
            // Left over, it harms nothing: not worth undoing a deploy that succeeded.
            try {
                await removeObject(this.#docker, object.kind, object.id);
                this.#log(`Removed the ${object.kind} ${object.name}, which no service mounts any more`);
            } catch (error) {
                this.#log(`Kept the ${object.kind} ${object.name}: ${(error as Error).message}`, 'warning');
            }
        }
    }

    /**
     * Undoes an up: updated services back to their previous spec through Swarm's rollback (unless Swarm rolled back
     * already), new services and networks removed. Every part is tried even when one fails.
     */
    async rollback(outcome: UpOutcome): Promise<{ undone: string[]; failed: string[] }> {
        const undone: string[] = [];
        const failed: string[] = [];
        const attempt = async (done: string, work: () => Promise<unknown>) => {
            try {
                await work();
                undone.push(done);
            } catch (error) {
                failed.push(`not ${done}: ${(error as Error).message}`);
            }
        };

        for (const id of outcome.updatedServices) {
            await attempt(`rolled back service ${id.slice(0, 12)}`, () => this.rollBackService(id, id.slice(0, 12)));
        }

        for (const id of outcome.created) {
            await attempt(`removed new service ${id.slice(0, 12)}`, () => removeIfPresent(this.#docker.getService(id)));
        }

        for (const object of outcome.createdObjects) {
            await attempt(`removed ${object.kind} ${object.name}`, () => removeObject(this.#docker, object.kind, object.id));
        }

        for (const network of outcome.createdNetworks) {
            await attempt(`removed network ${network}`, () => this.#removeNetwork(network));
        }

        return { undone, failed };
    }

    /** Swarm's rollback of the service to its previous spec, unless Swarm rolled it back already; waits for its end. */
    async rollBackService(id: string, name: string): Promise<string> {
        const handle = this.#docker.getService(id);
        const inspect = (await handle.inspect()) as SwarmService;
        const state = inspect.UpdateStatus?.State;
        const already = state === 'rollback_completed' || state === 'rollback_started';
        if (!already && inspect.PreviousSpec) {
            await handle.update({ _query: { version: inspect.Version.Index, rollback: 'previous' }, _body: inspect.Spec });
        }

        const deadline = Date.now() + ROLLBACK_TIMEOUT_MS;
        for (;;) {
            const now = (await handle.inspect()) as SwarmService;
            if (now.UpdateStatus?.State !== 'rollback_started') {
                return already ? `${name} was rolled back by Swarm` : `rolled back ${name} to its previous spec`;
            }

            if (Date.now() > deadline) throw new Error(`the rollback of ${name} did not complete in ${ROLLBACK_TIMEOUT_MS / 1000} s`);
            await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
    }

    /**
     * An overlay network is removable only once the tasks on it are gone, which follows their service's removal; and
     * this node keeps its own copy until its last container on it has left. Waits until the node lists it no more.
     */
    async #removeNetwork(name: string): Promise<void> {
        const deadline = Date.now() + NETWORK_REMOVAL_TIMEOUT_MS;
        for (;;) {
            let failure: unknown;
            try {
                await removeIfPresent(this.#docker.getNetwork(name));
            } catch (error) {
                failure = error;
            }

            const listed = await this.#docker.listNetworks({ filters: { name: [name] } });
            if (!listed.some((network) => network.Name === name)) return;
            if (Date.now() > deadline) {
                throw failure instanceof Error
                    ? failure
                    : new Error(`network ${name} was still there after ${NETWORK_REMOVAL_TIMEOUT_MS / 1000} s`);
            }

            await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
    }

    /** Scales each service to no replica (its spec kept), the last first; start scales it back to the plan's. */
    async stop(project: ProjectPlan): Promise<void> {
        for (const service of [...planStack(project).services].reverse()) {
            if (service.replicas === undefined)
                throw new Error(`${service.name} runs on every node: a global service cannot be stopped, only removed`);
            await this.#scale(service, 0);
            await this.#waitUntilNoTaskRuns(service.name);
            this.#log(`Stopped ${service.name} (no replica)`);
        }
    }

    async start(project: ProjectPlan, options: UpOptions): Promise<void> {
        const plan = planStack(project);
        for (const service of plan.services) {
            await this.#waitForDependencies(plan, service, options);
            if (service.replicas !== undefined) await this.#scale(service, service.replicas);
            await this.waitFor(service, 'service_healthy', options.healthTimeoutMs);
            this.#log(`Started ${service.name}`);
        }
    }

    /** Replaces every task of each service, as `docker service update --force` does, under its update configuration. */
    async restart(project: ProjectPlan, options: UpOptions): Promise<void> {
        const plan = planStack(project);
        for (const service of plan.services) {
            await this.#waitForDependencies(plan, service, options);
            await this.#changeSpec(service.name, (spec) => {
                const template = spec.TaskTemplate as Docker.ContainerTaskSpec & { ForceUpdate?: number };
                return { ...spec, TaskTemplate: { ...template, ForceUpdate: (template.ForceUpdate ?? 0) + 1 } };
            });
            await this.waitFor(service, 'service_healthy', options.healthTimeoutMs);
            this.#log(`Restarted ${service.name}`);
        }
    }

    async #waitUntilNoTaskRuns(name: string): Promise<void> {
        const deadline = Date.now() + STOP_TIMEOUT_MS;
        for (;;) {
            const running = (await this.tasksOf(name)).filter((task) => task.Status?.State === 'running');
            if (running.length === 0) return;
            if (Date.now() > deadline)
                throw new Error(`${name}: ${running.length} task(s) still running ${STOP_TIMEOUT_MS / 1000} s after it was scaled to none`);
            await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
    }

    async #scale(service: StackServicePlan, replicas: number): Promise<void> {
        await this.#changeSpec(service.name, (spec) => ({ ...spec, Mode: { Replicated: { Replicas: replicas } } }));
    }

    async #changeSpec(name: string, change: (spec: Docker.CreateServiceOptions) => Docker.CreateServiceOptions): Promise<void> {
        const handle = this.#docker.getService(name);
        const inspect = (await handle.inspect()) as SwarmService;
        await handle.update({ _query: { version: inspect.Version.Index }, _body: change(inspect.Spec) });
    }

    /** Runs `sh -c command` in a running task of the service on this node (the manager), see execInContainer. */
    async execIn(service: ServicePlan, command: string, options: ExecOptions): Promise<ExecResult> {
        const name = stackServiceName(service.create.Labels?.[LABEL.project] ?? '', service.service);
        const { Swarm: swarm } = (await this.#docker.info()) as { Swarm?: { NodeID?: string } };
        const task = (await this.tasksOf(name)).find(
            (candidate) => candidate.Status?.State === 'running' && candidate.NodeID === swarm?.NodeID,
        );
        const container = task?.Status?.ContainerStatus?.ContainerID;
        if (!container) {
            throw new Error(`${name} has no running task on this node (the manager) to run the command in`);
        }

        return await execInContainer(this.#docker.getContainer(container), command, options);
    }

    /** Removes the stack: its services, then its secrets and configs, then its networks. */
    async down(project: string): Promise<void> {
        for (const service of await this.stackServices(project)) {
            await removeIfPresent(this.#docker.getService(service.ID));
        }

        for (const object of await stackObjects(this.#docker, project)) {
            await removeObject(this.#docker, object.kind, object.id);
            this.#log(`Removed the ${object.kind} ${object.name}`);
        }

        const networks = await this.#docker.listNetworks({ filters: { label: [`${STACK_LABEL}=${project}`] } });
        for (const network of networks) {
            await this.#removeNetwork(network.Name);
        }
    }
}

/**
 * Whether the task was made from the service's current spec: a task is a copy of the task template when it is made,
 * so an update (a new image, other variables) or a forced restart makes tasks that differ from the running ones.
 */
function runsSpec(task: SwarmTask, spec: Docker.CreateServiceOptions): boolean {
    const template = spec.TaskTemplate as (Docker.ContainerTaskSpec & { ForceUpdate?: number }) | undefined;
    return (
        isDeepStrictEqual(task.Spec?.ContainerSpec, template?.ContainerSpec) &&
        (task.Spec?.ForceUpdate ?? 0) === (template?.ForceUpdate ?? 0)
    );
}

function imageOf(service: Pick<StackServicePlan, 'spec'>): string {
    const template = service.spec.TaskTemplate as Docker.ContainerTaskSpec | undefined;
    return template?.ContainerSpec?.Image ?? '';
}
