import type { ApiError } from '../api.ts';
import { withoutFieldName } from '../words.ts';

export interface ErrorTextProps {
    /** The API's `{error}` text (an ApiError's message), or a message of the page's own. */
    error: ApiError | Error | string | undefined | null;
    id?: string;
    class?: string;
}

/** An error shown next to what caused it; announced when it appears. */
export function ErrorText(props: ErrorTextProps) {
    const raw = typeof props.error === 'string' ? props.error : props.error?.message;
    const message = raw ? withoutFieldName(raw) : raw;
    if (!message) {
        return null;
    }

    return (
        <p id={props.id} class={['error-text', props.class].filter(Boolean).join(' ')} role="alert">
            {message}
        </p>
    );
}
