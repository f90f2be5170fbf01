/**
 * What the apps' containers use (CPU, memory, network, block I/O), read from the engine every STATS_INTERVAL_SECONDS
 * while the server runs, the last STATS_SAMPLES of each container kept in memory for the graphs and shared by every
 * watcher; nothing of it goes to the database.
 *
 * Every running container of a managed Compose project is read, watched or not, with one short `one-shot` stats
 * call each per interval: the app page draws the last hour, which must be there when the page opens, and the
 * dashboard ranks every app by what it uses now. A stats stream per container would cost the engine a connection
 * and a cgroup read every second for each, for a resolution the kept samples drop; reading once per interval costs
 * a tenth of that, and the CPU figure is then the average over the whole interval, not over its last second.
 */
import type { Server } from '@hapi/hapi';
import type Docker from 'dockerode';

import { defineService } from '../../../../lib/services.ts';
import { LABEL } from '../host/compose-labels.ts';
import { dockerClient } from '../host/docker-client.ts';
import { readingOf, sampleBetween, type StatsReading, type StatsSample } from './container-sample.ts';

export interface ContainerHistory {
    container: string;
    service: string;
    samples: StatsSample[];
}

export interface AppHistory {
    app: string;
    intervalSeconds: number;
    /** The most samples kept per container. */
    samples: number;
    containers: ContainerHistory[];
}

/** A new sample of one of an app's containers, as watchers hear of it. */
export interface SampleEvent {
    container: string;
    service: string;
    sample: StatsSample;
}

export interface AppUsage {
    app: string;
    /** Its running containers' CPU, summed (100 is one CPU's worth). */
    cpuPercent: number;
    memoryBytes: number;
    containers: number;
}

export interface TopApps {
    /** When the figures were read; null before the first reading. */
    time: string | null;
    byCpu: AppUsage[];
    byMemory: AppUsage[];
}

interface ContainerRing {
    app: string;
    service: string;
    container: string;
    /** The container's id now: a container recreated under the same name starts its CPU count again. */
    id: string;
    last: StatsReading | undefined;
    samples: StatsSample[];
    /** The reading round that last saw it running. */
    seenInRound: number;
}

/** A container of an app that Docker's health check found unhealthy (it was not, or not seen, the round before). */
export interface UnhealthyContainer {
    app: string;
    service: string;
    container: string;
}

/** The health Docker shows in a listed container's status (`Up 2 minutes (unhealthy)`); none without a health check. */
function healthOf(summary: Docker.ContainerInfo): string | undefined {
    return /\((healthy|unhealthy|health: starting)\)/.exec(summary.Status ?? '')?.[1];
}

interface EngineError {
    statusCode?: number;
    message?: string;
}

export class ResourceStats {
    readonly #server: Server;
    /** Made when first read: dockerode is loaded by the first reading, not by a server that is only set up. */
    #engine: Docker | undefined;
    /** By container name, which Compose keeps across a redeploy, so that the graph goes on. */
    readonly #rings = new Map<string, ContainerRing>();
    readonly #watchers = new Map<string, Set<(event: SampleEvent) => void>>();
    /** Each listed container's health in the last round, by id. */
    readonly #health = new Map<string, string | undefined>();
    readonly #unhealthyListeners: Array<(container: UnhealthyContainer) => void> = [];
    #timer: NodeJS.Timeout | undefined;
    #running = false;
    #round = 0;
    /** The last round whose every container was read (a round under way has read only some). */
    #completedRound = 0;
    #lastRoundAt: number | undefined;
    #engineError: string | undefined;

    constructor(server: Server, docker?: Docker) {
        this.#server = server;
        this.#engine = docker;
    }

