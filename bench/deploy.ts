/**
 * The deploy benchmark: wall time from POST /api/apps/{name}/deploy to a healthy two-service app (web depending
 * on a healthy db, both with healthchecks, a named volume), against Debian's docker-compose on the same compose
 * file, both from a cold start each round: no container, network or volume of the project, and the image only
 * in the local registry, so that both pull it.
 */
import { spawn } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import Docker from 'dockerode';

import { type Browser } from '../test/helpers/browser.ts';
import { freePort } from '../test/helpers/server.ts';
import { type RunningBind, startBind, dnsEnvironment } from '../test/support/bind.ts';
import { buildWebImage, docker } from '../test/support/images.ts';
import { type RunningServices, startServices } from '../test/support/services.ts';
import { followRun, signIn, startRun, type TimedEvent, wallClock } from './app-runs.ts';
import { type BenchFigure, medianOfRounds, type Process, seconds, startGatehouse } from './harness.ts';

const APP = 'benchdeploy';
/** The baseline's project: another name, so that the two never share a container, network or volume. */
const BASELINE_PROJECT = 'benchdeploybaseline';
const BASE_DOMAIN = 'apps.test';
const ROUNDS = Number(process.env.BENCH_DEPLOY_ROUNDS ?? 5);
/** No new round starts after this; every round has both sides. */
const BUDGET_MS = 15 * 60_000;
/** A deploy, a delete or a baseline round that takes longer than this fails the benchmark. */
const ROUND_CAP_MS = 180_000;
/** How often the baseline asks the engine whether every container is healthy (Gatehouse's engine polls every 200 ms). */
const BASELINE_POLL_MS = 100;
const TARGET_RATIO = 1.2;

const engine = new Docker();

/** The two-service app of test/plugins/deploy/routes/lifecycle/lifecycle.test.ts, with the same healthchecks. */
function composeFile(image: string, hostPort: number): string {
    return `services:
  web:
    image: ${image}
    restart: unless-stopped
    ports:
      - "127.0.0.1:${hostPort}:80"
    healthcheck:
      test: ["CMD-SHELL", "wget -q -O- http://127.0.0.1/"]
      interval: 1s
      timeout: 2s
      retries: 3
    depends_on:
      db:
        condition: service_healthy
  db:
    image: ${image}
    command: ["httpd", "-f", "-p", "8080", "-h", "/www"]
    volumes:
      - data:/data
    healthcheck:
      test: ["CMD", "wget", "-q", "-O-", "http://127.0.0.1:8080/"]
      interval: 1s
      timeout: 2s
      retries: 5
volumes:
  data: {}
`;
}

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

/** Docker's RFC 3339 time (nanoseconds) as epoch milliseconds. */
function dockerTime(text: string): number {
    return Date.parse(text.replace(/(\.\d{3})\d*/, '$1'));
}

/** Per service, as the engine saw it: when its container started, and when its first passing healthcheck ended. */
type ContainerTimes = Record<string, { started: number; healthy: number }>;

