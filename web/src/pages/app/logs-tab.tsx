import { useEffect, useId, useRef, useState } from 'preact/hooks';

import { followLogs } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { useFollowScroll } from '../../components/use-follow-scroll.ts';
import type { App, FollowedLine } from './types.ts';

/** Where following starts: the last lines of each container, or the lines of a recent span of time. */
const STARTS = [
    { id: 'last', label: 'Last 100 lines of each container', query: () => ({ tail: 100 }) },
    { id: '15m', label: 'The last 15 minutes', query: () => ({ tail: 5000, since: secondsAgo(15 * 60) }) },
    { id: '1h', label: 'The last hour', query: () => ({ tail: 5000, since: secondsAgo(60 * 60) }) },
    { id: '1d', label: 'The last day', query: () => ({ tail: 5000, since: secondsAgo(24 * 60 * 60) }) },
] as const;

type StartId = (typeof STARTS)[number]['id'];

/** Lines kept in the page; older ones drop off the top. */
const MAX_LINES = 5000;

function secondsAgo(seconds: number): number {
    return Math.floor(Date.now() / 1000) - seconds;
}

function lineKey(line: FollowedLine): string {
    return `${line.container} ${line.time ?? ''} ${line.stream} ${line.text}`;
}

/**
 * The app's containers' logs, followed live (`GET /api/apps/{name}/logs/stream`): paused and resumed where they
 * were, searched, one service or all, each line marked with its service and, for stderr, a quiet mark.
 */
export function LogsTab(props: { app: App }) {
    const id = useId();
    const [start, setStart] = useState<StartId>('last');
    const [lines, setLines] = useState<FollowedLine[]>([]);
    const [following, setFollowing] = useState(true);
    const [ended, setEnded] = useState<string | undefined>(undefined);
    const [search, setSearch] = useState('');
    const [service, setService] = useState('');
    // Bumped to reopen the stream where it stopped (Resume).
    const [opened, setOpened] = useState(0);
    const seen = useRef(new Set<string>());
    const lastTime = useRef<string | undefined>(undefined);

    useEffect(() => {
        if (!following || props.app.state === 'draft') {
            return undefined;
        }

        setEnded(undefined);
        // Resumed: from the second of the last line seen (a line seen already is not shown twice).
        const resumeAt = lastTime.current ? Math.floor(Date.parse(lastTime.current) / 1000) : undefined;
        const query =
            resumeAt === undefined
                ? (STARTS.find((candidate) => candidate.id === start)?.query() ?? { tail: 100 })
                : { tail: 5000, since: resumeAt };
        return followLogs(
            props.app.name,
            query,
            (data) => {
                const line = data as FollowedLine;
                const key = lineKey(line);
                if (seen.current.has(key)) return;
                seen.current.add(key);
                lastTime.current = line.time ?? lastTime.current;
                setLines((shown) => [...shown, line].slice(-MAX_LINES));
            },
            (reason) => {
                setEnded(reason);
                setFollowing(false);
            },
        );
    }, [props.app.name, props.app.state, start, following, opened]);

    const follow = useFollowScroll<HTMLPreElement>([lines, search, service]);

    if (props.app.state === 'draft') {
        return <p>The app has not been deployed yet: no container has logs.</p>;
    }

    const restart = (next: StartId) => {
        seen.current.clear();
        lastTime.current = undefined;
        setLines([]);
        setStart(next);
        setFollowing(true);
        setOpened((count) => count + 1);
    };
    const services = [...new Set(lines.map((line) => line.service))].sort();
    const needle = search.trim().toLowerCase();
    const shown = lines.filter((line) => (!service || line.service === service) && (!needle || line.text.toLowerCase().includes(needle)));

    return (
        <div class="logs">
            <div class="tab-toolbar logs-toolbar">
                <label for={`${id}-start`}>From</label>{' '}
                <select id={`${id}-start`} value={start} onChange={(event) => restart(event.currentTarget.value as StartId)}>
                    {STARTS.map((candidate) => (
                        <option key={candidate.id} value={candidate.id}>
                            {candidate.label}
                        </option>
                    ))}
                </select>{' '}
                <label for={`${id}-service`}>Service</label>{' '}
                <select id={`${id}-service`} value={service} onChange={(event) => setService(event.currentTarget.value)}>
                    <option value="">All</option>
                    {services.map((name) => (
                        <option key={name} value={name}>
                            {name}
                        </option>
                    ))}
                </select>{' '}
                <label for={`${id}-search`}>Search</label>{' '}
                <input id={`${id}-search`} type="search" value={search} onInput={(event) => setSearch(event.currentTarget.value)} />{' '}
                <Button
                    onClick={() => {
                        if (!following) setOpened((count) => count + 1);
                        setFollowing(!following);
                    }}
                >
                    {following ? 'Pause' : 'Resume'}
                </Button>
            </div>
            <p class="field-hint" role="status">
                {following ? 'Following live.' : ended ? `Stopped: ${ended}. Resume to follow again.` : 'Paused.'}{' '}
                {needle || service ? `${shown.length} of ${lines.length} lines shown.` : `${lines.length} lines.`}
            </p>
            <pre class="log-lines" tabIndex={0} aria-label="Log lines" ref={follow.ref} onScroll={follow.onScroll}>
                {shown.length === 0
                    ? '(no lines)'
                    : shown.map((line) => (
                          <span key={lineKey(line)} class="log-line" data-service={line.service} data-stream={line.stream}>
                              {line.time ? `${line.time.slice(0, 19).replace('T', ' ')} ` : ''}
                              <span class="log-service">{line.service}</span>{' '}
                              {line.stream === 'stderr' ? <span class="log-stream">err</span> : null}
                              {line.stream === 'stderr' ? ' ' : ''}
                              {line.text}
                              {'\n'}
                          </span>
                      ))}
            </pre>
        </div>
    );
}
