/**
 * A real two-node Docker Swarm on this one machine, for tests that need one: the machine's own engine (`new Docker()`,
 * so DOCKER_HOST or /var/run/docker.sock) is the manager, and a second dockerd that the harness starts inside a network
 * namespace of its own joins as a worker. As root only; needs dockerd, ip (iproute2), iptables and nsenter.
 *
 *   host 10.213.77.1/30 (gh-swarm-h) <── veth ──> (gh-swarm-w) 10.213.77.2/30 in netns gh-swarm-worker
 *   manager: the host's engine             worker: dockerd --data-root/--exec-root/--pidfile under /tmp/gh-swarm-worker
 *
 * Why a network namespace: two engines in one namespace would both bind the swarm's gossip (7946) and VXLAN (4789)
 * ports and fight over the bridges and iptables chains they make. In its own namespace the worker has its own docker0,
 * docker_gwbridge, iptables and ports, and talks to the manager over the veth pair as another machine would.
 *
 * What the second dockerd needs to live beside the first (dockerd 20.10):
 * - nsenter --net, not `ip netns exec`: the latter also makes a mount namespace and remounts /sys, which hides the
 *   cgroup mounts under /sys/fs/cgroup, and dockerd then stops with "Devices cgroup isn't mounted".
 * - its own --data-root, --exec-root (its managed containerd's sockets, its netns files and plugin sockets live there),
 *   --pidfile, --host socket and --config-file (so no /etc/docker/daemon.json is shared), and an identity key of its
 *   own (deprecated-key-path in that file, as no flag sets it: else both engines read /etc/docker/key.json and report
 *   the same engine ID in `docker info`). With no --containerd and no /run/containerd/containerd.sock it starts a
 *   containerd of its own under the exec root, as the host's engine does under /run/docker; the containerd namespaces
 *   are named apart anyway, in case a system containerd appears.
 * - DOCKER_SERVICE_PREFER_OFFLINE_IMAGE=1, as moby's own integration tests start their daemons: a swarm task always
 *   tries to pull its image first, and with no registry reachable the worker's tries waited 30 s each for DNS to time
 *   out (before the REJECT rule below). With it, the worker runs the image it has (put there with copyImage), and
 *   fails at once when it has none.
 * - --cgroup-parent /gh-swarm-worker: its containers sit apart from the host engine's, so that what a killed run left
 *   is found and killed.
 *
 * The routing mesh (ports published in ingress mode) needs IPVS in the kernel (CONFIG_IP_VS); `routingMesh` says
 * whether it is there. Without it dockerd 20.10 does not fail: its IPVS netlink family lookup fails once ("Could not
 * get ipvs family information from the kernel"), later IPVS requests go out with family id 0, which the kernel
 * acknowledges as a no-op, so libnetwork takes each service's load balancer as already there and never adds the VIP,
 * the firewall marks or the DOCKER-INGRESS DNAT rules: a port published in ingress mode is not listened on anywhere.
 * Ports published in host mode work (on the node that runs the task: for the worker, at workerAddress).
 *
 * Everything the harness makes has a fixed name (netns gh-swarm-worker, links gh-swarm-h/-w, folder
 * /tmp/gh-swarm-worker, iptables rules commented gh-swarm-worker, a docker_gwbridge labelled by the harness on the
 * manager, the manager's swarm advertised at 10.213.77.1), so that startSwarm removes what a killed run left first.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';
import { promisify } from 'node:util';

import Docker from 'dockerode';

import { waitUntil } from '../helpers/wait.ts';

export const MANAGER_ADDRESS = '10.213.77.1';
export const WORKER_ADDRESS = '10.213.77.2';
const PREFIX_LENGTH = 30;
const SWARM_PORT = 2377;

const NAMESPACE = 'gh-swarm-worker';
const HOST_LINK = 'gh-swarm-h';
const WORKER_LINK = 'gh-swarm-w';
/** The iptables rules' comment, by which the harness finds its rules. */
const RULE_COMMENT = 'gh-swarm-worker';
const CGROUP_PARENT = 'gh-swarm-worker';
const STATE_DIR = Path.join(Os.tmpdir(), 'gh-swarm-worker');
const FILES = {
    dataRoot: Path.join(STATE_DIR, 'data'),
    execRoot: Path.join(STATE_DIR, 'exec'),
    config: Path.join(STATE_DIR, 'daemon.json'),
    /** Its own identity key, which dockerd makes: by default it shares /etc/docker/key.json, and the engine ID with it. */
    key: Path.join(STATE_DIR, 'key.json'),
    pidfile: Path.join(STATE_DIR, 'docker.pid'),
    socket: Path.join(STATE_DIR, 'docker.sock'),
    log: Path.join(STATE_DIR, 'dockerd.log'),
    /** The pid of the process whose harness made the rest: a live one is not a leftover. */
    owner: Path.join(STATE_DIR, 'owner.pid'),
};

