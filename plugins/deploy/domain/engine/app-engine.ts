/**
 * What a run asks of the engine an app's services run on: the Docker engine itself, one container per service
 * (compose-engine.ts, DEPLOY_ENGINE=compose), or a Docker Swarm, one service of replicas per compose service
 * (swarm-engine.ts, DEPLOY_ENGINE=swarm). Both take the same project plan (compose-plan.ts) and answer the same
 * outcome, so that a run deploys, checks and rolls back alike on either.
 */
import type Docker from 'dockerode';

import type { ObjectKind, ProjectPlan, ServicePlan } from './plan-model.ts';
import type { PullImagesOptions } from './image-pull.ts';
import type { JournalEntry } from './run-journal.ts';

export type Log = (text: string, level?: 'info' | 'warning' | 'error') => void;

export interface UpOutcome {
    /** Containers (a swarm: services) the up created: removed by a rollback. */
    created: string[];
    kept: string[];
    /** Containers set aside (stopped, renamed): removed by commit, restored by rollback. */
    setAside: Array<{ id: string; name: string; wasRunning: boolean }>;
    /** Swarm services the up updated in place: rolled back to their previous spec by a rollback. */
    updatedServices: string[];
    /** Swarm services of the app that the plan no longer has: removed by commit. */
    orphanServices: string[];
    /** Swarm secrets and configs the up made: removed by a rollback. */
    createdObjects: SwarmObject[];
    /** The app's Swarm secrets and configs that the plan no longer has: removed by commit, once no service mounts them. */
    orphanObjects: SwarmObject[];
    createdNetworks: string[];
    createdVolumes: string[];
    pulledImages: string[];
}

/** A Swarm secret or config. */
export interface SwarmObject {
    kind: ObjectKind;
    id: string;
    name: string;
}

export interface UpOptions {
    /** How long a service may take to become healthy (or running, without a healthcheck). */
    healthTimeoutMs: number;
    /** How long each container must stay up, from its start, without exiting or restarting. */
    settleMs: number;
    /** Called once, before the first running container is stopped to be replaced (to keep visitors off the app). */
    beforeReplacing?: () => Promise<void>;
}

export interface ExecOptions {
    timeoutMs: number;
    user?: string;
    environment?: Record<string, string>;
}

export interface ExecResult {
    exitCode: number | null;
    output: string;
}

export interface AppEngine {
    /** Pulls each image (from its registry, with the configured credentials); an image only the engine has is used as it is. */
    pullImages(plan: ProjectPlan, options: PullImagesOptions): Promise<{ imageIds: Map<string, string>; pulled: string[] }>;
    /** The plan's images as the engine has them, pulling only those it lacks. */
    imagesAtHand(plan: ProjectPlan, options: PullImagesOptions): Promise<Map<string, string>>;
    /** The address nginx's requests reach the app from, making the app's networks first (recorded in `outcome`). */
    appNetworkGateway(plan: ProjectPlan, outcome: UpOutcome): Promise<string | undefined>;
    /** Brings the plan up and waits until every service is ready and has stayed up; throws with `outcome` on the error. */
    up(plan: ProjectPlan, imageIds: Map<string, string>, options: UpOptions, outcome?: UpOutcome): Promise<UpOutcome>;
    /** The run succeeded: what the up kept for a rollback goes. */
    commit(outcome: UpOutcome): Promise<void>;
    /** Undoes an up; every part is tried even when one fails. */
    rollback(outcome: UpOutcome): Promise<{ undone: string[]; failed: string[] }>;
    stop(plan: ProjectPlan): Promise<void>;
    start(plan: ProjectPlan, options: UpOptions): Promise<void>;
    restart(plan: ProjectPlan, options: UpOptions): Promise<void>;
    /** Runs `sh -c command` in a container of the service. */
    execIn(service: ServicePlan, command: string, options: ExecOptions): Promise<ExecResult>;
}

/** What `up` has changed so far: nothing yet. */
export function freshOutcome(): UpOutcome {
    return {
        created: [],
        kept: [],
        setAside: [],
        updatedServices: [],
        orphanServices: [],
        createdObjects: [],
        orphanObjects: [],
        createdNetworks: [],
        createdVolumes: [],
        pulledImages: [],
    };
}

/**
 * Runs `sh -c command` in the container, with the variables of `environment` set (the values the command reads:
 * never spliced into its text); answers its exit code and the end of its output.
 */
export async function execInContainer(container: Docker.Container, command: string, options: ExecOptions): Promise<ExecResult> {
    const exec = await container.exec({
        Cmd: ['sh', '-c', command],
        Env: Object.entries(options.environment ?? {}).map(([name, value]) => `${name}=${value}`),
        AttachStdout: true,
        AttachStderr: true,
        Tty: true,
        ...(options.user ? { User: options.user } : {}),
    });
    const stream = await exec.start({ hijack: true, stdin: false, Tty: true });
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
            stream.destroy();
            reject(new Error(`the command did not end within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
            clearTimeout(timer);
            resolve();
        });
        stream.on('error', (error: Error) => {
            clearTimeout(timer);
            reject(error);
        });
    });
    const { ExitCode } = await exec.inspect();
    const output = Buffer.concat(chunks).toString('utf8').trim().split('\n').slice(-10).join('\n');
    return { exitCode: ExitCode ?? null, output };
}

/** Makes the plan's missing networks (an external one that is missing is an error), journalled and recorded in `outcome`. */
export async function ensureNetworks(
    docker: Docker,
    plan: { project: string; networks: ProjectPlan['networks'] },
    outcome: UpOutcome,
    how: { journal: (entry: JournalEntry) => Promise<void>; log: Log; create: (name: string) => Docker.NetworkCreateOptions },
): Promise<void> {
    for (const network of plan.networks) {
        const found = await docker.listNetworks({ filters: { name: [network.name] } });
        if (found.some((candidate) => candidate.Name === network.name)) {
            continue;
        }

        if (network.external) {
            throw new Error(`network ${network.name} is external and does not exist`);
        }

        await how.journal({ type: 'network', name: network.name });
        const created = how.create(network.name);
        await docker.createNetwork(created);
        outcome.createdNetworks.push(network.name);
        how.log(`Created ${created.Driver === 'overlay' ? 'overlay ' : ''}network ${network.name}`);
    }
}
