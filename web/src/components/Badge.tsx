import type { ComponentChildren } from 'preact';

/** Evidence levels (sign-in methods), app and run states, and plain tones. */
export type BadgeLevel = 'tested' | 'documented' | 'found';
export type BadgeTone = 'neutral' | 'good' | 'info' | 'warning' | 'bad';

const LEVEL_TONES: Record<BadgeLevel, BadgeTone> = { tested: 'good', documented: 'info', found: 'neutral' };

const STATE_TONES: Record<string, BadgeTone> = {
    running: 'good',
    succeeded: 'good',
    ok: 'good',
    draft: 'neutral',
    stopped: 'warning',
    interrupted: 'warning',
    'rolled back': 'warning',
    failed: 'bad',
};

export function toneOfState(state: string): BadgeTone {
    return STATE_TONES[state] ?? 'neutral';
}

export interface BadgeProps {
    /** An evidence level: its tone, and its name as the text unless children say otherwise. */
    level?: BadgeLevel;
    /** An app or run state: its tone, and the state as the text unless children say otherwise. */
    state?: string;
    tone?: BadgeTone;
    title?: string;
    children?: ComponentChildren;
    class?: string;
}

export function Badge(props: BadgeProps) {
    const tone = props.tone ?? (props.level ? LEVEL_TONES[props.level] : props.state ? toneOfState(props.state) : 'neutral');
    const text = props.children ?? props.level ?? props.state;
    return (
        <span class={['badge', `badge-${tone}`, props.class].filter(Boolean).join(' ')} title={props.title}>
            {text}
        </span>
    );
}
