/**
 * The swarm benchmark: wall time from POST /api/apps/{name}/deploy (DEPLOY_ENGINE=swarm) to both replicas of a
 * two-replica service running healthy on a swarm of two engines (test/support/swarm.ts: the machine's engine as
 * manager, a second dockerd in a network namespace as worker), against `docker stack deploy` of the same compose file
 * polled through dockerode until both replicas run. Both cold each round: no service, task container or network of the
 * stack on either node, and the image removed from the manager's engine (the worker keeps the copy it was given, as it
 * pulls nothing). Host-mode ports, as this kernel has no IPVS for the routing mesh.
 */
import { spawn, spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import type Docker from 'dockerode';

import { type Browser } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/server.ts';
import { type RunningBind, startBind, dnsEnvironment } from '../test/support/bind.ts';
import { buildWebImage, docker } from '../test/support/images.ts';
import { type RunningServices, startServices } from '../test/support/services.ts';
import { startSwarm, type Swarm, type SwarmTask } from '../test/support/swarm.ts';
import { followRun, signIn, startRun, type TimedEvent, wallClock } from './app-runs.ts';
import { type BenchFigure, medianOfRounds, seconds, startGatehouse } from './harness.ts';

const APP = 'benchswarm';
/** The baseline's stack: another name, so that the two never share a service, container or network. */
const BASELINE_STACK = 'benchswarmbaseline';
const SERVICE = 'web';
const REPLICAS = 2;
const BASE_DOMAIN = 'apps.test';
const ROUNDS = Number(process.env.BENCH_SWARM_ROUNDS ?? process.env.BENCH ?? 5);
/** No new round starts after this; every round has both sides. */
const BUDGET_MS = 15 * 60_000;
/** A deploy, a delete, a removal or a baseline round that takes longer than this fails the benchmark. */
const ROUND_CAP_MS = 180_000;
const BASELINE_POLL_MS = 100;
/** How long the benchmark waits for another process's swarm harness (one at a time on the machine) to end. */
const HARNESS_WAIT_MS = 10 * 60_000;
const TARGET_RATIO = 1.3;

async function withinCap<T>(work: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: over ${ROUND_CAP_MS} ms`)), ROUND_CAP_MS)),
    );
    try {
        return await Promise.race([work, cap]);
    } finally {
        clearTimeout(timer);
    }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The two-replica app: one replica per node (host-mode port, so at most one per node), a health check every 1 s. */
function composeFile(image: string, hostPort: number): string {
    return `services:
  ${SERVICE}:
    image: ${image}
    ports: [{target: 80, published: ${hostPort}, mode: host}]
    healthcheck: {test: ["CMD", "wget", "-q", "-O", "/dev/null", "http://127.0.0.1:80/"], interval: 1s, timeout: 2s, retries: 3}
    stop_grace_period: 1s
    deploy: {replicas: ${REPLICAS}, placement: {max_replicas_per_node: 1}}
`;
}

/** The service's tasks that run now (desired and observed; with a health check, only once healthy). */
async function runningTasks(manager: Docker, stack: string): Promise<SwarmTask[]> {
    const tasks = (await manager.listTasks({ filters: { service: [`${stack}_${SERVICE}`] } })) as SwarmTask[];
    return tasks.filter((task) => task.DesiredState === 'running' && task.Status.State === 'running');
}

/** Both replicas running, on two different nodes. */
async function allReplicasRun(swarm: Swarm, stack: string): Promise<boolean> {
    const running = await runningTasks(swarm.manager, stack);
    return new Set(running.map((task) => task.NodeID)).size === REPLICAS;
}

/** What is left of a stack: its services (manager), its tasks' containers and its networks (either node). */
async function leftovers(swarm: Swarm, stack: string): Promise<string[]> {
    const left: string[] = [];
    const services = await swarm.manager.listServices({ filters: { label: [`com.docker.stack.namespace=${stack}`] } });
    if (services.length > 0) left.push(`${services.length} services`);
    for (const [node, engine] of [
        ['manager', swarm.manager],
        ['worker', swarm.worker],
    ] as const) {
        const containers = await engine.listContainers({
            all: true,
            filters: { label: [`com.docker.swarm.service.name=${stack}_${SERVICE}`] },
        });
        const networks = (await engine.listNetworks()).filter((network) => network.Name.startsWith(`${stack}_`));
        if (containers.length > 0) left.push(`${containers.length} containers on the ${node}`);
        if (networks.length > 0) left.push(`${networks.length} networks on the ${node}`);
    }

    return left;
}

/** Waits until nothing of the stack is left on either node; then removes the image from the manager's engine. */
async function waitUntilGone(swarm: Swarm, stack: string, image: string): Promise<void> {
    await withinCap(
        (async () => {
            while ((await leftovers(swarm, stack)).length > 0) {
                await sleep(BASELINE_POLL_MS);
            }
        })(),
        `waiting until ${stack} is gone`,
    );
    await swarm.manager
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
}

/** Fails unless nothing of either stack exists and the manager's engine does not have the image: a cold start. */
async function assertCold(swarm: Swarm, image: string): Promise<void> {
    for (const stack of [APP, BASELINE_STACK]) {
        const left = await leftovers(swarm, stack);
        if (left.length > 0) {
            throw new Error(`not a cold start: ${stack} has ${left.join(', ')}`);
        }
    }

    const present = await swarm.manager
        .getImage(image)
        .inspect()
        .then(
            () => true,
            () => false,
        );
    if (present) {
        throw new Error(`not a cold start: the manager's engine has ${image}`);
    }
}

