import { useEffect, useState } from 'preact/hooks';

import { api, type ApiError, asApiError } from '../api.ts';
import type { FileCheck } from '../pages/app/types.ts';

const CHECK_DELAY_MS = 500;

export interface CheckState {
    result: FileCheck | undefined;
    checking: boolean;
    error: ApiError | undefined;
}

/**
 * Checks what is being edited once typing pauses; an answer about an older version is dropped. `payload` null:
 * nothing to check (a viewer, or nothing loaded yet).
 */
export function useCheck(path: string, payload: object | null): CheckState {
    const [state, setState] = useState<CheckState>({ result: undefined, checking: false, error: undefined });
    const key = payload === null ? null : JSON.stringify(payload);

    useEffect(() => {
        if (key === null) {
            return undefined;
        }

        let current = true;
        setState((previous) => ({ ...previous, checking: true }));
        const timer = setTimeout(() => {
            api.post<FileCheck>(path, JSON.parse(key) as unknown).then(
                (result) => current && setState({ result, checking: false, error: undefined }),
                (error: unknown) =>
                    current &&
                    setState({
                        result: undefined,
                        checking: false,
                        error: asApiError(error),
                    }),
            );
        }, CHECK_DELAY_MS);
        return () => {
            current = false;
            clearTimeout(timer);
        };
    }, [path, key]);

    return state;
}
