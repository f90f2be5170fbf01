import { useEffect, useState } from 'preact/hooks';

import { api, type ApiError, asApiError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import type { Availability } from '../app/types.ts';

const CHECK_DELAY_MS = 400;

const CHECK_NAMES: Record<keyof Availability['checks'], string> = {
    name: 'Apps',
    dns: 'DNS',
    folder: 'Folder',
    site: 'nginx site',
    container: 'Containers',
    certificate: 'Certificate',
};

function mark(ok: boolean | null): string {
    return ok === true ? 'ok' : ok === false ? 'not ok' : 'not checked';
}

/** Whether the name is free everywhere an app would use it, asked as the person types (`POST /api/apps/check`). */
function useAvailability(name: string): { availability: Availability | undefined; checking: boolean; error: ApiError | undefined } {
    const [availability, setAvailability] = useState<Availability | undefined>(undefined);
    const [checking, setChecking] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    useEffect(() => {
        const wanted = name.trim();
        setAvailability(undefined);
        setError(undefined);
        if (wanted === '') {
            setChecking(false);
            return undefined;
        }

        let current = true;
        setChecking(true);
        const timer = setTimeout(() => {
            api.post<Availability>('/api/apps/check', { name: wanted })
                .then(
                    (answer) => current && setAvailability(answer),
                    (failure: unknown) => current && setError(asApiError(failure)),
                )
                .finally(() => current && setChecking(false));
        }, CHECK_DELAY_MS);
        return () => {
            current = false;
            clearTimeout(timer);
        };
    }, [name]);
    return { availability, checking, error };
}

export interface NameStepProps {
    name: string;
    title: string;
    onChange: (patch: { name?: string; title?: string }) => void;
    onNext: () => void;
}

export function NameStep(props: NameStepProps) {
    const { availability, checking, error } = useAvailability(props.name);
    const blocked = !availability?.available || availability.name !== props.name.trim();
    return (
        <form
            class="wizard-form"
            onSubmit={(event) => {
                event.preventDefault();
                if (!blocked) {
                    props.onNext();
                }
            }}
        >
            <Field
                label="Name"
                value={props.name}
                required
                autoFocus
                spellcheck={false}
                autocomplete="off"
                maxLength={63}
                hint="Lower-case letters, digits and hyphens: it names the app's domain, folder, site and containers."
                error={error ?? (availability && availability.checks.name.ok === false ? availability.checks.name.reason : undefined)}
                onInput={(name) => props.onChange({ name: name.toLowerCase() })}
            />
            <div class="availability" aria-live="polite">
                {checking ? <p>Checking whether {props.name.trim()} is free…</p> : null}
                {availability ? (
                    <>
                        <p class={availability.available ? 'availability-ok' : 'availability-taken'}>
                            {availability.available
                                ? `${availability.name} is free: the app will live at ${availability.domain}.`
                                : `${availability.name} cannot be used.`}
                        </p>
                        <ul class="availability-checks" aria-label="Where the name was checked">
                            {Object.entries(availability.checks).map(([key, check]) => (
                                <li key={key} class={`check check-${String(check.ok)}`}>
                                    <strong>{CHECK_NAMES[key as keyof Availability['checks']]}</strong>: {mark(check.ok)} ({check.reason})
                                </li>
                            ))}
                        </ul>
                        <p class="field-hint">DNS is advice: the record can be added after the draft is made.</p>
                    </>
                ) : null}
            </div>
            <Field label="Title (optional)" value={props.title} maxLength={255} onInput={(title) => props.onChange({ title })} />
            <Button type="submit" variant="primary" disabled={blocked}>
                Next: the image
            </Button>
        </form>
    );
}
