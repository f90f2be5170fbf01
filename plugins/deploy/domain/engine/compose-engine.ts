/**
 * Brings a project plan up on the Docker engine through dockerode, as `docker compose up -d --wait` would:
 * network and volumes, then each service in dependency order, waiting for the conditions it depends on.
 * A service whose configuration hash is unchanged keeps its container; a replaced container is stopped and
 * set aside under another name until the deploy is committed, so that a rollback can put it back.
 */
import Fs from 'node:fs';

import type Docker from 'dockerode';

import type { HostConfig } from '../../../../lib/config.ts';
import { networkGateway } from '../host/docker-client.ts';
import { LABEL } from '../host/compose-labels.ts';
import { logLines } from '../host/docker-logs.ts';
import type { JournalEntry } from './run-journal.ts';
import { type ContainerFiles, containerFilesOf } from './compose-objects.ts';
import { configHash } from './compose-plan.ts';
import type { DependencyCondition, ProjectPlan, ServicePlan } from './plan-model.ts';
import { tarOf } from './file-archive.ts';
import { crashOf, describeCrash, hasActiveHealthcheck, lastExitCode } from './container-health.ts';
import { type PullImagesOptions, imagesAtHand, imagesOf, pullImages } from './image-pull.ts';
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

export type { Log, UpOptions, UpOutcome } from './app-engine.ts';

const POLL_MS = 50;
const SETTLE_POLL_MS = 250;
const SET_ASIDE_MARK = '-previous-';
const SET_ASIDE = /-previous-[0-9a-z]+$/;
const STOP_SECONDS = 10;

export class ComposeEngine implements AppEngine {
    readonly #docker: Docker;
    readonly #host: HostConfig;
    readonly #log: Log;
    /** Blanks the app's secrets in what its containers wrote. */
    readonly #mask: (text: string) => string;
    /** Each container's restart count when this engine started (or kept) it: more later means it crashed. */
    readonly #restartBaselines = new Map<string, number>();
    readonly #createdAt = Date.now();
    /** Told of each change before it is made (the run's journal). */
    readonly #journal: (entry: JournalEntry) => Promise<void>;
    /** The current up's beforeReplacing, until it has been called. */
    #beforeReplacing: (() => Promise<void>) | undefined;

    constructor(
        docker: Docker,
        host: HostConfig,
        log: Log,
        mask: (text: string) => string = (text) => text,
        journal: (entry: JournalEntry) => Promise<void> = () => Promise.resolve(),
    ) {
        this.#docker = docker;
        this.#host = host;
        this.#log = log;
        this.#mask = mask;
        this.#journal = journal;
    }

