import { useEffect, useRef } from 'preact/hooks';
import type { RefObject, TargetedEvent } from 'preact';

/**
 * A box that follows its last line as content arrives, unless the reader scrolls up; scrolling back to the end
 * follows again. The scroll events its own following causes never stop it, even when content grew in between.
 */
export function useFollowScroll<T extends HTMLElement>(
    content: unknown[],
): { ref: RefObject<T | null>; onScroll: (event: TargetedEvent<T>) => void } {
    const ref = useRef<T>(null);
    const following = useRef(true);
    const followedTo = useRef(0);
    useEffect(() => {
        const element = ref.current;
        if (element && following.current) {
            element.scrollTop = element.scrollHeight;
            followedTo.current = element.scrollTop;
        }
    }, content);
    const onScroll = (event: TargetedEvent<T>) => {
        const element = event.currentTarget;
        const atEnd = element.scrollTop + element.clientHeight >= element.scrollHeight - 8;
        following.current = atEnd || (following.current && element.scrollTop >= followedTo.current);
    };
    return { ref, onScroll };
}
