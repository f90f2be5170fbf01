import { useEffect, useRef, useState } from 'preact/hooks';

import { runEvents } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useFollowScroll } from '../../components/use-follow-scroll.ts';
import type { Run, RunLine } from './types.ts';

export interface RunLogProps {
    runId: number;
    /** What the run does, for its heading: "Deploy", "Restart". */
    title?: string;
    onEnd?: (run: Run) => void;
}

/**
 * A run's log as it happens (Server-Sent Events; a dropped connection resumes after the last line seen), or as it
 * was for a run that has ended.
 */
export function RunLog(props: RunLogProps) {
    const [lines, setLines] = useState<RunLine[]>([]);
    const [run, setRun] = useState<Run | undefined>(undefined);
    const onEnd = useRef(props.onEnd);
    onEnd.current = props.onEnd;
    // The log follows its last line, unless the reader has scrolled up to read an earlier one.
    const follow = useFollowScroll<HTMLOListElement>([lines]);

    useEffect(() => {
        setLines([]);
        setRun(undefined);
        return runEvents(props.runId, (event) => {
            if (event.type === 'line') {
                const line = event.data as RunLine;
                setLines((seen) => ((seen.at(-1)?.seq ?? 0) >= line.seq ? seen : [...seen, line]));
            } else {
                const ended = event.data as Run;
                setRun(ended);
                onEnd.current?.(ended);
            }
        });
    }, [props.runId]);

    return (
        <section class="run-log" aria-label={`Log of run ${props.runId}`} data-run-id={props.runId} data-state={run?.state ?? 'running'}>
            <p class="run-log-head">
                <strong>
                    {props.title ?? 'Run'} #{props.runId}
                </strong>{' '}
                {run ? <Badge state={run.state} /> : <Spinner inline label="running…" />}
            </p>
            <div role="log" aria-label={`Lines of run ${props.runId}`}>
                {/* Focusable, so that a keyboard can scroll a long log (it scrolls within its box). */}
                <ol class="run-log-lines" tabIndex={0} ref={follow.ref} onScroll={follow.onScroll}>
                    {lines.map((line) => (
                        <li key={line.seq} class={`run-line run-line-${line.level}`}>
                            <span class="run-line-step">{line.step}</span> <span class="run-line-text">{line.text}</span>
                            {line.level === 'info' ? null : <span class="visually-hidden"> ({line.level})</span>}
                        </li>
                    ))}
                </ol>
            </div>
            {run?.error ? (
                <p class="error-text">
                    The run ended {run.state}: {run.error}
                </p>
            ) : null}
        </section>
    );
}