/** Made by the harness before the swarm is, so that it carries a label and is known to be the harness's to remove. */
const GATEWAY_BRIDGE = 'docker_gwbridge';
const HARNESS_LABEL = 'io.gatehouse.test.swarm-harness';

/** The dispatcher's heartbeat: a stopped worker is marked down after a few of these (the default, 5 s, took 10-15 s). */
const HEARTBEAT_NS = 2_000_000_000;
const COMMAND_TIMEOUT_MS = 30_000;
const ENGINE_START_TIMEOUT_MS = 60_000;
/** dockerd stops its containers on SIGTERM (each within its stop grace period, at most its 15 s shutdown timeout). */
const ENGINE_STOP_TIMEOUT_MS = 45_000;
const NODE_STATE_TIMEOUT_MS = 60_000;

export interface Swarm {
    /** The machine's own engine: the swarm's only manager, and its leader. */
    readonly manager: Docker;
    /** The engine in the network namespace, joined as a worker. Its API answers only while its engine runs. */
    readonly worker: Docker;
    readonly managerNodeId: string;
    readonly workerNodeId: string;
    /** Where the worker reaches the manager (10.213.77.1): ports the host listens on at 0.0.0.0 answer there too. */
    readonly managerAddress: string;
    /** Where the host reaches the worker (10.213.77.2): ports a worker task publishes in host mode answer there. */
    readonly workerAddress: string;
    /** Whether ports published in ingress mode answer on every node: false when the kernel has no IPVS (see above). */
    readonly routingMesh: boolean;
    /**
     * Puts a local image of the manager's engine into the worker's (save streamed into load): the worker cannot pull
     * from a registry on the manager's 127.0.0.1, and pulls nothing at all (see DOCKER_SERVICE_PREFER_OFFLINE_IMAGE).
     */
    copyImage(reference: string): Promise<void>;
    /** Stops the worker's dockerd (SIGTERM, then waits for it to exit) and waits until the manager lists its node down. */
    stopWorkerEngine(): Promise<void>;
    /** Starts the worker's dockerd again and waits until the manager lists its node ready. Nothing to do if it runs. */
    startWorkerEngine(): Promise<void>;
    /** The end of the worker's dockerd log, for failure messages. */
    workerLog(): string;
    /**
     * The worker leaves the swarm, the manager leaves it (force: its services go with it), the worker's dockerd stops,
     * and the namespace, the veth pair, the iptables rules, the gateway bridge and the folder are removed. Safe to call
     * twice and after a start that failed half-way; throws, naming them, when some of these could not be undone.
     */
    close(): Promise<void>;
}

/** A swarm node as the API lists it, the parts read here. */
export interface SwarmNode {
    ID: string;
    Spec: { Role: 'manager' | 'worker'; Availability: string };
    Status: { State: 'unknown' | 'down' | 'ready' | 'disconnected'; Addr?: string };
}

/** A service's task as the API lists it, the parts read here. */
export interface SwarmTask {
    ID: string;
    NodeID?: string;
    DesiredState: string;
    Status: { State: string; Err?: string };
}

interface EngineInfo {
    Swarm: { LocalNodeState: string; NodeID: string; NodeAddr: string };
}

const execFileAsync = promisify(execFile);

