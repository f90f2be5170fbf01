import type { ComponentChildren, TargetedEvent } from 'preact';
import { useId } from 'preact/hooks';

import { ErrorText } from './ErrorText.tsx';

export interface FieldProps {
    label: ComponentChildren;
    value: string;
    onInput: (value: string) => void;
    name?: string;
    id?: string;
    type?: 'text' | 'email' | 'password' | 'url' | 'number' | 'search' | 'tel';
    /** A multi-line field instead of a one-line input. */
    multiline?: boolean;
    rows?: number;
    hint?: ComponentChildren;
    error?: string | Error | null;
    required?: boolean;
    disabled?: boolean;
    readOnly?: boolean;
    autoFocus?: boolean;
    autocomplete?: string;
    inputMode?: 'text' | 'numeric' | 'email' | 'url' | 'search' | 'tel';
    placeholder?: string;
    pattern?: string;
    minLength?: number;
    maxLength?: number;
    spellcheck?: boolean;
    class?: string;
    onBlur?: () => void;
}

/** A label, its input, an optional hint and the error that concerns this field, tied together for screen readers. */
export function Field(props: FieldProps) {
    const generatedId = useId();
    const id = props.id ?? `field-${generatedId}`;
    const hintId = `${id}-hint`;
    const errorId = `${id}-error`;
    const hasError = props.error !== undefined && props.error !== null && props.error !== '';
    const describedBy = [props.hint ? hintId : undefined, hasError ? errorId : undefined].filter(Boolean).join(' ') || undefined;
    const shared = {
        id,
        name: props.name,
        value: props.value,
        required: props.required,
        disabled: props.disabled,
        readOnly: props.readOnly,
        autoFocus: props.autoFocus,
        placeholder: props.placeholder,
        minLength: props.minLength,
        maxLength: props.maxLength,
        spellcheck: props.spellcheck,
        'aria-invalid': hasError ? ('true' as const) : undefined,
        'aria-describedby': describedBy,
        onBlur: props.onBlur,
    };
    const onInput = (event: TargetedEvent<HTMLInputElement | HTMLTextAreaElement>) => props.onInput(event.currentTarget.value);

    return (
        <div class={['field', hasError ? 'field-invalid' : undefined, props.class].filter(Boolean).join(' ')}>
            <label for={id}>
                {props.label}
                {props.required ? <span class="required-mark"> (required)</span> : null}
            </label>
            {props.multiline ? (
                <textarea {...shared} rows={props.rows ?? 4} onInput={onInput} />
            ) : (
                <input
                    {...shared}
                    // Preact types each input type's attributes apart; a type chosen at run time is given as one of them.
                    type={(props.type ?? 'text') as 'text'}
                    autocomplete={props.autocomplete}
                    inputMode={props.inputMode}
                    pattern={props.pattern}
                    onInput={onInput}
                />
            )}
            {props.hint ? (
                <p id={hintId} class="field-hint">
                    {props.hint}
                </p>
            ) : null}
            <ErrorText id={errorId} error={hasError ? props.error : undefined} />
        </div>
    );
}
