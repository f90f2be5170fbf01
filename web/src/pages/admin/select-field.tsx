import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

import { ErrorText } from '../../components/ErrorText.tsx';

export interface SelectOption {
    value: string;
    label: string;
}

export interface SelectFieldProps {
    label: ComponentChildren;
    value: string;
    options: SelectOption[];
    onChange: (value: string) => void;
    name?: string;
    hint?: ComponentChildren;
    error?: string;
    disabled?: boolean;
    class?: string;
}

/** A label, its select, a hint and the error that concerns it (the shared Field has inputs only). */
export function SelectField(props: SelectFieldProps) {
    const id = `select-${useId()}`;
    const hintId = `${id}-hint`;
    const errorId = `${id}-error`;
    const describedBy = [props.hint ? hintId : undefined, props.error ? errorId : undefined].filter(Boolean).join(' ') || undefined;
    return (
        <div class={['field', props.error ? 'field-invalid' : undefined, props.class].filter(Boolean).join(' ')}>
            <label for={id}>{props.label}</label>
            <select
                id={id}
                name={props.name}
                value={props.value}
                disabled={props.disabled}
                aria-invalid={props.error ? 'true' : undefined}
                aria-describedby={describedBy}
                onChange={(event) => props.onChange(event.currentTarget.value)}
            >
                {props.options.map((option) => (
                    <option key={option.value} value={option.value}>
                        {option.label}
                    </option>
                ))}
            </select>
            {props.hint ? (
                <p id={hintId} class="field-hint">
                    {props.hint}
                </p>
            ) : null}
            <ErrorText id={errorId} error={props.error} />
        </div>
    );
}