interface Outcome {
    ok: boolean;
    stdout: string;
    stderr: string;
}

/** Runs a command with its arguments (no shell); throws with its error output unless `check` is false. */
async function run(command: string, args: string[], check = true): Promise<Outcome> {
    try {
        const { stdout, stderr } = await execFileAsync(command, args, { encoding: 'utf8', timeout: COMMAND_TIMEOUT_MS });
        return { ok: true, stdout, stderr };
    } catch (error) {
        const failure = error as { stdout?: string; stderr?: string; message: string };
        if (check) {
            throw new Error(`${command} ${args.join(' ')} failed: ${failure.stderr?.trim() || failure.message}`);
        }

        return { ok: false, stdout: failure.stdout ?? '', stderr: failure.stderr ?? failure.message };
    }
}

const TOOLS: Array<[command: string, source: string]> = [
    ['dockerd', "Debian's docker.io"],
    ['ip', 'iproute2'],
    ['iptables', 'iptables'],
    ['nsenter', 'util-linux'],
    ['umount', 'mount'],
];

function onPath(command: string): boolean {
    return (process.env.PATH ?? '').split(Path.delimiter).some((directory) => {
        try {
            Fs.accessSync(Path.join(directory, command), Fs.constants.X_OK);
            return true;
        } catch {
            return false;
        }
    });
}

/** Throws, naming everything missing: under CI a missing tool is a failure like any other, and outside it too. */
function checkPrerequisites(): void {
    const missing: string[] = [];
    if (process.platform !== 'linux') {
        missing.push('Linux');
    }

    if (process.getuid?.() !== 0) {
        missing.push('root (it makes a network namespace and starts a dockerd)');
    }

    for (const [command, source] of TOOLS) {
        if (!onPath(command)) {
            missing.push(`${command} (${source})`);
        }
    }

    if (missing.length > 0) {
        const ci = process.env.CI === 'true' ? ' (CI=true: the swarm tests cannot be skipped there)' : '';
        throw new Error(`the swarm test harness needs ${missing.join(', ')}, missing here${ci}`);
    }
}

/** Whether the kernel has IPVS, which the routing mesh needs: loaded, built in, or a module dockerd can load. */
export function kernelHasIpvs(): boolean {
    const module = Path.join('/lib/modules', Os.release(), 'kernel/net/netfilter/ipvs');
    return Fs.existsSync('/proc/net/ip_vs') || Fs.existsSync('/sys/module/ip_vs') || Fs.existsSync(module);
}

function processAlive(pid: number): boolean {
    try {
        // A zombie answers signal 0 too; it is gone for our purposes.
        if (/^\d+ \(.*\) Z/.test(Fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))) {
            return false;
        }

        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
}

function commandLine(pid: number): string[] {
    try {
        return Fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
        return [];
    }
}

function readPid(file: string): number | undefined {
    try {
        const pid = Number(Fs.readFileSync(file, 'utf8').trim());
        return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
        return undefined;
    }
}

/** SIGTERM, a bounded wait for the process to go, then SIGKILL and another. */
async function stopProcess(pid: number, what: string, timeoutMs: number): Promise<void> {
    const signal = (name: NodeJS.Signals) => {
        try {
            process.kill(pid, name);
        } catch {
            // Gone already.
        }
    };
    signal('SIGTERM');
    try {
        await waitUntil(`${what} (pid ${pid}) exits after SIGTERM`, () => !processAlive(pid), { timeoutMs, intervalMs: 100 });
    } catch {
        signal('SIGKILL');
        await waitUntil(`${what} (pid ${pid}) exits after SIGKILL`, () => !processAlive(pid), { timeoutMs: 10_000, intervalMs: 100 });
    }
}

/** The worker's dockerd from the pidfile, if it runs (checked by its command line, pids being reused). */
function leftoverEnginePid(): number | undefined {
    const pid = readPid(FILES.pidfile);
    if (pid === undefined || !processAlive(pid)) {
        return undefined;
    }

    const args = commandLine(pid);
    return args.some((arg) => arg.endsWith('dockerd')) && args.includes(FILES.pidfile) ? pid : undefined;
}

