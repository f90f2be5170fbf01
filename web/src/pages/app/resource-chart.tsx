/** A line over time, as inline SVG (no chart library): one series, from zero to its peak, gaps where samples miss. */

export interface ChartPoint {
    /** Milliseconds since the epoch. */
    time: number;
    value: number;
}

const WIDTH = 360;
const HEIGHT = 80;

/** The path of the points, broken where two samples are further apart than `gapMs` (the container was down). */
function linePath(points: ChartPoint[], from: number, to: number, top: number, gapMs: number): string {
    const x = (time: number) => (((time - from) / Math.max(1, to - from)) * WIDTH).toFixed(1);
    const y = (value: number) => (HEIGHT - (value / top) * (HEIGHT - 4)).toFixed(1);
    return points
        .map((point, index) => {
            const previous = points[index - 1];
            const move = !previous || point.time - previous.time > gapMs;
            return `${move ? 'M' : 'L'}${x(point.time)},${y(point.value)}`;
        })
        .join(' ');
}

export function ResourceChart(props: {
    /** What the drawing shows, said in full for assistive technology (the figures are also in the text beside it). */
    label: string;
    points: ChartPoint[];
    from: number;
    to: number;
    /** The value at the top of the drawing (the peak when that is higher). */
    top: number;
    gapMs: number;
    tone: 'cpu' | 'memory';
}) {
    const top = Math.max(props.top, ...props.points.map((point) => point.value), Number.EPSILON);
    const path = linePath(props.points, props.from, props.to, top, props.gapMs);
    return (
        <svg
            class={`resource-chart resource-chart-${props.tone}`}
            viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
            preserveAspectRatio="none"
            width="100%"
            height={HEIGHT}
            role="img"
            aria-label={props.label}
        >
            <line x1="0" y1={HEIGHT - 0.5} x2={WIDTH} y2={HEIGHT - 0.5} class="resource-chart-axis" vector-effect="non-scaling-stroke" />
            <line x1="0" y1="4" x2={WIDTH} y2="4" class="resource-chart-grid" vector-effect="non-scaling-stroke" />
            {path ? <path d={path} class="resource-chart-line" fill="none" vector-effect="non-scaling-stroke" /> : null}
        </svg>
    );
}
