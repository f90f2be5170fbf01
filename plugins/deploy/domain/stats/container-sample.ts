/**
 * One container's resource figures, from two of the engine's stats answers, worked out as `docker stats` does: CPU
 * from the growth of the container's and the host's CPU time between them, memory without the page cache the
 * kernel may drop, and the network and block I/O counters as they stand.
 */
import type Docker from 'dockerode';

/** The figures a stats answer gives as they stand (bytes; network and block I/O are totals since the container started). */
interface StandingFigures {
    memoryBytes: number;
    /** The container's limit, or the host's memory when it has none. */
    memoryLimitBytes: number;
    networkRxBytes: number;
    networkTxBytes: number;
    blockReadBytes: number;
    blockWriteBytes: number;
}

/** What one stats answer says, kept until the next one is read. */
export interface StatsReading extends StandingFigures {
    /** When the engine read it (milliseconds since the epoch). */
    at: number;
    /** The container's CPU time so far (nanoseconds). */
    cpuTotal: number;
    /** The host's CPU time so far, all CPUs (nanoseconds). */
    systemTotal: number;
    onlineCpus: number;
}

/** One point of a container's graphs. */
export interface StatsSample extends StandingFigures {
    /** RFC 3339, when the engine read it. */
    time: string;
    /** Of one CPU, as `docker stats` shows it: 200 is two CPUs' worth, averaged since the previous sample. */
    cpuPercent: number;
}

/** Memory in use: cgroup v1 and v2 count the page cache in `usage`; docker leaves out its inactive part. */
function memoryInUse(memory: Docker.MemoryStats): number {
    const usage = memory.usage ?? 0;
    const stats = (memory.stats ?? {}) as Partial<Record<string, number>>;
    const inactive = stats.total_inactive_file ?? stats.inactive_file ?? 0;
    return inactive < usage ? usage - inactive : usage;
}

function blockBytes(blkio: Docker.BlkioStats | undefined, op: 'read' | 'write'): number {
    return (blkio?.io_service_bytes_recursive ?? [])
        .filter((entry) => entry.op.toLowerCase() === op)
        .reduce((total, entry) => total + entry.value, 0);
}

export function readingOf(stats: Docker.ContainerStats): StatsReading {
    const cpu = stats.cpu_stats;
    const networks = Object.values(stats.networks ?? {});
    return {
        at: Date.parse(stats.read) || Date.now(),
        cpuTotal: cpu.cpu_usage.total_usage,
        systemTotal: cpu.system_cpu_usage ?? 0,
        onlineCpus: cpu.online_cpus || cpu.cpu_usage.percpu_usage?.length || 1,
        memoryBytes: memoryInUse(stats.memory_stats),
        memoryLimitBytes: stats.memory_stats.limit ?? 0,
        networkRxBytes: networks.reduce((total, network) => total + network.rx_bytes, 0),
        networkTxBytes: networks.reduce((total, network) => total + network.tx_bytes, 0),
        blockReadBytes: blockBytes(stats.blkio_stats, 'read'),
        blockWriteBytes: blockBytes(stats.blkio_stats, 'write'),
    };
}

/** The sample at `current`, its CPU averaged since `previous` (the same container's earlier reading). */
export function sampleBetween(previous: StatsReading, current: StatsReading): StatsSample {
    const cpuDelta = current.cpuTotal - previous.cpuTotal;
    const systemDelta = current.systemTotal - previous.systemTotal;
    const cpuPercent = cpuDelta > 0 && systemDelta > 0 ? (cpuDelta / systemDelta) * current.onlineCpus * 100 : 0;
    const { at, cpuTotal: _cpu, systemTotal: _system, onlineCpus: _cpus, ...standing } = current;
    return { time: new Date(at).toISOString(), cpuPercent: Math.round(cpuPercent * 100) / 100, ...standing };
}
