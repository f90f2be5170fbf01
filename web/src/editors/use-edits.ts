import { useRef, useState } from 'preact/hooks';

/**
 * Whether an editor's value has changed since it loaded (or was last saved): each mode's first value is its
 * baseline, so switching between form and text alone changes nothing.
 */
export function useEdits<V extends { mode: string }>(value: V | undefined): { changed: boolean; saved: () => void } {
    const baselines = useRef(new Map<string, string>());
    const [, rerender] = useState(0);
    if (value && !baselines.current.has(value.mode)) {
        baselines.current.set(value.mode, JSON.stringify(value));
    }

    const changed = value !== undefined && baselines.current.get(value.mode) !== JSON.stringify(value);
    return {
        changed,
        saved: () => {
            baselines.current.clear();
            if (value) baselines.current.set(value.mode, JSON.stringify(value));
            rerender((count) => count + 1);
        },
    };
}