function namespaceExists(): boolean {
    return Fs.existsSync(Path.join('/run/netns', NAMESPACE));
}

async function linkExists(name: string): Promise<boolean> {
    return (await run('ip', ['link', 'show', 'dev', name], false)).ok;
}

/** Processes still in the namespace once dockerd is gone: its containerd, shims, docker-proxy. */
async function killNamespaceProcesses(): Promise<void> {
    if (!namespaceExists()) {
        return;
    }

    const pids = (await run('ip', ['netns', 'pids', NAMESPACE], false)).stdout
        .split('\n')
        .map(Number)
        .filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid);
    for (const pid of pids) {
        try {
            process.kill(pid, 'SIGKILL');
        } catch {
            // Gone already.
        }
    }

    await waitUntil(`the processes in netns ${NAMESPACE} (${pids.join(', ')}) exit`, () => pids.every((pid) => !processAlive(pid)), {
        timeoutMs: 10_000,
        intervalMs: 100,
    });
}

/** The worker's container cgroups (under --cgroup-parent) in every hierarchy: v1's per controller, or v2's one. */
function harnessCgroups(): string[] {
    const root = '/sys/fs/cgroup';
    const tops = [Path.join(root, CGROUP_PARENT)];
    try {
        for (const entry of Fs.readdirSync(root, { withFileTypes: true })) {
            if (entry.isDirectory()) {
                tops.push(Path.join(root, entry.name, CGROUP_PARENT));
            }
        }
    } catch {
        return [];
    }

    const found: string[] = [];
    const walk = (directory: string) => {
        found.push(directory);
        for (const entry of Fs.readdirSync(directory, { withFileTypes: true })) {
            if (entry.isDirectory()) {
                walk(Path.join(directory, entry.name));
            }
        }
    };
    for (const top of tops.filter((path) => Fs.existsSync(path))) {
        walk(top);
    }

    return found;
}

function cgroupProcesses(cgroups: string[]): number[] {
    const pids = new Set<number>();
    for (const cgroup of cgroups) {
        try {
            for (const line of Fs.readFileSync(Path.join(cgroup, 'cgroup.procs'), 'utf8').split('\n')) {
                if (line.trim() !== '') pids.add(Number(line));
            }
        } catch {
            // Removed meanwhile.
        }
    }

    return [...pids];
}

/** Kills what the worker's containers left running (when its dockerd was killed, not stopped) and removes the cgroups. */
async function removeCgroups(): Promise<void> {
    const cgroups = harnessCgroups();
    if (cgroups.length === 0) {
        return;
    }

    for (const pid of cgroupProcesses(cgroups)) {
        try {
            process.kill(pid, 'SIGKILL');
        } catch {
            // Gone already.
        }
    }

    await waitUntil(`the processes in the ${CGROUP_PARENT} cgroups exit`, () => cgroupProcesses(cgroups).length === 0, {
        timeoutMs: 10_000,
        intervalMs: 100,
    });
    // Deepest first: a cgroup goes only once its children have.
    for (const cgroup of cgroups.sort((a, b) => b.length - a.length)) {
        try {
            Fs.rmdirSync(cgroup);
        } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
    }
}

