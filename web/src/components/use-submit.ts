import { useState } from 'preact/hooks';

export interface Submission<E> {
    busy: boolean;
    error: E | undefined;
    setError: (error: E | undefined) => void;
    /** Runs `work` with the form busy and its last error cleared; a failure becomes the error `toError` makes of it. */
    submit(work: () => Promise<void>): Promise<void>;
}

/** The busy flag and the error of a form that sends something, handled once for every form. */
export function useSubmit<E>(toError: (failure: unknown) => E): Submission<E> {
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<E | undefined>(undefined);
    const submit = async (work: () => Promise<void>) => {
        setBusy(true);
        setError(undefined);
        try {
            await work();
        } catch (failure) {
            setError(toError(failure));
        } finally {
            setBusy(false);
        }
    };
    return { busy, error, setError, submit };
}
