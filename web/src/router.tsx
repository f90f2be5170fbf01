import type { ComponentChildren, TargetedMouseEvent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const LOCATION_CHANGE = 'popstate';

export interface Location {
    pathname: string;
    search: URLSearchParams;
}

function currentLocation(): Location {
    return { pathname: window.location.pathname, search: new URLSearchParams(window.location.search) };
}

/** What each page with unsaved changes says before it is left (see useLeaveGuard). */
const leaveGuards = new Set<() => string>();

/**
 * While `message` is set (the page has changes not saved), following a link inside the app asks first, with a
 * confirmation saying `message`; a reload or a closed tab asks too (`beforeunload`: the browser shows its own
 * question, as browsers no longer show a page's words there).
 */
export function useLeaveGuard(message: string | undefined): void {
    useEffect(() => {
        if (!message) {
            return undefined;
        }

        const guard = () => message;
        const onBeforeUnload = (event: BeforeUnloadEvent) => {
            event.preventDefault();
            // Older browsers ask only when returnValue is set.
            event.returnValue = message;
        };
        leaveGuards.add(guard);
        window.addEventListener('beforeunload', onBeforeUnload);
        return () => {
            leaveGuards.delete(guard);
            window.removeEventListener('beforeunload', onBeforeUnload);
        };
    }, [message]);
}

/**
 * Goes to a page of the app without reloading it (the history API); `replace` keeps the back button out of it. A
 * page with unsaved changes is left only once the person confirms.
 */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
    for (const guard of leaveGuards) {
        if (!window.confirm(guard())) {
            return;
        }
    }

    if (options.replace) {
        window.history.replaceState(null, '', path);
    } else {
        window.history.pushState(null, '', path);
    }

    window.dispatchEvent(new PopStateEvent(LOCATION_CHANGE));
    window.scrollTo(0, 0);
}

/** The current page's path and query, updated on every navigation. */
export function useLocation(): Location {
    const [location, setLocation] = useState(currentLocation);
    useEffect(() => {
        const update = () => setLocation(currentLocation());
        window.addEventListener(LOCATION_CHANGE, update);
        return () => window.removeEventListener(LOCATION_CHANGE, update);
    }, []);
    return location;
}

/** A same-origin path to return to after signing in; anything else (another origin, `//host`) gives `/`. */
export function safeNext(next: string | null): string {
    return next !== null && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

function isPlainClick(event: TargetedMouseEvent<HTMLAnchorElement>): boolean {
    return event.button === 0 && !event.metaKey && !event.ctrlKey && !event.shiftKey && !event.altKey && !event.defaultPrevented;
}

export interface LinkProps {
    href: string;
    children?: ComponentChildren;
    class?: string;
    'aria-current'?: 'page' | undefined;
}

/** An <a> that moves inside the app without a reload, and still opens in a new tab when asked. */
export function Link(props: LinkProps) {
    const follow = (event: TargetedMouseEvent<HTMLAnchorElement>) => {
        if (isPlainClick(event)) {
            event.preventDefault();
            navigate(props.href);
        }
    };
    return (
        <a href={props.href} class={props.class} aria-current={props['aria-current']} onClick={follow}>
            {props.children}
        </a>
    );
}

/** Matches `/apps/:name` style patterns; answers the decoded parameters, or null. */
export function matchPath(pattern: string, pathname: string): Record<string, string> | null {
    const patternParts = pattern.split('/').filter(Boolean);
    const pathParts = pathname.split('/').filter(Boolean);
    if (patternParts.length !== pathParts.length) {
        return null;
    }

    const params: Record<string, string> = {};
    for (const [index, part] of patternParts.entries()) {
        const actual = pathParts[index] ?? '';
        if (part.startsWith(':')) {
            params[part.slice(1)] = decodeURIComponent(actual);
        } else if (part !== actual) {
            return null;
        }
    }

    return params;
}
