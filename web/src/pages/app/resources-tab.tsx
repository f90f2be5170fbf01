import { useEffect, useState } from 'preact/hooks';

import { followStats } from '../../api.ts';
import { bytes, percent } from '../../format/bytes.ts';
import { type ChartPoint, ResourceChart } from './resource-chart.tsx';
import type { App } from './types.ts';

/** GET /api/apps/{name}/stats/stream, as this page reads it. */
export interface StatsSample {
    time: string;
    cpuPercent: number;
    memoryBytes: number;
    memoryLimitBytes: number;
    networkRxBytes: number;
    networkTxBytes: number;
    blockReadBytes: number;
    blockWriteBytes: number;
}

interface ContainerHistory {
    container: string;
    service: string;
    samples: StatsSample[];
}

interface StatsHistory {
    intervalSeconds: number;
    samples: number;
    containers: ContainerHistory[];
}

interface SampleEvent {
    container: string;
    service: string;
    sample: StatsSample;
}

function spanWords(seconds: number): string {
    if (seconds % 3600 === 0) return seconds === 3600 ? 'the last hour' : `the last ${seconds / 3600} hours`;
    return seconds >= 120 ? `the last ${Math.round(seconds / 60)} minutes` : `the last ${seconds} seconds`;
}

function ContainerResources(props: { history: ContainerHistory; span: number; intervalSeconds: number; now: number }) {
    const { container, service, samples } = props.history;
    const latest = samples.at(-1);
    if (!latest) return null;
    const from = props.now - props.span * 1000;
    const shown = samples.filter((sample) => Date.parse(sample.time) >= from);
    const points = (value: (sample: StatsSample) => number): ChartPoint[] =>
        shown.map((sample) => ({ time: Date.parse(sample.time), value: value(sample) }));
    const peakCpu = Math.max(...shown.map((sample) => sample.cpuPercent), 0);
    const peakMemory = Math.max(...shown.map((sample) => sample.memoryBytes), 0);
    const when = spanWords(props.span);
    const headingId = `resources-${container}`;
    // A sample late by more than this (the container was down, or the server was) breaks the line.
    const gapMs = props.intervalSeconds * 3000 + 2000;
    // Some room above the peak, so that a steady figure is a line below the top, not along it.
    const cpuTop = Math.max(10, peakCpu * 1.25);
    const memoryTop = peakMemory * 1.25;
    return (
        <article class="resource-container" data-container={container} aria-labelledby={headingId}>
            <h3 id={headingId}>
                {service || container} <span class="muted resource-container-name">{container}</span>
            </h3>
            <dl class="resource-figures">
                <div>
                    <dt>CPU</dt>
                    <dd data-figure="cpu">
                        {percent(latest.cpuPercent)} <span class="muted">(peak {percent(peakCpu)})</span>
                    </dd>
                </div>
                <div>
                    <dt>Memory</dt>
                    <dd data-figure="memory">
                        {bytes(latest.memoryBytes)} <span class="muted">of {bytes(latest.memoryLimitBytes)}</span>
                    </dd>
                </div>
                <div>
                    <dt>Network</dt>
                    <dd data-figure="network">
                        {bytes(latest.networkRxBytes)} in, {bytes(latest.networkTxBytes)} out
                    </dd>
                </div>
                <div>
                    <dt>Disk</dt>
                    <dd data-figure="block">
                        {bytes(latest.blockReadBytes)} read, {bytes(latest.blockWriteBytes)} written
                    </dd>
                </div>
            </dl>
            <div class="resource-charts">
                <figure>
                    <ResourceChart
                        tone="cpu"
                        label={`CPU of ${service || container} over ${when}: now ${percent(latest.cpuPercent)}, peak ${percent(peakCpu)}`}
                        points={points((sample) => sample.cpuPercent)}
                        from={from}
                        to={props.now}
                        top={cpuTop}
                        gapMs={gapMs}
                    />
                    <figcaption>
                        CPU over {when}, up to {percent(cpuTop)}
                    </figcaption>
                </figure>
                <figure>
                    <ResourceChart
                        tone="memory"
                        label={`Memory of ${service || container} over ${when}: now ${bytes(latest.memoryBytes)}, peak ${bytes(peakMemory)}`}
                        points={points((sample) => sample.memoryBytes)}
                        from={from}
                        to={props.now}
                        top={memoryTop}
                        gapMs={gapMs}
                    />
                    <figcaption>
                        Memory over {when}, up to {bytes(memoryTop)}
                    </figcaption>
                </figure>
            </div>
        </article>
    );
}

/**
 * What the app's containers use (`GET /api/apps/{name}/stats/stream`): CPU and memory over the kept span (the last
 * hour by default) drawn per container, with the figures now, network and disk totals beside them.
 */
export function ResourcesTab(props: { app: App }) {
    const [history, setHistory] = useState<StatsHistory | undefined>(undefined);
    const [ended, setEnded] = useState<string | undefined>(undefined);

    useEffect(() => {
        if (props.app.state === 'draft') return undefined;
        setEnded(undefined);
        return followStats(
            props.app.name,
            (data) => setHistory(data as StatsHistory),
            (data) => {
                const { container, service, sample } = data as SampleEvent;
                setHistory((kept) => {
                    if (!kept) return kept;
                    const others = kept.containers.filter((candidate) => candidate.container !== container);
                    const samples = [...(kept.containers.find((candidate) => candidate.container === container)?.samples ?? []), sample];
                    const containers = [...others, { container, service, samples: samples.slice(-kept.samples) }].sort(
                        (left, right) => left.service.localeCompare(right.service) || left.container.localeCompare(right.container),
                    );
                    return { ...kept, containers };
                });
            },
            setEnded,
        );
    }, [props.app.name, props.app.state]);

    if (props.app.state === 'draft') {
        return <p>The app has not been deployed yet: no container uses anything.</p>;
    }

    if (!history) {
        return <p role="status">{ended ? `Stopped: ${ended}.` : 'Reading the containers’ resources…'}</p>;
    }

    const span = history.intervalSeconds * history.samples;
    const newest = Math.max(0, ...history.containers.flatMap((container) => container.samples.map((sample) => Date.parse(sample.time))));
    const now = Math.max(Date.now(), newest);
    return (
        <div class="resources">
            <p class="field-hint" role="status">
                {ended
                    ? `Stopped: ${ended}. Open the tab again to follow.`
                    : `CPU and memory of each container over ${spanWords(span)}, read every ${history.intervalSeconds === 1 ? 'second' : `${history.intervalSeconds} seconds`}. CPU is of one processor: 200 % is two processors’ worth.`}
            </p>
            {history.containers.length === 0 ? (
                <p>No figures yet: the first ones come a moment after a container runs.</p>
            ) : (
                history.containers.map((container) => (
                    <ContainerResources
                        key={container.container}
                        history={container}
                        span={span}
                        intervalSeconds={history.intervalSeconds}
                        now={now}
                    />
                ))
            )}
        </div>
    );
}