interface Session {
    swarm: Swarm;
    admin: Browser;
    image: string;
}

/** Milliseconds from the round's start to each milestone (NaN: not reached). */
type Milestones = Record<string, number>;

/** The app created and its draft saved (outside the timing). */
async function createApp(session: Session): Promise<void> {
    const [repository, tag = ''] = session.image.split(/:(?=[^:/]+$)/);
    const created = await session.admin.post('/api/apps', { name: APP, image: repository, tag });
    if (created.status !== 201) {
        throw new Error(`POST /api/apps: ${created.status} ${created.text}`);
    }

    const hostPort = (created.body as { app: { hostPort: number } }).app.hostPort;
    const saved = await session.admin.put(`/api/apps/${APP}/draft`, {
        compose: composeFile(session.image, hostPort),
        secrets: {},
        // No identity provider in the benchmark: the site is public, as in the swarm test.
        auth: { access: 'public' },
    });
    if (saved.status !== 200) {
        throw new Error(`PUT /api/apps/${APP}/draft: ${saved.status} ${saved.text}`);
    }
}

/** One cold deploy through Gatehouse, then the app deleted with everything it made (recreated next round). */
async function gatehouseRound(session: Session): Promise<Milestones> {
    await createApp(session);
    const startedAt = wallClock();
    // Host-mode ports are on every interface of a node: a risk the lint names, accepted as the README asks.
    const runId = await startRun(session.admin, 'post', `/api/apps/${APP}/deploy`, { acceptRisks: true });
    const acceptedAt = wallClock();
    let replicasSeen: Promise<boolean> | undefined;
    const run = await withinCap(
        followRun(session.admin, runId, (event) => {
            if (event.text.startsWith('Services ready')) {
                // A check that "ready" means both replicas run, as the baseline counts them.
                replicasSeen = allReplicasRun(session.swarm, APP);
                replicasSeen.catch(() => undefined);
            }
        }),
        'the deploy',
    );
    if (run.state !== 'succeeded') {
        throw new Error(`the deploy ${run.state}: ${run.error}; ${run.events.map((event) => event.text).join(' | ')}`);
    }

    if (!(await (replicasSeen ?? Promise.resolve(false)))) {
        throw new Error(`at "Services ready" the manager did not list ${REPLICAS} running tasks on two nodes`);
    }

    const firstAt = (test: (event: TimedEvent) => boolean) => (run.events.find(test)?.at ?? Number.NaN) - startedAt;
    const milestones: Milestones = {
        '202 answered': acceptedAt - startedAt,
        'files written': firstAt((event) => event.step === 'files'),
        pulled: firstAt((event) => event.text.startsWith('Pulled')),
        'service created': firstAt((event) => event.text.startsWith(`Created ${APP}_${SERVICE}`)),
        'Services ready': firstAt((event) => event.text.startsWith('Services ready')),
        'nginx done': firstAt((event) => event.step === 'dns' || event.step === 'certificate'),
        certificate: firstAt((event) => event.text.startsWith('Certificate for')),
        'run ended': run.endAt - startedAt,
    };
    await deleteApp(session);
    return milestones;
}