    get #docker(): Docker {
        this.#engine ??= dockerClient();
        return this.#engine;
    }

    get #settings() {
        return this.#server.app.config.deploy.stats;
    }

    /** Reads now, then once per interval until stop(). */
    start(): void {
        if (this.#running) return;
        this.#running = true;
        void this.#readRound();
    }

    stop(): void {
        this.#running = false;
        clearTimeout(this.#timer);
        this.#timer = undefined;
    }

    /** What is kept of the app's containers, oldest sample first. */
    history(app: string): AppHistory {
        const containers = [...this.#rings.values()]
            .filter((ring) => ring.app === app && ring.samples.length > 0)
            .sort((left, right) => left.service.localeCompare(right.service) || left.container.localeCompare(right.container))
            .map((ring) => ({ container: ring.container, service: ring.service, samples: [...ring.samples] }));
        return { app, intervalSeconds: this.#settings.intervalSeconds, samples: this.#settings.samples, containers };
    }

    /** Hears each new sample of the app's containers until the answer is called. */
    watch(app: string, listener: (event: SampleEvent) => void): () => void {
        const listeners = this.#watchers.get(app) ?? new Set();
        listeners.add(listener);
        this.#watchers.set(app, listeners);
        return () => {
            listeners.delete(listener);
            if (listeners.size === 0) this.#watchers.delete(app);
        };
    }

    /** The apps using the most CPU and the most memory in the last complete reading round, `limit` of each. */
    async top(limit: number): Promise<TopApps> {
        const usage = new Map<string, AppUsage>();
        for (const ring of this.#rings.values()) {
            const sample = ring.samples.at(-1);
            if (ring.seenInRound < this.#completedRound || !sample) continue;
            const app = usage.get(ring.app) ?? { app: ring.app, cpuPercent: 0, memoryBytes: 0, containers: 0 };
            app.cpuPercent = Math.round((app.cpuPercent + sample.cpuPercent) * 100) / 100;
            app.memoryBytes += sample.memoryBytes;
            app.containers += 1;
            usage.set(ring.app, app);
        }

        // Only this server's apps: the engine may run other Compose projects labelled as ours.
        // Imported by the first look: the sampler starts with the server, which need not load the apps and all they reach.
        const { apps } = await import('../apps/app-service.ts');
        const ours = await apps(this.#server).existing([...usage.keys()]);
        const known = [...usage.values()].filter((app) => ours.has(app.app));
        const ranked = (by: (app: AppUsage) => number) =>
            [...known].sort((left, right) => by(right) - by(left) || left.app.localeCompare(right.app)).slice(0, limit);
        return {
            time: this.#lastRoundAt === undefined ? null : new Date(this.#lastRoundAt).toISOString(),
            byCpu: ranked((app) => app.cpuPercent),
            byMemory: ranked((app) => app.memoryBytes),
        };
    }

    async #readRound(): Promise<void> {
        const startedAt = Date.now();
        try {
            await this.#readAll();
            this.#lastRoundAt = startedAt;
            if (this.#engineError !== undefined) {
                this.#server.log(['deploy', 'stats'], 'reading the containers’ resources again');
                this.#engineError = undefined;
            }
        } catch (error) {
            const message = (error as EngineError).message ?? String(error);
            if (this.#engineError === undefined) {
                this.#server.log(['warn', 'deploy', 'stats'], `cannot read the containers’ resources: ${message}`);
            }

            this.#engineError = message;
        }

        this.#forgetOld();
        if (this.#running) {
            const wait = Math.max(0, startedAt + this.#settings.intervalSeconds * 1000 - Date.now());
            this.#timer = setTimeout(() => void this.#readRound(), wait);
            this.#timer.unref();
        }
    }

    /** Hears of each container that turns unhealthy, once per turn (read every interval, as the resources are). */
    onUnhealthy(listener: (container: UnhealthyContainer) => void): void {
        this.#unhealthyListeners.push(listener);
    }

    async #readAll(): Promise<void> {
        const listed = await this.#docker.listContainers({ filters: { label: [`${LABEL.managed}=true`, LABEL.project] } });
        this.#noteHealth(listed);
        this.#round += 1;
        const round = this.#round;
        await Promise.all(listed.map((summary) => this.#readOne(summary, round)));
        this.#completedRound = round;
    }

    async #readOne(summary: Docker.ContainerInfo, round: number): Promise<void> {
        let stats: Docker.ContainerStats;
        try {
            stats = await this.#docker.getContainer(summary.Id).stats({ stream: false, 'one-shot': true });
        } catch (error) {
            // Removed or stopped since it was listed: it is simply not running any more.
            if (typeof (error as EngineError).statusCode === 'number') return;
            throw error;
        }

        const container = (summary.Names[0] ?? summary.Id).replace(/^\//, '');
        const reading = readingOf(stats);
        const known = this.#rings.get(container);
        const ring: ContainerRing =
            known && known.app === summary.Labels[LABEL.project]
                ? known
                : {
                      app: summary.Labels[LABEL.project] ?? '',
                      service: summary.Labels[LABEL.service] ?? '',
                      container,
                      id: summary.Id,
                      last: undefined,
                      samples: [],
                      seenInRound: round,
                  };
        this.#rings.set(container, ring);
        const previous = ring.id === summary.Id && ring.seenInRound >= round - 1 ? ring.last : undefined;
        ring.id = summary.Id;
        ring.service = summary.Labels[LABEL.service] ?? ring.service;
        ring.last = reading;
        ring.seenInRound = round;
        // The first reading of a container only starts its CPU count: a sample needs two.
        if (!previous || reading.at <= previous.at) return;
        const sample = sampleBetween(previous, reading);
        ring.samples.push(sample);
        if (ring.samples.length > this.#settings.samples) ring.samples.splice(0, ring.samples.length - this.#settings.samples);
        for (const listener of this.#watchers.get(ring.app) ?? []) {
            listener({ container, service: ring.service, sample });
        }
    }

    /** A container gone for longer than the kept span has nothing left to draw. */
    #noteHealth(listed: Docker.ContainerInfo[]): void {
        const seen = new Set<string>();
        for (const summary of listed) {
            seen.add(summary.Id);
            const health = healthOf(summary);
            const before = this.#health.get(summary.Id);
            this.#health.set(summary.Id, health);
            if (health === 'unhealthy' && before !== 'unhealthy') {
                const turned = {
                    app: summary.Labels[LABEL.project] ?? '',
                    service: summary.Labels[LABEL.service] ?? '',
                    container: (summary.Names[0] ?? summary.Id).replace(/^\//, ''),
                };
                for (const listener of this.#unhealthyListeners) listener(turned);
            }
        }

        for (const id of this.#health.keys()) {
            if (!seen.has(id)) this.#health.delete(id);
        }
    }

    #forgetOld(): void {
        const span = this.#settings.intervalSeconds * this.#settings.samples * 1000;
        const now = Date.now();
        for (const [name, ring] of this.#rings) {
            const newest = ring.samples.at(-1);
            if (ring.seenInRound < this.#round && (!newest || now - Date.parse(newest.time) > span)) {
                this.#rings.delete(name);
            }
        }
    }
}

export const resourceStats = defineService<ResourceStats>('resourceStats', (owner) => new ResourceStats(owner));