async function containerTimes(project: string): Promise<ContainerTimes> {
    const containers = await engine.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${project}`] } });
    const entries = await Promise.all(
        containers.map(async (container) => {
            const { State: state } = await engine.getContainer(container.Id).inspect();
            const passed = state.Health?.Log.find((check) => check.ExitCode === 0);
            const times = { started: dockerTime(state.StartedAt), healthy: passed ? dockerTime(passed.End) : Number.NaN };
            return [container.Labels['com.docker.compose.service'] ?? container.Id, times] as const;
        }),
    );
    return Object.fromEntries(entries);
}

/** Removes whatever of the project is left (containers, networks, volume) and the image from the engine. */
async function removeProject(project: string, image: string): Promise<void> {
    const label = { label: [`com.docker.compose.project=${project}`] };
    for (const container of await engine.listContainers({ all: true, filters: label })) {
        await engine.getContainer(container.Id).remove({ force: true, v: true });
    }

    for (const network of await engine.listNetworks({ filters: label })) {
        await engine.getNetwork(network.Id).remove();
    }

    await engine
        .getVolume(`${project}_data`)
        .remove()
        .catch(() => undefined);
    await engine
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
}

/** Fails unless nothing of either project exists and the engine does not have the image: a cold start. */
async function assertCold(image: string): Promise<void> {
    for (const project of [APP, BASELINE_PROJECT]) {
        const label = { label: [`com.docker.compose.project=${project}`] };
        const containers = await engine.listContainers({ all: true, filters: label });
        const networks = (await engine.listNetworks()).filter((network) => network.Name.startsWith(`${project}_`));
        const volumes = (await engine.listVolumes()).Volumes.filter((volume) => volume.Name.startsWith(`${project}_`));
        if (containers.length + networks.length + volumes.length > 0) {
            throw new Error(
                `not a cold start: ${project} has ${containers.length} containers, ${networks.length} networks, ${volumes.length} volumes`,
            );
        }
    }

    if (
        await engine
            .getImage(image)
            .inspect()
            .then(
                () => true,
                () => false,
            )
    ) {
        throw new Error(`not a cold start: the engine has ${image}`);
    }
}

interface Session {
    gatehouse: Process;
    admin: Browser;
    image: string;
}

/** The app created and its draft saved (outside the timing); answers the host port the app was given. */
async function createApp(session: Session): Promise<number> {
    const [repository, tag = ''] = session.image.split(/:(?=[^:/]+$)/);
    const created = await session.admin.post('/api/apps', { name: APP, image: repository, tag });
    if (created.status !== 201) {
        throw new Error(`POST /api/apps: ${created.status} ${created.text}`);
    }

    const hostPort = (created.body as { app: { hostPort: number } }).app.hostPort;
    const saved = await session.admin.put(`/api/apps/${APP}/draft`, { compose: composeFile(session.image, hostPort) });
    if (saved.status !== 200) {
        throw new Error(`PUT /api/apps/${APP}/draft: ${saved.status} ${saved.text}`);
    }

    return hostPort;
}

/** Milliseconds from the round's start to each milestone (NaN: not reached). */
type Milestones = Record<string, number>;

function engineMilestones(times: ContainerTimes, startedAt: number): Milestones {
    return {
        'db started': (times.db?.started ?? Number.NaN) - startedAt,
        'db healthy': (times.db?.healthy ?? Number.NaN) - startedAt,
        'web started': (times.web?.started ?? Number.NaN) - startedAt,
        'web healthy': (times.web?.healthy ?? Number.NaN) - startedAt,
    };
}

/** One cold deploy through Gatehouse, then the app deleted with everything it made, and recreated for the next round. */
async function gatehouseRound(session: Session): Promise<Milestones> {
    await createApp(session);
    const startedAt = wallClock();
    const runId = await startRun(session.admin, 'post', `/api/apps/${APP}/deploy`, {});
    const acceptedAt = wallClock();
    let times: Promise<ContainerTimes> | undefined;
    const run = await withinCap(
        followRun(session.admin, runId, (event) => {
            if (event.text.startsWith('Services ready')) {
                times = containerTimes(APP);
                // Awaited below; until then a failure must not count as unhandled.
                times.catch(() => undefined);
            }
        }),
        'the deploy',
    );
    if (run.state !== 'succeeded') {
        throw new Error(`the deploy ${run.state}: ${run.error}; ${run.events.map((event) => event.text).join(' | ')}`);
    }

    const firstAt = (test: (event: TimedEvent) => boolean) => (run.events.find(test)?.at ?? Number.NaN) - startedAt;
    const milestones: Milestones = {
        '202 answered': acceptedAt - startedAt,
        'files written': firstAt((event) => event.step === 'files'),
        pulled: firstAt((event) => event.text.startsWith('Pulled')),
        'volume created': firstAt((event) => event.text.startsWith('Created volume')),
        ...engineMilestones(await (times ?? Promise.resolve({})), startedAt),
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

    await removeProject(APP, session.image);
}

function dockerCompose(args: string[], environment: Record<string, string>): Promise<void> {
    return new Promise((resolve, reject) => {
        let errors = '';
        const child = spawn('docker-compose', args, { env: { ...process.env, ...environment }, stdio: ['ignore', 'ignore', 'pipe'] });
        child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4_000)));
        child.once('error', reject);
        child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`docker-compose ${args.join(' ')}: ${code}\n${errors}`))));
    });
}

async function everyContainerHealthy(project: string, count: number): Promise<boolean> {
    const containers = await engine.listContainers({ all: true, filters: { label: [`com.docker.compose.project=${project}`] } });
    const states = await Promise.all(containers.map(async (container) => (await engine.getContainer(container.Id).inspect()).State));
    if (states.some((state) => state.Health?.Status === 'unhealthy' || state.Status === 'exited')) {
        throw new Error(`${project}: a container is unhealthy or exited`);
    }

    return states.length === count && states.every((state) => state.Health?.Status === 'healthy');
}

/** One cold `docker-compose up -d` of the same file, polled until every container is healthy, then `down -v`. */
async function baselineRound(image: string, workDir: string, environment: Record<string, string>): Promise<Milestones> {
    const file = Path.join(workDir, 'compose.yaml');
    Fs.writeFileSync(file, composeFile(image, await freePort()));
    const project = ['-p', BASELINE_PROJECT, '-f', file];
    const startedAt = wallClock();
    await withinCap(dockerCompose([...project, 'up', '-d'], environment), 'docker-compose up -d');
    const exitedAt = wallClock();
    const healthy = async () => {
        while (!(await everyContainerHealthy(BASELINE_PROJECT, 2))) {
            await new Promise((resolve) => setTimeout(resolve, BASELINE_POLL_MS));
        }
    };
    await withinCap(healthy(), 'waiting for the baseline to be healthy');
    const healthyAt = wallClock();
    const milestones = {
        ...engineMilestones(await containerTimes(BASELINE_PROJECT), startedAt),
        'docker-compose exited': exitedAt - startedAt,
        'all healthy seen': healthyAt - startedAt,
    };
    await dockerCompose([...project, 'down', '-v'], environment);
    await removeProject(BASELINE_PROJECT, image);
    return milestones;
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
}

/** Alternating rounds, which side goes first alternating too, each from a cold start, within the time budget. */
async function measure(session: Session, dockerHost: string): Promise<Rounds> {
    const rounds: Rounds = { gatehouse: [], baseline: [] };
    const workDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'gatehouse-bench-compose-'));
    const environment = { DOCKER_HOST: dockerHost };
    const deadline = Date.now() + BUDGET_MS;
    try {
        for (let round = 0; round < ROUNDS && (round === 0 || Date.now() < deadline); round += 1) {
            const sides = [
                async () => rounds.gatehouse.push(await gatehouseRound(session)),
                async () => rounds.baseline.push(await baselineRound(session.image, workDir, environment)),
            ];
            for (const side of round % 2 === 0 ? sides : sides.reverse()) {
                await assertCold(session.image);
                await side();
            }

            const last = (list: Milestones[], name: string) => seconds(list.at(-1)?.[name] ?? Number.NaN);
            console.log(
                `  round ${round + 1}: Gatehouse ready ${last(rounds.gatehouse, 'Services ready')}, ended ${last(rounds.gatehouse, 'run ended')}; ` +
                    `docker-compose healthy ${last(rounds.baseline, 'all healthy seen')}`,
            );
        }

        return rounds;
    } finally {
        Fs.rmSync(workDir, { recursive: true, force: true });
    }
}

function dnsSettings(bind: RunningBind | undefined): Record<string, string> {
    if (!bind) {
        return {};
    }

    return dnsEnvironment(bind);
}

function figures(rounds: Rounds, withDns: boolean): BenchFigure[] {
    const ready = medianOfRounds(rounds.gatehouse.map((round) => round['Services ready'] ?? Number.NaN));
    const ended = medianOfRounds(rounds.gatehouse.map((round) => round['run ended'] ?? Number.NaN));
    const healthy = medianOfRounds(rounds.baseline.map((round) => round['all healthy seen'] ?? Number.NaN));
    const count = `${rounds.gatehouse.length} rounds each`;
    const baseline =
        `median ${seconds(healthy)} (${eachRound(rounds.baseline, 'all healthy seen')}): Debian's docker-compose 1.29 ` +
        '`up -d`, then dockerode polling every container every 100 ms until all are healthy (1.29 has no `--wait`)';
    const setting =
        `Both cold every round (${count}, alternating, which goes first alternating too): no container, network or volume of ` +
        'the project, and the image removed from the engine, so both pull it (one busybox image of ~1 MB) from the local ' +
        'registry on 127.0.0.1; the same compose file (web depends on db service_healthy, healthchecks every 1 s, a named ' +
        'volume), another project name and host port for docker-compose. Gatehouse in its own process (server.ts as `npm ' +
        'start` runs it, SQLite), driven over HTTP by a signed-in admin; times are receipts on the run event stream; ' +
        '`started`/`healthy` come from the engine (State.StartedAt, first passing Health.Log entry). Between rounds the ' +
        'app is deleted (DELETE with removeVolumes, removeImages, removeCert, removeDns, deleteData) and recreated.';
    return [
        {
            name: 'POST /api/apps/{name}/deploy to Services ready, two services, cold (pull from the local registry)',
            measured: `median ${seconds(ready)} (${eachRound(rounds.gatehouse, 'Services ready')})`,
            baseline,
            ratio: ready / healthy,
            target: `<= ${TARGET_RATIO}`,
            met: ready / healthy <= TARGET_RATIO,
            notes: `${setting} Medians from the start, Gatehouse: ${describeMilestones(rounds.gatehouse.map(containerPart))}; docker-compose: ${describeMilestones(rounds.baseline)}.`,
        },
        {
            name: 'POST /api/apps/{name}/deploy to the run end (nginx, DNS, ACME certificate, check), two services, cold',
            measured: `median ${seconds(ended)} (${eachRound(rounds.gatehouse, 'run ended')})`,
            baseline: `${baseline}; containers only`,
            ratio: ended / healthy,
            target: 'recorded (no target)',
            met: true,
            notes:
                `Ratio = whole deploy / docker-compose to healthy. After Services ready: nginx site written, tested and reloaded, ` +
                `${withDns ? 'DNS record set on a local BIND (RFC 2136), ' : 'no DNS provider (BIND missing), '}a certificate ` +
                `from pebble over HTTP-01, nginx reloaded, a check through nginx. Medians from the start: ${describeMilestones(rounds.gatehouse.map(wholePart))}.`,
        },
    ];
}