async function deleteApp(session: Session): Promise<void> {
    const everything = {
        confirm: APP,
        deleteData: true,
        removeDns: true,
        removeCert: true,
        removeVolumes: true,
        removeImages: true,
        removeArchives: true,
    };
    const runId = await startRun(session.admin, 'delete', `/api/apps/${APP}`, everything);
    const run = await withinCap(followRun(session.admin, runId), 'the delete');
    if (run.state !== 'succeeded') {
        throw new Error(`the delete ${run.state}: ${run.error}`);
    }

    await waitUntilGone(session.swarm, APP, session.image);
}

function dockerCli(args: string[], environment: Record<string, string>): Promise<void> {
    return new Promise((resolve, reject) => {
        let errors = '';
        const child = spawn('/usr/local/bin/docker', args, {
            env: { ...process.env, ...environment },
            stdio: ['ignore', 'ignore', 'pipe'],
        });
        child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4_000)));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`docker ${args.join(' ')}: ${code}\n${errors}`))));
    });
}

/** One cold `docker stack deploy` of the same file, its tasks polled until both replicas run, then `docker stack rm`. */
async function baselineRound(session: Session, workDir: string, environment: Record<string, string>): Promise<Milestones> {
    const file = Path.join(workDir, 'compose.yaml');
    Fs.writeFileSync(file, composeFile(session.image, await freePort()));
    const startedAt = wallClock();
    // --resolve-image never: the services name the tag, as Gatehouse's do (a digest pinned from the registry would not
    // match the worker's copy, which was loaded, not pulled; the worker pulls nothing).
    await withinCap(
        dockerCli(['stack', 'deploy', '--resolve-image', 'never', '-c', file, BASELINE_STACK], environment),
        'docker stack deploy',
    );
    const exitedAt = wallClock();
    await withinCap(
        (async () => {
            while (!(await allReplicasRun(session.swarm, BASELINE_STACK))) {
                await sleep(BASELINE_POLL_MS);
            }
        })(),
        'waiting for both baseline replicas to run',
    );
    const runningAt = wallClock();
    await dockerCli(['stack', 'rm', BASELINE_STACK], environment);
    await waitUntilGone(session.swarm, BASELINE_STACK, session.image);
    return { 'docker stack deploy exited': exitedAt - startedAt, 'all replicas running': runningAt - startedAt };
}

/** Median of each milestone over the rounds, in order: `name 1.23 s, ...`. */
function describeMilestones(rounds: Milestones[]): string {
    const names = Object.keys(rounds[0] ?? {});
    return names.map((name) => `${name} ${seconds(medianOfRounds(rounds.map((round) => round[name] ?? Number.NaN)))}`).join(', ');
}

const eachRound = (rounds: Milestones[], name: string) => rounds.map((round) => seconds(round[name] ?? Number.NaN)).join(', ');

interface Rounds {
    gatehouse: Milestones[];
    baseline: Milestones[];
    /** The machine's 1-minute load average before the first round and after the last. */
    load: [number, number];
}

const loadAverage = () => Os.loadavg()[0] ?? Number.NaN;

