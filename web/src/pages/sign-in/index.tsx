import type { TargetedSubmitEvent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { type ApiError, type SessionUser, api, setSessionUser, useApi, useSession } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { navigate, safeNext, useLocation } from '../../router.tsx';
import type { SetupStatus } from '../setup/index.tsx';

interface LoginAnswer {
    mfaRequired: boolean;
    user?: SessionUser;
}

export function SignInPage() {
    usePageTitle('Sign in');
    const location = useLocation();
    const next = safeNext(location.search.get('next'));
    const oidcFailed = location.search.get('signin') === 'failed';
    const status = useApi<SetupStatus>('/api/setup/status');
    const session = useSession();
    const [email, setEmail] = useState('');
    const [password, setPassword] = useState('');
    const [error, setError] = useState<string | undefined>(undefined);
    const [busy, setBusy] = useState(false);

    useEffect(() => {
        if (status.data?.needsSetup) {
            navigate('/setup', { replace: true });
        }
    }, [status.data]);

    useEffect(() => {
        if (session.user) {
            navigate(next, { replace: true });
        }
    }, [session.user]);

    const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setError(undefined);
        setBusy(true);
        try {
            const answer = await api.post<LoginAnswer>('/api/auth/login', { email: email.trim(), password });
            if (answer.mfaRequired) {
                navigate(`/sign-in/mfa?next=${encodeURIComponent(next)}`);
                return;
            }

            if (answer.user) {
                setSessionUser(answer.user);
            }

            navigate(next, { replace: true });
        } catch (failure) {
            setError((failure as ApiError).message);
            setBusy(false);
        }
    };

    return (
        <div class="public-card">
            <h1>Sign in</h1>
            {oidcFailed ? (
                <ErrorText error="Sign-in through the identity provider failed. Ask an administrator, or sign in with your password." />
            ) : null}
            <form class="form" onSubmit={(event) => void submit(event)}>
                <Field
                    label="E-mail"
                    name="email"
                    type="email"
                    value={email}
                    onInput={setEmail}
                    required
                    autocomplete="username"
                    autoFocus
                />
                <Field
                    label="Password"
                    name="password"
                    type="password"
                    value={password}
                    onInput={setPassword}
                    required
                    autocomplete="current-password"
                />
                <ErrorText error={error} />
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Sign in
                    </Button>
                </div>
            </form>
            {status.data?.oidcEnabled ? (
                <div class="oidc-sign-in">
                    <p class="divider">
                        <span>or</span>
                    </p>
                    {/* A full navigation: the server redirects to the identity provider. */}
                    <a class="button button-secondary button-block" href="/api/auth/oidc/start">
                        Sign in with the identity provider
                    </a>
                </div>
            ) : null}
        </div>
    );
}