function containerPart(round: Milestones): Milestones {
    const { 'nginx done': _nginx, certificate: _certificate, 'run ended': _ended, ...part } = round;
    return part;
}

function wholePart(round: Milestones): Milestones {
    return Object.fromEntries(
        ['Services ready', 'nginx done', 'certificate', 'run ended'].map((name) => [name, round[name] ?? Number.NaN]),
    );
}

/** Everything the benchmark needs: services, BIND, the image in the registry only, Gatehouse signed in; stopped in reverse. */
export async function benchDeploy(): Promise<BenchFigure[]> {
    const cleanups: Array<() => Promise<void> | void> = [];
    try {
        const services: RunningServices = await startServices();
        cleanups.push(() => services.stop());
        const bind = await startBind();
        if (bind) cleanups.push(() => bind.stop());
        const image = `${services.exports.REGISTRY_URL}/gatehouse-bench/${APP}:1`;
        cleanups.push(async () => {
            await removeProject(APP, image);
            await removeProject(BASELINE_PROJECT, image);
        });
        buildWebImage(image, '<h1>deploy bench</h1>\n', true);
        docker('rmi', image);

        const environment = { ...services.exports, ...dnsSettings(bind), BASE_DOMAIN, APPS_FIRST_HOST_PORT: String(await freePort()) };
        const gatehouse = await startGatehouse(environment);
        cleanups.push(() => gatehouse.stop());
        const admin = await signIn(`http://127.0.0.1:${gatehouse.port}`, gatehouse.dataDir);
        return figures(await measure({ gatehouse, admin, image }, services.exports.DOCKER_HOST), bind !== undefined);
    } finally {
        for (const cleanup of cleanups.reverse()) {
            await cleanup();
        }
    }
}
