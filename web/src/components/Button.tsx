import type { ComponentChildren, TargetedMouseEvent } from 'preact';

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'link';

export interface ButtonProps {
    children?: ComponentChildren;
    variant?: ButtonVariant;
    type?: 'button' | 'submit' | 'reset';
    disabled?: boolean;
    /** Shown while an action runs: the button is disabled and says so to assistive technology. */
    busy?: boolean;
    class?: string;
    title?: string;
    'aria-label'?: string;
    'aria-describedby'?: string;
    onClick?: (event: TargetedMouseEvent<HTMLButtonElement>) => void;
}

export function Button(props: ButtonProps) {
    const classes = ['button', `button-${props.variant ?? 'secondary'}`, props.class].filter(Boolean).join(' ');
    return (
        <button
            type={props.type ?? 'button'}
            class={classes}
            disabled={props.disabled === true || props.busy === true}
            aria-busy={props.busy === true ? 'true' : undefined}
            title={props.title}
            aria-label={props['aria-label']}
            aria-describedby={props['aria-describedby']}
            onClick={props.onClick}
        >
            {props.children}
        </button>
    );
}
