export interface SpinnerProps {
    label?: string;
    /** Inline beside text instead of a block of its own. */
    inline?: boolean;
}

export function Spinner(props: SpinnerProps) {
    return (
        <span class={props.inline ? 'spinner spinner-inline' : 'spinner'} role="status">
            <span class="spinner-mark" aria-hidden="true" />
            <span class="spinner-label">{props.label ?? 'Loading…'}</span>
        </span>
    );
}
