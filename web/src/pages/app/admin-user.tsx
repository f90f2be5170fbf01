import { useEffect, useId, useState } from 'preact/hooks';

import { api, type ApiError, asApiError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import type { DirectoryUser } from './types.ts';

const SEARCH_DELAY_MS = 300;

/** The app's admin account: a user of the identity provider, found by name or e-mail (`GET /api/idp/users?q=`). */
export function AdminUserField(props: { value: string; onChange: (username: string) => void; disabled?: boolean }) {
    const id = `admin-user-${useId()}`;
    const [query, setQuery] = useState(props.value);
    // The name last picked from the results (or saved): no need to search for it again.
    const [picked, setPicked] = useState(props.value);
    const [found, setFound] = useState<DirectoryUser[]>([]);
    const [error, setError] = useState<ApiError | undefined>(undefined);

    useEffect(() => {
        const wanted = query.trim();
        if (wanted === '' || wanted === picked) {
            setFound([]);
            return undefined;
        }

        let current = true;
        const timer = setTimeout(() => {
            api.get<DirectoryUser[]>(`/api/idp/users?q=${encodeURIComponent(wanted)}`).then(
                (users) => {
                    if (current) {
                        setFound(users);
                        setError(undefined);
                    }
                },
                (failure: unknown) => current && setError(asApiError(failure)),
            );
        }, SEARCH_DELAY_MS);
        return () => {
            current = false;
            clearTimeout(timer);
        };
    }, [query]);

    return (
        <div class="field admin-user">
            <label for={id}>Admin account in the app (a user of the identity provider)</label>
            <input
                id={id}
                type="search"
                value={query}
                disabled={props.disabled}
                autocomplete="off"
                aria-describedby={`${id}-hint`}
                onInput={(event) => {
                    setQuery(event.currentTarget.value);
                    props.onChange(event.currentTarget.value.trim());
                }}
            />
            <p id={`${id}-hint`} class="field-hint">
                {props.value
                    ? `The app's admin: ${props.value}.`
                    : 'Empty: the provider user whose e-mail is yours, when the recipe needs one.'}
            </p>
            <ErrorText error={error} />
            {found.length > 0 ? (
                <ul class="user-results" aria-label="Matching users">
                    {found.map((user) => (
                        <li key={user.pk}>
                            <Button
                                variant="link"
                                onClick={() => {
                                    setQuery(user.username);
                                    setPicked(user.username);
                                    props.onChange(user.username);
                                    setFound([]);
                                }}
                            >
                                Use {user.username}
                            </Button>{' '}
                            {user.name} {user.email ? `<${user.email}>` : ''} {user.active ? '' : '(inactive)'}
                        </li>
                    ))}
                </ul>
            ) : null}
        </div>
    );
}