/** Mount points under the folder (overlays, netns files, the data root's own bind mount) that a killed dockerd left. */
function mountsUnderState(): string[] {
    const points = Fs.readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((line) => (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
        .filter((point) => point === STATE_DIR || point.startsWith(`${STATE_DIR}/`));
    return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountState(): Promise<void> {
    for (const point of mountsUnderState()) {
        await run('umount', ['--lazy', point]);
    }
}

interface Rule {
    chain: 'INPUT' | 'FORWARD';
    match: string[];
    target: string[];
}

/**
 * The worker reaches the manager at 10.213.77.1, which is the host's own address: INPUT, accepted whatever the host's
 * policy. Anything else it sends (DNS, registries) would be forwarded, and the host's FORWARD policy drops it, so each
 * try hangs until it times out: rejected instead, so that it fails at once.
 */
const RULES: Rule[] = [
    { chain: 'INPUT', match: ['-i', HOST_LINK, '-s', WORKER_ADDRESS], target: ['-j', 'ACCEPT'] },
    { chain: 'FORWARD', match: ['-i', HOST_LINK], target: ['-j', 'REJECT'] },
];

async function addRules(): Promise<void> {
    for (const rule of RULES) {
        await run('iptables', ['-w', '-I', rule.chain, ...rule.match, '-m', 'comment', '--comment', RULE_COMMENT, ...rule.target]);
    }
}

/** Deletes every rule with the harness's comment from the chains it adds to, as `iptables -S` prints them. */
async function removeRules(): Promise<void> {
    for (const chain of new Set(RULES.map((rule) => rule.chain))) {
        const listed = (await run('iptables', ['-w', '-S', chain], false)).stdout.split('\n');
        for (const line of listed) {
            const words = line.trim().split(/\s+/);
            if (words[0] === '-A' && words.includes(RULE_COMMENT)) {
                await run('iptables', ['-w', '-D', ...words.slice(1)]);
            }
        }
    }
}

async function createNetwork(): Promise<void> {
    await run('ip', ['netns', 'add', NAMESPACE]);
    await run('ip', ['link', 'add', HOST_LINK, 'type', 'veth', 'peer', 'name', WORKER_LINK, 'netns', NAMESPACE]);
    await run('ip', ['address', 'add', `${MANAGER_ADDRESS}/${PREFIX_LENGTH}`, 'dev', HOST_LINK]);
    await run('ip', ['link', 'set', HOST_LINK, 'up']);
    await run('ip', ['-n', NAMESPACE, 'link', 'set', 'lo', 'up']);
    await run('ip', ['-n', NAMESPACE, 'address', 'add', `${WORKER_ADDRESS}/${PREFIX_LENGTH}`, 'dev', WORKER_LINK]);
    await run('ip', ['-n', NAMESPACE, 'link', 'set', WORKER_LINK, 'up']);
    await run('ip', ['-n', NAMESPACE, 'route', 'add', 'default', 'via', MANAGER_ADDRESS]);
    await addRules();
}

async function engineInfo(engine: Docker): Promise<EngineInfo> {
    return (await engine.info()) as EngineInfo;
}

/** The manager's swarm is the harness's when it is advertised at the harness's address, which nothing else uses. */
function isHarnessSwarm(info: EngineInfo): boolean {
    return info.Swarm.LocalNodeState !== 'inactive' && info.Swarm.NodeAddr === MANAGER_ADDRESS;
}

async function leaveHarnessSwarm(manager: Docker): Promise<void> {
    if (isHarnessSwarm(await engineInfo(manager))) {
        await manager.swarmLeave({ force: true });
    }
}

async function createGatewayBridge(manager: Docker): Promise<void> {
    const existing = await manager.listNetworks({ filters: { name: [GATEWAY_BRIDGE] } });
    if (existing.some((network) => network.Name === GATEWAY_BRIDGE)) {
        return;
    }

    // The options Docker gives the one it makes (libnetwork's default gateway network).
    await manager.createNetwork({
        Name: GATEWAY_BRIDGE,
        Driver: 'bridge',
        Labels: { [HARNESS_LABEL]: 'true' },
        Options: {
            'com.docker.network.bridge.name': GATEWAY_BRIDGE,
            'com.docker.network.bridge.enable_icc': 'false',
            'com.docker.network.bridge.enable_ip_masquerade': 'true',
        },
    });
}

/** Removes the harness's docker_gwbridge once the swarm's ingress sandbox has let go of it. */
async function removeGatewayBridge(manager: Docker): Promise<void> {
    const ours = await manager.listNetworks({ filters: { label: [`${HARNESS_LABEL}=true`] } });
    for (const network of ours) {
        await waitUntil(
            `the manager removes its ${network.Name} network (it goes once the ingress sandbox has left it)`,
            () =>
                manager
                    .getNetwork(network.Id)
                    .remove()
                    .then(
                        () => true,
                        (error: { statusCode?: number }) => error.statusCode === 404,
                    ),
            { timeoutMs: 20_000, intervalMs: 250 },
        );
    }
}

/**
 * Removes what the harness makes, whether a killed run left it or this one made it: each step looks for what it
 * removes, so a second run finds nothing. Errors are collected, so that one step failing leaves the others done.
 */
async function tearDown(manager: Docker): Promise<string[]> {
    const errors: string[] = [];
    const step = async (what: string, action: () => Promise<void>) => {
        try {
            await action();
        } catch (error) {
            errors.push(`${what}: ${(error as Error).message}`);
        }
    };

    await step('stopping the worker dockerd', async () => {
        const pid = leftoverEnginePid();
        if (pid !== undefined) await stopProcess(pid, 'the worker dockerd', ENGINE_STOP_TIMEOUT_MS);
    });
    await step(`killing what is left in netns ${NAMESPACE}`, killNamespaceProcesses);
    await step(`removing the ${CGROUP_PARENT} cgroups`, removeCgroups);
    await step('leaving the manager swarm', () => leaveHarnessSwarm(manager));
    await step(`removing the manager's ${GATEWAY_BRIDGE}`, () => removeGatewayBridge(manager));
    await step(`unmounting under ${STATE_DIR}`, unmountState);
    await step('removing the iptables rules', removeRules);
    await step(`deleting the link ${HOST_LINK}`, async () => {
        if (await linkExists(HOST_LINK)) await run('ip', ['link', 'delete', HOST_LINK]);
    });
    await step(`deleting netns ${NAMESPACE}`, async () => {
        if (namespaceExists()) await run('ip', ['netns', 'delete', NAMESPACE]);
    });
    await step(`removing ${STATE_DIR}`, async () => Fs.rmSync(STATE_DIR, { recursive: true, force: true }));
    return errors;
}

/**
 * Removes what an earlier run left (a killed test: its dockerd still runs, the manager is still in its swarm...).
 * Refuses while the process that made it still runs, and when the manager is in a swarm the harness did not make.
 */
export async function cleanLeftovers(manager: Docker = new Docker()): Promise<void> {
    const owner = readPid(FILES.owner);
    if (owner !== undefined && owner !== process.pid && processAlive(owner)) {
        throw new Error(`another process (pid ${owner}) runs the swarm harness now (${STATE_DIR}); only one can at a time`);
    }

    const errors = await tearDown(manager);
    if (errors.length > 0) {
        throw new Error(`could not remove what an earlier swarm harness run left: ${errors.join('; ')}`);
    }

    const info = await engineInfo(manager);
    if (info.Swarm.LocalNodeState !== 'inactive') {
        throw new Error(
            `the manager's engine is in a swarm the harness did not make (state ${info.Swarm.LocalNodeState}, ` +
                `node address ${info.Swarm.NodeAddr || 'none'}); it is left alone: \`docker swarm leave --force\` ends it`,
        );
    }
}

async function waitForNodeState(manager: Docker, nodeId: string, state: SwarmNode['Status']['State'], log: () => string): Promise<void> {
    try {
        await waitUntil(
            `the manager lists node ${nodeId} as ${state}`,
            async () => ((await manager.getNode(nodeId).inspect()) as SwarmNode).Status.State === state,
            { timeoutMs: NODE_STATE_TIMEOUT_MS, intervalMs: 250 },
        );
    } catch (error) {
        throw new Error(`${(error as Error).message}; the worker's dockerd log ends:\n${log()}`);
    }
}

/** The tasks of a service that run now (desired and observed): where its replicas are. */
export async function runningTasks(manager: Docker, service: string): Promise<SwarmTask[]> {
    const tasks = (await manager.listTasks({ filters: { service: [service] } })) as SwarmTask[];
    return tasks.filter((task) => task.DesiredState === 'running' && task.Status.State === 'running');
}

class Harness implements Swarm {
    readonly worker = new Docker({ socketPath: FILES.socket });
    readonly managerAddress = MANAGER_ADDRESS;
    readonly workerAddress = WORKER_ADDRESS;
    readonly routingMesh = kernelHasIpvs();
    managerNodeId = '';
    workerNodeId = '';
    private engine: ChildProcess | undefined;
    /** Settles when the engine's process has exited and Node has seen it (so that engineRunning() says so). */
    private engineExited: Promise<void> = Promise.resolve();
    private closing: Promise<void> | undefined;

    constructor(readonly manager: Docker) {}

    async start(): Promise<void> {
        Fs.mkdirSync(STATE_DIR, { recursive: true, mode: 0o700 });
        Fs.writeFileSync(FILES.owner, `${process.pid}\n`);
        // A file of its own, so that the host's /etc/docker/daemon.json does not apply; the key path has no flag.
        Fs.writeFileSync(FILES.config, `${JSON.stringify({ 'deprecated-key-path': FILES.key })}\n`);
        await createNetwork();
        await this.startEngine();

        await createGatewayBridge(this.manager);
        this.managerNodeId = (await this.manager.swarmInit({
            ListenAddr: `${MANAGER_ADDRESS}:${SWARM_PORT}`,
            AdvertiseAddr: MANAGER_ADDRESS,
            Spec: { Dispatcher: { HeartbeatPeriod: HEARTBEAT_NS } },
        })) as string;
        const swarm = (await this.manager.swarmInspect()) as { JoinTokens: { Worker: string } };
        await this.worker.swarmJoin({
            ListenAddr: `${WORKER_ADDRESS}:${SWARM_PORT}`,
            AdvertiseAddr: WORKER_ADDRESS,
            RemoteAddrs: [`${MANAGER_ADDRESS}:${SWARM_PORT}`],
            JoinToken: swarm.JoinTokens.Worker,
        });
        this.workerNodeId = (await engineInfo(this.worker)).Swarm.NodeID;
        await waitUntil(
            'the manager lists two nodes, both ready',
            async () => {
                const nodes = (await this.manager.listNodes()) as SwarmNode[];
                return nodes.length === 2 && nodes.every((node) => node.Status.State === 'ready');
            },
            { timeoutMs: NODE_STATE_TIMEOUT_MS, intervalMs: 250 },
        );
    }

    private engineRunning(): boolean {
        return this.engine !== undefined && this.engine.exitCode === null && this.engine.signalCode === null;
    }

    private async startEngine(): Promise<void> {
        const log = Fs.openSync(FILES.log, 'a');
        let engine: ChildProcess;
        try {
            engine = spawn(
                'nsenter',
                [
                    `--net=/run/netns/${NAMESPACE}`,
                    '--',
                    'dockerd',
                    '--config-file',
                    FILES.config,
                    '--data-root',
                    FILES.dataRoot,
                    '--exec-root',
                    FILES.execRoot,
                    '--pidfile',
                    FILES.pidfile,
                    '--host',
                    `unix://${FILES.socket}`,
                    '--containerd-namespace',
                    NAMESPACE,
                    '--containerd-plugins-namespace',
                    `${NAMESPACE}-plugins`,
                    '--cgroup-parent',
                    `/${CGROUP_PARENT}`,
                    '--swarm-default-advertise-addr',
                    WORKER_ADDRESS,
                ],
                // Its output goes to a file, not a pipe: a pipe would break when this process dies, and dockerd with it.
                { stdio: ['ignore', log, log], env: { ...process.env, DOCKER_SERVICE_PREFER_OFFLINE_IMAGE: '1' } },
            );
        } finally {
            Fs.closeSync(log);
        }

        // A test that forgets close() still ends; the next startSwarm removes what it left.
        engine.unref();
        this.engine = engine;
        this.engineExited = new Promise((resolve) => engine.once('exit', () => resolve()));
        let spawnError: Error | undefined;
        engine.once('error', (error) => {
            spawnError = error;
        });
        try {
            await waitUntil(
                `the worker's dockerd answers on ${FILES.socket}`,
                async () => {
                    if (spawnError !== undefined) {
                        throw spawnError;
                    }

                    if (engine.exitCode !== null || engine.signalCode !== null) {
                        throw new Error(`the worker's dockerd exited (${engine.exitCode ?? engine.signalCode})`);
                    }

                    return this.worker.ping().then(
                        () => true,
                        () => false,
                    );
                },
                { timeoutMs: ENGINE_START_TIMEOUT_MS, intervalMs: 200 },
            );
        } catch (error) {
            throw new Error(`${(error as Error).message}; its log ends:\n${this.workerLog()}`);
        }
    }

    private async stopEngine(): Promise<void> {
        const engine = this.engine;
        const pid = engine?.pid;
        if (engine === undefined || pid === undefined || !this.engineRunning()) {
            return;
        }

        // Referenced again while it stops: an unreferenced child's exit would not keep this process up to see it.
        engine.ref();
        try {
            await stopProcess(pid, "the worker's dockerd", ENGINE_STOP_TIMEOUT_MS);
            await this.engineExited;
        } finally {
            engine.unref();
        }
    }

    workerLog(): string {
        try {
            return Fs.readFileSync(FILES.log, 'utf8')
                .split('\n')
                .filter((line) => !line.includes('module=grpc'))
                .slice(-40)
                .join('\n');
        } catch {
            return '(no log)';
        }
    }

    async copyImage(reference: string): Promise<void> {
        const archive = await this.manager.getImage(reference).get();
        const progress = await this.worker.loadImage(archive);
        const output = await new Promise<Array<{ error?: string }>>((resolve, reject) => {
            this.worker.modem.followProgress(progress, (error: Error | null, result: Array<{ error?: string }>) =>
                error ? reject(error) : resolve(result),
            );
        });
        const failure = output.find((message) => message.error !== undefined);
        if (failure) {
            throw new Error(`the worker's engine could not load ${reference}: ${failure.error}`);
        }

        await this.worker.getImage(reference).inspect();
    }

    async stopWorkerEngine(): Promise<void> {
        await this.stopEngine();
        await waitForNodeState(this.manager, this.workerNodeId, 'down', () => this.workerLog());
    }

    async startWorkerEngine(): Promise<void> {
        if (!this.engineRunning()) {
            await this.startEngine();
        }

        await waitForNodeState(this.manager, this.workerNodeId, 'ready', () => this.workerLog());
    }

    close(): Promise<void> {
        // One close at a time; a later one runs the (idempotent) teardown again and finds nothing left.
        this.closing ??= this.shutDown().finally(() => {
            this.closing = undefined;
        });
        return this.closing;
    }

    private async shutDown(): Promise<void> {
        const errors: string[] = [];
        if (this.engineRunning()) {
            // A courtesy, so that the manager sees the node go: whatever the worker keeps of the swarm goes with its
            // data root below, and the manager's forced leave ends the swarm anyway. So its failure is no failure
            // (503 when it is in no swarm, a reset connection when its dockerd has just died).
            await this.worker.swarmLeave({ force: true }).catch(() => undefined);
        }

        try {
            await this.stopEngine();
        } catch (error) {
            errors.push(`stopping the worker dockerd: ${(error as Error).message}`);
        }

        errors.push(...(await tearDown(this.manager)));
        if (errors.length > 0) {
            throw new Error(`closing the swarm harness left things behind: ${errors.join('; ')}`);
        }
    }
}

/**
 * Starts the two-node swarm (see the top of this file): removes what an earlier run left, makes the namespace and the
 * veth pair, starts the worker's dockerd, makes the manager's engine a swarm manager and joins the worker to it, and
 * returns once the manager lists both nodes ready. A start that fails undoes what it made before throwing.
 */
export async function startSwarm(): Promise<Swarm> {
    checkPrerequisites();
    const manager = new Docker();
    await cleanLeftovers(manager);
    const harness = new Harness(manager);
    try {
        await harness.start();
    } catch (error) {
        const closed = await harness.close().then(
            () => '',
            (closeError: Error) => `; and then ${closeError.message}`,
        );
        throw new Error(`starting the swarm failed: ${(error as Error).message}${closed}`);
    }

    return harness;
}