/** Alternating rounds, which side goes first alternating too, each from a cold start, within the time budget. */
async function measure(session: Session, dockerHost: string): Promise<Rounds> {
    const rounds: Rounds = { gatehouse: [], baseline: [], load: [loadAverage(), Number.NaN] };
    const workDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-stack-'));
    const environment = { DOCKER_HOST: dockerHost };
    const deadline = Date.now() + BUDGET_MS;
    try {
        for (let round = 0; round < ROUNDS && (round === 0 || Date.now() < deadline); round += 1) {
            const sides = [
                async () => rounds.gatehouse.push(await gatehouseRound(session)),
                async () => rounds.baseline.push(await baselineRound(session, workDir, environment)),
            ];
            for (const side of round % 2 === 0 ? sides : sides.reverse()) {
                await assertCold(session.swarm, session.image);
                await side();
            }

            const last = (list: Milestones[], name: string) => seconds(list.at(-1)?.[name] ?? Number.NaN);
            console.log(
                `  round ${round + 1}: Gatehouse ready ${last(rounds.gatehouse, 'Services ready')}, ended ${last(rounds.gatehouse, 'run ended')}; ` +
                    `docker stack deploy running ${last(rounds.baseline, 'all replicas running')}`,
            );
        }

        rounds.load[1] = loadAverage();
        return rounds;
    } finally {
        Fs.rmSync(workDir, { recursive: true, force: true });
    }
}

function figures(rounds: Rounds, withDns: boolean): BenchFigure[] {
    const ready = medianOfRounds(rounds.gatehouse.map((round) => round['Services ready'] ?? Number.NaN));
    const ended = medianOfRounds(rounds.gatehouse.map((round) => round['run ended'] ?? Number.NaN));
    const running = medianOfRounds(rounds.baseline.map((round) => round['all replicas running'] ?? Number.NaN));
    const count = `${rounds.gatehouse.length} rounds each`;
    const afterCreate = medianOfRounds(
        rounds.gatehouse.map((round) => (round['Services ready'] ?? Number.NaN) - (round['service created'] ?? Number.NaN)),
    );
    const baseline =
        `median ${seconds(running)} (${eachRound(rounds.baseline, 'all replicas running')}): \`docker stack deploy ` +
        '--resolve-image never -c <same file> <stack>` (docker CLI 28), then dockerode listing the tasks every 100 ms until ' +
        'two run on two nodes (a task with a health check is `running` only once healthy)';
    const setting =
        `A swarm of two engines on one 2-core VM shared with other work (test/support/swarm.ts: the machine's dockerd as ` +
        'manager, a second dockerd in a network namespace as worker). One service of 2 replicas, max_replicas_per_node 1 ' +
        '(one per node), a health check every 1 s, a port published in host mode: the kernel has no IPVS, so the routing ' +
        `mesh (ingress-mode ports) does not work here. Both cold every round (${count}, alternating, which goes first ` +
        'alternating too): no service, task container or network of the stack left on either node (waited for after each ' +
        'removal), the image (busybox httpd, ~1 MB) removed from the manager, so that it is pulled there again from the local ' +
        'registry on 127.0.0.1; the worker keeps a copy loaded once, as it pulls nothing. Gatehouse in its own process (`npm ' +
        'start`, SQLite) with DEPLOY_ENGINE=swarm and DEPLOY_SETTLE_SECONDS=0 (the baseline watches no settle time), driven ' +
        'over HTTP by a signed-in admin (deploy with acceptRisks, as host-mode ports are on every interface); its times are ' +
        'receipts on the run event stream. Gatehouse pulls the image on the manager, creates the overlay network and the ' +
        'service, and waits until every replica runs healthy; at its "Services ready" line the manager was checked to list ' +
        'both replicas running. Between rounds the app is deleted (DELETE with removeVolumes, removeImages, removeCert, ' +
        'removeDns, deleteData) and recreated; the baseline stack goes with `docker stack rm`. Unlike the baseline, whose CLI ' +
        "only sends the specs (the manager's task pulls the image), Gatehouse pulls the image on the manager before it " +
        `creates anything; from its service created to Services ready took a median ${seconds(afterCreate)}. Load average ` +
        `(1 min) ${rounds.load.map((value) => value.toFixed(1)).join(' before, ')} after the rounds.`;
    return [
        {
            name: 'POST /api/apps/{name}/deploy on a swarm of two engines to Services ready, two replicas, cold',
            measured: `median ${seconds(ready)} (${eachRound(rounds.gatehouse, 'Services ready')})`,
            baseline,
            ratio: ready / running,
            target: `<= ${TARGET_RATIO}`,
            met: ready / running <= TARGET_RATIO,
            notes: `${setting} Medians from the start, Gatehouse: ${describeMilestones(rounds.gatehouse.map(servicePart))}; docker stack deploy: ${describeMilestones(rounds.baseline)}.`,
        },
        {
            name: 'POST /api/apps/{name}/deploy on a swarm to the run end (nginx, DNS, ACME certificate, check), two replicas, cold',
            measured: `median ${seconds(ended)} (${eachRound(rounds.gatehouse, 'run ended')})`,
            baseline: `${baseline}; services only`,
            ratio: ended / running,
            target: 'recorded (no target)',
            met: true,
            notes:
                `Ratio = whole deploy / docker stack deploy to both replicas running. After Services ready: nginx site written, ` +
                `tested and reloaded, ${withDns ? 'DNS record set on a local BIND (RFC 2136), ' : 'no DNS provider (BIND missing), '}` +
                `a certificate from pebble over HTTP-01, nginx reloaded, a check through nginx. Medians from the start: ` +
                `${describeMilestones(rounds.gatehouse.map(wholePart))}.`,
        },
    ];
}

