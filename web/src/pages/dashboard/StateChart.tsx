import { Link } from '../../router.tsx';
import { toneOfState } from '../../components/Badge.tsx';

/** The usual states first, in the order a person scans them; any other state after them. */
const STATE_ORDER = ['running', 'stopped', 'failed', 'draft'];

const BAR_HEIGHT = 28;
const GAP = 10;
const LABEL_WIDTH = 84;
const CHART_WIDTH = 340;
const COUNT_WIDTH = 36;

function orderedStates(byState: Record<string, number>): [string, number][] {
    const others = Object.keys(byState)
        .filter((state) => !STATE_ORDER.includes(state))
        .sort();
    return [...STATE_ORDER, ...others].map((state): [string, number] => [state, byState[state] ?? 0]);
}

/** Apps by state as horizontal bars (SVG, no library); each bar links to the apps in that state. */
export function StateChart(props: { byState: Record<string, number>; total: number }) {
    const rows = orderedStates(props.byState);
    const largest = Math.max(1, ...rows.map(([, count]) => count));
    const barSpace = CHART_WIDTH - LABEL_WIDTH - COUNT_WIDTH;
    const height = rows.length * (BAR_HEIGHT + GAP) - GAP;
    const summary = rows.map(([state, count]) => `${count} ${state}`).join(', ');
    return (
        <figure class="state-chart">
            <svg viewBox={`0 0 ${CHART_WIDTH} ${height}`} width="100%" role="img" aria-label={`Apps by state: ${summary}`}>
                {rows.map(([state, count], index) => {
                    const y = index * (BAR_HEIGHT + GAP);
                    const width = count === 0 ? 2 : Math.max(4, (count / largest) * barSpace);
                    return (
                        <g key={state} class={`state-bar tone-${toneOfState(state)}`}>
                            <text
                                x={LABEL_WIDTH - 8}
                                y={y + BAR_HEIGHT / 2}
                                class="state-bar-label"
                                text-anchor="end"
                                dominant-baseline="central"
                            >
                                {state}
                            </text>
                            <rect x={LABEL_WIDTH} y={y} width={width} height={BAR_HEIGHT} rx="4" class="state-bar-rect" />
                            <text x={LABEL_WIDTH + width + 6} y={y + BAR_HEIGHT / 2} class="state-bar-count" dominant-baseline="central">
                                {count}
                            </text>
                        </g>
                    );
                })}
            </svg>
            <figcaption>
                {props.total} {props.total === 1 ? 'app' : 'apps'} in all ·{' '}
                {rows
                    .filter(([, count]) => count > 0)
                    .map(([state, count], index) => (
                        <span key={state}>
                            {index > 0 ? ', ' : ''}
                            <Link href={`/apps?state=${encodeURIComponent(state)}`}>
                                {count} {state}
                            </Link>
                        </span>
                    ))}
            </figcaption>
        </figure>
    );
}