    async projectContainers(project: string): Promise<Docker.ContainerInfo[]> {
        return await this.#docker.listContainers({
            all: true,
            filters: { label: [`${LABEL.project}=${project}`, `${LABEL.oneoff}=False`] },
        });
    }

    /** Pulls each image (from its registry, with the configured credentials); an image only the engine has is used as it is. */
    async pullImages(plan: ProjectPlan, options: PullImagesOptions): Promise<{ imageIds: Map<string, string>; pulled: string[] }> {
        return await pullImages(this.#docker, this.#host, this.#log, imagesOf(plan), options);
    }

    /** The plan's images as the engine has them, pulling only those it lacks: a restore puts back what ran, not a newer tag. */
    async imagesAtHand(plan: ProjectPlan, options: PullImagesOptions): Promise<Map<string, string>> {
        return await imagesAtHand(this.#docker, this.#host, this.#log, imagesOf(plan), options);
    }

    /** Runs `sh -c command` in the service's container, see execInContainer. */
    async execIn(service: ServicePlan, command: string, options: ExecOptions): Promise<ExecResult> {
        return await execInContainer(this.#docker.getContainer(service.containerName), command, options);
    }

    /**
     * Makes the project's missing networks (recorded in `outcome`) and answers the gateway of the network nginx's
     * requests reach the app through: the first network of the first service that publishes a port.
     */
    async appNetworkGateway(plan: ProjectPlan, outcome: UpOutcome): Promise<string | undefined> {
        await this.#ensureNetworks(plan, outcome);
        const published = plan.services.find((service) => Object.keys(service.create.HostConfig?.PortBindings ?? {}).length > 0);
        const network = (published ?? plan.services[0])?.create.HostConfig?.NetworkMode;
        if (!network) {
            return undefined;
        }

        return await networkGateway(this.#docker, network);
    }

    /** `outcome`: what an earlier step of the same run changed (appNetworkGateway's networks). */
    async up(plan: ProjectPlan, imageIds: Map<string, string>, options: UpOptions, outcome = freshOutcome()): Promise<UpOutcome> {
        this.#beforeReplacing = options.beforeReplacing;
        try {
            const files = containerFilesOf(plan);
            await this.#ensureNetworks(plan, outcome);
            await this.#ensureVolumes(plan, outcome);
            const existing = await this.#recoverSetAside(await this.projectContainers(plan.project));
            for (const service of plan.services) {
                await this.#waitForDependencies(plan, service, options);
                const imageId = imageIds.get(service.image) ?? '';
                await this.#upService(service, imageId, files.get(service.service) ?? { files: [], fingerprints: [] }, existing, outcome);
            }

            await this.#setAsideOrphans(plan, existing, outcome);
            await this.#waitForAll(plan, options);
            return outcome;
        } catch (error) {
            (error as Error & { outcome?: UpOutcome }).outcome = outcome;
            throw error;
        }
    }

    async #ensureNetworks(plan: ProjectPlan, outcome: UpOutcome): Promise<void> {
        await ensureNetworks(this.#docker, plan, outcome, {
            journal: this.#journal,
            log: this.#log,
            create: (name) => ({
                Name: name,
                Driver: 'bridge',
                Labels: { [LABEL.project]: plan.project, [LABEL.network]: name.replace(`${plan.project}_`, ''), [LABEL.managed]: 'true' },
            }),
        });
    }

    async #ensureVolumes(plan: ProjectPlan, outcome: UpOutcome): Promise<void> {
        for (const volume of plan.volumes) {
            try {
                await this.#docker.getVolume(volume.name).inspect();
                continue;
            } catch {
                if (volume.external) {
                    throw new Error(`volume ${volume.name} is external and does not exist`);
                }
            }

            await this.#journal({ type: 'volume', name: volume.name });
            await this.#docker.createVolume({
                Name: volume.name,
                Labels: {
                    [LABEL.project]: plan.project,
                    [LABEL.volume]: volume.name.replace(`${plan.project}_`, ''),
                    [LABEL.managed]: 'true',
                },
            });
            outcome.createdVolumes.push(volume.name);
            this.#log(`Created volume ${volume.name}`);
        }
    }

    async #upService(
        service: ServicePlan,
        imageId: string,
        files: ContainerFiles,
        existing: Docker.ContainerInfo[],
        outcome: UpOutcome,
    ): Promise<void> {
        const hash = configHash(service, imageId, files.fingerprints);
        const current = existing.find((container) => container.Labels[LABEL.service] === service.service);
        if (current && current.Labels[LABEL.hash] === hash) {
            const handle = this.#docker.getContainer(current.Id);
            if (current.State !== 'running') {
                await handle.start();
                this.#restartBaselines.set(service.containerName, 0);
                this.#log(`Started ${service.containerName} (configuration unchanged)`);
            } else {
                this.#restartBaselines.set(service.containerName, (await handle.inspect()).RestartCount);
                this.#log(`Kept ${service.containerName}: its configuration has not changed`);
            }

            outcome.kept.push(service.service);
            return;
        }

        if (current) {
            await this.#setAside(current, outcome);
        }

        // A missing bind source would be made by the engine, as root; made here it belongs to the app's folder.
        for (const mount of service.create.HostConfig?.Mounts ?? []) {
            if (mount.Type === 'bind' && !Fs.existsSync(mount.Source)) Fs.mkdirSync(mount.Source, { recursive: true });
        }

        const create = { ...service.create, Labels: { ...service.create.Labels, [LABEL.hash]: hash } };
        await this.#journal({ type: 'container', name: service.containerName });
        const container = await this.#docker.createContainer(create);
        outcome.created.push(container.id);
        for (const network of service.extraNetworks) {
            await this.#docker.getNetwork(network.name).connect({ Container: container.id, EndpointConfig: { Aliases: network.aliases } });
        }

        if (files.files.length > 0) {
            // As `docker compose` does for secrets it cannot bind: copied in before the first start, with owner and mode.
            await container.putArchive(tarOf(files.files), { path: '/' });
        }

        await container.start();
        this.#restartBaselines.set(service.containerName, 0);
        this.#log(`${current ? 'Recreated' : 'Created'} and started ${service.containerName} (${service.image})`);
    }

    async #setAside(container: Docker.ContainerInfo, outcome: UpOutcome): Promise<void> {
        const name = (container.Names[0] ?? container.Id).replace(/^\//, '');
        const handle = this.#docker.getContainer(container.Id);
        const wasRunning = container.State === 'running';
        const beforeReplacing = this.#beforeReplacing;
        if (wasRunning && beforeReplacing) {
            this.#beforeReplacing = undefined;
            await beforeReplacing();
        }

        await this.#journal({ type: 'set-aside', id: container.Id, name, wasRunning });
        if (wasRunning) {
            await handle.stop({ t: STOP_SECONDS });
        }

        await handle.rename({ name: `${name}${SET_ASIDE_MARK}${Date.now().toString(36)}` });
        outcome.setAside.push({ id: container.Id, name, wasRunning });
        this.#log(`Stopped the previous ${name}; it is kept until the deploy succeeds`);
    }

    /**
     * Containers a run set aside and never committed nor restored (the server stopped in between): put back
     * under their name when nothing replaced them, removed otherwise. Answers the containers that remain.
     */
    async #recoverSetAside(containers: Docker.ContainerInfo[]): Promise<Docker.ContainerInfo[]> {
        const nameOf = (container: Docker.ContainerInfo) => (container.Names[0] ?? container.Id).replace(/^\//, '');
        const leftovers = containers.filter((container) => SET_ASIDE.test(nameOf(container)));
        const current = containers.filter((container) => !leftovers.includes(container));
        for (const leftover of leftovers) {
            const original = nameOf(leftover).replace(SET_ASIDE, '');
            const handle = this.#docker.getContainer(leftover.Id);
            if (current.some((container) => nameOf(container) === original)) {
                await handle.remove({ force: true });
                this.#log(`Removed ${nameOf(leftover)}, left set aside by an interrupted run`);
            } else {
                await handle.rename({ name: original });
                current.push({ ...leftover, Names: [`/${original}`] });
                this.#log(`Put back ${original}, left set aside by an interrupted run`);
            }
        }

        return current;
    }

    async #setAsideOrphans(plan: ProjectPlan, existing: Docker.ContainerInfo[], outcome: UpOutcome): Promise<void> {
        const services = new Set(plan.services.map((service) => service.service));
        for (const container of existing) {
            const service = container.Labels[LABEL.service] ?? '';
            if (!services.has(service)) {
                await this.#setAside(container, outcome);
            }
        }
    }

    async #waitForDependencies(plan: ProjectPlan, service: ServicePlan, options: UpOptions): Promise<void> {
        for (const [name, condition] of Object.entries(service.dependsOn)) {
            const dependency = plan.services.find((candidate) => candidate.service === name);
            if (dependency) {
                if (condition !== 'service_started') {
                    this.#log(`${service.service} waits for ${name}: ${condition.replace('service_', '').replace(/_/g, ' ')}`);
                }

                await this.waitFor(dependency, condition, options.healthTimeoutMs);
            }
        }
    }

    /**
     * Waits until the service's container meets the condition; throws with the container's last log lines when it
     * cannot, or when it exits or restarts on the way.
     */
    async waitFor(service: ServicePlan, condition: DependencyCondition, timeoutMs: number): Promise<void> {
        const container = this.#docker.getContainer(service.containerName);
        const deadline = Date.now() + timeoutMs;
        for (;;) {
            const inspect = await container.inspect();
            const { State: state } = inspect;
            const health = state.Health?.Status;
            if (condition === 'service_completed_successfully' && state.Status === 'exited') {
                if (state.ExitCode === 0) {
                    return;
                }

                throw await this.#failure(service, `exited with code ${state.ExitCode}`);
            }

            if (condition !== 'service_completed_successfully') {
                await this.#throwIfCrashed(service, inspect);
            }

            if (condition === 'service_healthy' && health === 'healthy') {
                this.#log(`${service.containerName} is healthy`);
                return;
            }

            if (condition === 'service_started' && state.Running && !state.Restarting) {
                return;
            }

            if (health === 'unhealthy') {
                throw await this.#failure(service, 'is unhealthy');
            }

            if (Date.now() > deadline) {
                throw await this.#failure(
                    service,
                    `did not become ${condition === 'service_healthy' ? 'healthy' : 'ready'} in ${timeoutMs / 1000} s`,
                );
            }

            await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
    }

    async #throwIfCrashed(service: ServicePlan, inspect: Docker.ContainerInspectInfo): Promise<void> {
        const crash = crashOf(inspect, this.#restartBaselines.get(service.containerName) ?? 0);
        if (crash) {
            const exitCode = crash.exitCode ?? (await lastExitCode(this.#docker, inspect.Id, this.#createdAt));
            throw await this.#failure(service, describeCrash(crash, exitCode));
        }
    }

    async #failure(service: ServicePlan, what: string): Promise<Error> {
        const lines = (await this.lastLogLines(service.containerName, 5)).map(this.#mask);
        const name = service.containerName.includes(service.service)
            ? service.containerName
            : `${service.containerName} (service ${service.service})`;
        return new Error(`${name} ${what}${lines.length > 0 ? `; its last log lines: ${lines.join(' | ')}` : ''}`);
    }

    async lastLogLines(containerName: string, count: number): Promise<string[]> {
        try {
            const buffer = await this.#docker.getContainer(containerName).logs({ stdout: true, stderr: true, tail: count, follow: false });
            // The plan never asks for a TTY, so the engine multiplexes the two streams.
            return logLines(buffer, false)
                .map((line) => line.text.trim())
                .filter((line) => line !== '');
        } catch {
            return [];
        }
    }

    /** The deploy succeeded: containers set aside are removed. */
    async commit(outcome: UpOutcome): Promise<void> {
        for (const previous of outcome.setAside) {
            await this.#docker.getContainer(previous.id).remove({ force: true, v: false });
        }
    }

    /**
     * Undoes an up: new containers removed, set-aside ones back under their names and started, new networks and
     * volumes removed. Every part is tried even when one fails; `failed` says which did, in words.
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

        for (const id of outcome.created) {
            await attempt(`removed new container ${id.slice(0, 12)}`, () => this.#removeIfPresent(this.#docker.getContainer(id)));
        }

        for (const previous of outcome.setAside) {
            await attempt(`put back ${previous.name}`, async () => {
                const handle = this.#docker.getContainer(previous.id);
                await handle.rename({ name: previous.name });
                // 304: it runs already (an interrupted run's leftover, put back and started by this run's up).
                if (previous.wasRunning)
                    await handle.start().catch((error: { statusCode?: number }) => {
                        if (error.statusCode !== 304) throw error;
                    });
            });
        }

        for (const volume of outcome.createdVolumes) {
            await attempt(`removed volume ${volume}`, () => this.#removeIfPresent(this.#docker.getVolume(volume)));
        }

        // Made by this run, so no container put back was attached to it.
        for (const network of outcome.createdNetworks) {
            await attempt(`removed network ${network}`, () => this.#removeIfPresent(this.#docker.getNetwork(network)));
        }

        return { undone, failed };
    }

    /** Removes a container (forced), volume or network; one already gone is not an error. */
    async #removeIfPresent(handle: { remove: (options?: object) => Promise<unknown> }): Promise<void> {
        try {
            await handle.remove({ force: true });
        } catch (error) {
            if ((error as { statusCode?: number }).statusCode !== 404) throw error;
        }
    }

    async stop(plan: ProjectPlan): Promise<void> {
        for (const service of [...plan.services].reverse()) {
            const container = this.#docker.getContainer(service.containerName);
            const { State: state } = await container.inspect();
            if (state.Running) {
                await container.stop({ t: STOP_SECONDS });
                this.#log(`Stopped ${service.containerName}`);
            }
        }
    }

    async start(plan: ProjectPlan, options: UpOptions): Promise<void> {
        for (const service of plan.services) {
            await this.#waitForDependencies(plan, service, options);
            const container = this.#docker.getContainer(service.containerName);
            const inspect = await container.inspect();
            if (!inspect.State.Running) {
                await container.start();
                this.#restartBaselines.set(service.containerName, 0);
                this.#log(`Started ${service.containerName}`);
            } else {
                this.#restartBaselines.set(service.containerName, inspect.RestartCount);
            }
        }

        await this.#waitForAll(plan, options);
    }

    async restart(plan: ProjectPlan, options: UpOptions): Promise<void> {
        for (const service of plan.services) {
            await this.#waitForDependencies(plan, service, options);
            await this.#docker.getContainer(service.containerName).restart({ t: STOP_SECONDS });
            this.#restartBaselines.set(service.containerName, 0);
            this.#log(`Restarted ${service.containerName}`);
        }

        await this.#waitForAll(plan, options);
    }

    /** Every service ready (healthy when it has a health check, its image's own included), then settled. */
    async #waitForAll(plan: ProjectPlan, options: UpOptions): Promise<void> {
        for (const service of plan.services) {
            const inspect = await this.#docker.getContainer(service.containerName).inspect();
            await this.waitFor(service, hasActiveHealthcheck(inspect) ? 'service_healthy' : 'service_started', options.healthTimeoutMs);
        }

        await this.#settle(plan, options.settleMs);
    }

    /** Watches the containers until each has been up for `settleMs` since it started: one that exits or restarts fails. */
    async #settle(plan: ProjectPlan, settleMs: number): Promise<void> {
        let announced = false;
        for (;;) {
            let until = 0;
            for (const service of plan.services) {
                const inspect = await this.#docker.getContainer(service.containerName).inspect();
                await this.#throwIfCrashed(service, inspect);
                until = Math.max(until, Date.parse(inspect.State.StartedAt) + settleMs);
            }

            const left = until - Date.now();
            if (!(left > 0)) {
                return;
            }

            if (!announced) {
                announced = true;
                this.#log(`Watching that the services stay up for ${Math.ceil(left / 1000)} s more`);
            }

            await new Promise((resolve) => setTimeout(resolve, Math.min(SETTLE_POLL_MS, left)));
        }
    }
}