function servicePart(round: Milestones): Milestones {
    const { 'nginx done': _nginx, certificate: _certificate, 'run ended': _ended, ...part } = round;
    return part;
}

function wholePart(round: Milestones): Milestones {
    return Object.fromEntries(
        ['Services ready', 'nginx done', 'certificate', 'run ended'].map((name) => [name, round[name] ?? Number.NaN]),
    );
}

/** The swarm harness, waiting while another process runs it (one at a time on the machine). */
async function startSwarmWhenFree(): Promise<Swarm> {
    const deadline = Date.now() + HARNESS_WAIT_MS;
    for (;;) {
        try {
            return await startSwarm();
        } catch (error) {
            const busy = /another process \(pid \d+\) runs the swarm harness/.test((error as Error).message);
            if (!busy || Date.now() > deadline) throw error;
            console.log(`  ${(error as Error).message.split(';')[0]}: waiting`);
            await sleep(10_000);
        }
    }
}

/** Everything the benchmark needs: the swarm, services, BIND, the image, Gatehouse signed in; stopped in reverse. */
export async function benchSwarm(): Promise<BenchFigure[]> {
    const cleanups: Array<() => Promise<void> | void> = [];
    try {
        const swarm = await startSwarmWhenFree();
        cleanups.push(() => swarm.close());
        const services: RunningServices = await startServices();
        cleanups.push(() => services.stop());
        const bind: RunningBind | undefined = await startBind();
        if (bind) cleanups.push(() => bind.stop());
        const image = `${services.exports.REGISTRY_URL}/gatehouse-bench/${APP}:1`;
        cleanups.push(() => {
            spawnSync('docker', ['rmi', '-f', image], { stdio: 'ignore' });
        });
        buildWebImage(image, '<h1>swarm bench</h1>\n', true);
        await swarm.copyImage(image);
        docker('rmi', image);

        const environment = {
            ...services.exports,
            ...(bind ? dnsEnvironment(bind) : {}),
            BASE_DOMAIN,
            APPS_FIRST_HOST_PORT: String(await freePort()),
            DEPLOY_ENGINE: 'swarm',
            DEPLOY_SETTLE_SECONDS: '0',
        };
        const gatehouse = await startGatehouse(environment);
        cleanups.push(() => gatehouse.stop());
        const admin = await signIn(`http://127.0.0.1:${gatehouse.port}`, gatehouse.dataDir);
        return figures(await measure({ swarm, admin, image }, services.exports.DOCKER_HOST), bind !== undefined);
    } finally {
        // Each cleanup runs even when one before it failed: the swarm's close() above all.
        const failures: string[] = [];
        for (const cleanup of cleanups.reverse()) {
            try {
                await cleanup();
            } catch (error) {
                failures.push((error as Error).message);
            }
        }

        if (failures.length > 0) {
            console.error(`  cleanup failures: ${failures.join('; ')}`);
            process.exitCode = 1;
        }
    }
}
