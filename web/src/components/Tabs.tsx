import type { ComponentChildren, TargetedKeyboardEvent } from 'preact';

import { Link } from '../router.tsx';

export interface TabItem {
    id: string;
    label: ComponentChildren;
    /** Tabs with an address are links (each tab its own URL); without, they are buttons switching a panel. */
    href?: string;
}

export interface TabsProps {
    /** Names the set of tabs for assistive technology. */
    label: string;
    tabs: TabItem[];
    current: string;
    onSelect?: (id: string) => void;
    /** Prefix of the ids of tabs and panels, when a page has more than one set of tabs. */
    idPrefix?: string;
}

export function tabId(prefix: string | undefined, id: string): string {
    return `${prefix ?? 'tab'}-${id}`;
}

export function panelId(prefix: string | undefined, id: string): string {
    return `${prefix ?? 'tab'}-${id}-panel`;
}

function LinkTabs(props: TabsProps) {
    return (
        <nav class="tabs" aria-label={props.label}>
            <ul class="tabs-list">
                {props.tabs.map((tab) => (
                    <li key={tab.id}>
                        <Link
                            href={tab.href ?? '#'}
                            class={tab.id === props.current ? 'tab tab-current' : 'tab'}
                            aria-current={tab.id === props.current ? 'page' : undefined}
                        >
                            {tab.label}
                        </Link>
                    </li>
                ))}
            </ul>
        </nav>
    );
}

/** The WAI-ARIA tabs pattern: arrow keys move between tabs, only the current one is in the tab order. */
function ButtonTabs(props: TabsProps) {
    const select = (id: string) => {
        props.onSelect?.(id);
        document.getElementById(tabId(props.idPrefix, id))?.focus();
    };
    const onKeyDown = (event: TargetedKeyboardEvent<HTMLDivElement>) => {
        const index = props.tabs.findIndex((tab) => tab.id === props.current);
        const moves: Record<string, number> = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: props.tabs.length - 1 };
        const target = moves[event.key];
        if (target !== undefined) {
            event.preventDefault();
            const next = props.tabs[(target + props.tabs.length) % props.tabs.length];
            if (next) {
                select(next.id);
            }
        }
    };
    return (
        <div class="tabs tabs-list" role="tablist" aria-label={props.label} onKeyDown={onKeyDown}>
            {props.tabs.map((tab) => {
                const selected = tab.id === props.current;
                return (
                    <button
                        key={tab.id}
                        type="button"
                        role="tab"
                        id={tabId(props.idPrefix, tab.id)}
                        class={selected ? 'tab tab-current' : 'tab'}
                        aria-selected={selected ? 'true' : 'false'}
                        aria-controls={panelId(props.idPrefix, tab.id)}
                        tabIndex={selected ? 0 : -1}
                        onClick={() => select(tab.id)}
                    >
                        {tab.label}
                    </button>
                );
            })}
        </div>
    );
}

export function Tabs(props: TabsProps) {
    return props.tabs.some((tab) => tab.href !== undefined) ? <LinkTabs {...props} /> : <ButtonTabs {...props} />;
}

/** The panel of a button tab; render only the current one. */
export function TabPanel(props: { id: string; idPrefix?: string; children?: ComponentChildren }) {
    return (
        <div role="tabpanel" id={panelId(props.idPrefix, props.id)} aria-labelledby={tabId(props.idPrefix, props.id)} tabIndex={0}>
            {props.children}
        </div>
    );
}
