import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';

import { type ApiError, type SessionUser, api, setSessionUser, signOut } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { navigate, safeNext, useLocation } from '../../router.tsx';

/** The second factor: a code from the authenticator app, or one of the recovery codes. */
export function MfaPage() {
    usePageTitle('Two-factor code');
    const location = useLocation();
    const next = safeNext(location.search.get('next'));
    const [code, setCode] = useState('');
    const [error, setError] = useState<string | undefined>(undefined);
    const [busy, setBusy] = useState(false);

    const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setError(undefined);
        setBusy(true);
        try {
            const { user } = await api.post<{ user: SessionUser }>('/api/auth/mfa', { code: code.replace(/\s+/g, '') });
            setSessionUser(user);
            navigate(next, { replace: true });
        } catch (failure) {
            const apiError = failure as ApiError;
            // No sign-in waits for a code any more (it expired, or the page was opened directly): start again.
            setError(
                apiError.message === 'no sign-in is waiting for a code' ? 'This sign-in has expired; sign in again.' : apiError.message,
            );
            setBusy(false);
        }
    };
    const cancel = async () => {
        await signOut().catch(() => undefined);
        navigate('/sign-in', { replace: true });
    };

    return (
        <div class="public-card">
            <h1>Two-factor code</h1>
            <p>Enter the six-digit code from your authenticator app, or one of your recovery codes.</p>
            <form class="form" onSubmit={(event) => void submit(event)}>
                <Field
                    label="Code"
                    name="code"
                    value={code}
                    onInput={setCode}
                    required
                    autocomplete="one-time-code"
                    inputMode="text"
                    spellcheck={false}
                    maxLength={32}
                    autoFocus
                    error={error}
                />
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Verify
                    </Button>
                    <Button variant="link" onClick={() => void cancel()}>
                        Cancel
                    </Button>
                </div>
            </form>
        </div>
    );
}
