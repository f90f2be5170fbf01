import type { TargetedSubmitEvent } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { type ApiError, type SessionUser, api, setSessionUser, useApi } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { navigate } from '../../router.tsx';

export interface SetupStatus {
    needsSetup: boolean;
    oidcEnabled: boolean;
    /** Where the setup token waits, while setup is needed. */
    tokenFile?: string;
}

const MIN_PASSWORD_LENGTH = 10;

interface SetupForm {
    token: string;
    email: string;
    name: string;
    password: string;
    issuer: string;
    clientId: string;
    clientSecret: string;
}

type FieldName = keyof SetupForm;

/** Which field an error of the API is about, so it is shown next to it; undefined: next to the button. */
function fieldOfError(message: string): FieldName | undefined {
    const lower = message.toLowerCase();
    if (lower.includes('token')) {
        return 'token';
    }

    if (lower.includes('password')) {
        return 'password';
    }

    if (lower.includes('e-mail') || lower.includes('email')) {
        return 'email';
    }

    if (lower.includes('name')) {
        return 'name';
    }

    return lower.includes('issuer') ? 'issuer' : undefined;
}

function payloadOf(form: SetupForm) {
    const withOidc = form.issuer.trim() !== '' && form.clientId.trim() !== '';
    return {
        token: form.token.trim(),
        email: form.email.trim(),
        name: form.name.trim(),
        password: form.password,
        oidc: withOidc
            ? { issuer: form.issuer.trim(), clientId: form.clientId.trim(), clientSecret: form.clientSecret || undefined }
            : undefined,
    };
}

function checkForm(form: SetupForm): Partial<Record<FieldName, string>> {
    const problems: Partial<Record<FieldName, string>> = {};
    if (form.password.length < MIN_PASSWORD_LENGTH) {
        problems.password = `The password needs at least ${MIN_PASSWORD_LENGTH} characters.`;
    }

    if ((form.issuer.trim() === '') !== (form.clientId.trim() === '')) {
        problems[form.issuer.trim() === '' ? 'issuer' : 'clientId'] = 'Give both the issuer and the client ID, or neither.';
    }

    return problems;
}

/** First run: the setup token from the server's log (or the file the page names) creates the first administrator. */
export function SetupPage() {
    usePageTitle('Set up Gatehouse');
    const status = useApi<SetupStatus>('/api/setup/status');
    const [form, setForm] = useState<SetupForm>({
        token: '',
        email: '',
        name: '',
        password: '',
        issuer: '',
        clientId: '',
        clientSecret: '',
    });
    const [problems, setProblems] = useState<Partial<Record<FieldName, string>>>({});
    const [formError, setFormError] = useState<string | undefined>(undefined);
    const [busy, setBusy] = useState(false);

    useEffect(() => {
        if (status.data && !status.data.needsSetup) {
            navigate('/sign-in', { replace: true });
        }
    }, [status.data]);

    const set = (name: FieldName) => (value: string) => setForm((current) => ({ ...current, [name]: value }));

    const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        const found = checkForm(form);
        setProblems(found);
        setFormError(undefined);
        if (Object.keys(found).length > 0) {
            return;
        }

        setBusy(true);
        try {
            const payload = payloadOf(form);
            await api.post('/api/setup', payload);
            const { user } = await api.post<{ user: SessionUser }>('/api/auth/login', { email: payload.email, password: payload.password });
            setSessionUser(user);
            navigate('/', { replace: true });
        } catch (failure) {
            const message = (failure as ApiError).message;
            const field = fieldOfError(message);
            if (field) {
                setProblems({ [field]: message });
            } else {
                setFormError(message);
            }

            setBusy(false);
        }
    };

    if (status.loading && !status.data) {
        return <Spinner />;
    }

    return (
        <div class="public-card">
            <h1>Set up Gatehouse</h1>
            <ErrorText error={status.error} />
            <p>
                Create the first administrator. The setup token was printed in the server's log at its first start and written to{' '}
                <code>{status.data?.tokenFile ?? 'DATA_DIR/setup-token'}</code>.
            </p>
            <form class="form" onSubmit={(event) => void submit(event)} noValidate>
                <Field
                    label="Setup token"
                    name="token"
                    value={form.token}
                    onInput={set('token')}
                    error={problems.token}
                    required
                    autocomplete="off"
                    spellcheck={false}
                />
                <Field
                    label="E-mail"
                    name="email"
                    type="email"
                    value={form.email}
                    onInput={set('email')}
                    error={problems.email}
                    required
                    autocomplete="email"
                />
                <Field
                    label="Name"
                    name="name"
                    value={form.name}
                    onInput={set('name')}
                    error={problems.name}
                    required
                    autocomplete="name"
                />
                <Field
                    label="Password"
                    name="password"
                    type="password"
                    value={form.password}
                    onInput={set('password')}
                    error={problems.password}
                    hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
                    required
                    autocomplete="new-password"
                />
                <details class="optional-section">
                    <summary>Sign-in through an OpenID Connect provider (optional)</summary>
                    <p class="field-hint">
                        Register Gatehouse at the provider with the redirect URI{' '}
                        <code>{`${window.location.origin}/api/auth/oidc/callback`}</code> (or your PUBLIC_URL's). People then sign in there
                        with a verified e-mail of an existing user.
                    </p>
                    <Field
                        label="Issuer URL"
                        name="issuer"
                        type="url"
                        value={form.issuer}
                        onInput={set('issuer')}
                        error={problems.issuer}
                        autocomplete="off"
                    />
                    <Field
                        label="Client ID"
                        name="clientId"
                        value={form.clientId}
                        onInput={set('clientId')}
                        error={problems.clientId}
                        autocomplete="off"
                    />
                    <Field
                        label="Client secret"
                        name="clientSecret"
                        type="password"
                        value={form.clientSecret}
                        onInput={set('clientSecret')}
                        error={problems.clientSecret}
                        autocomplete="off"
                        hint="Leave empty for a public client."
                    />
                </details>
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Create the administrator
                    </Button>
                </div>
                <ErrorText error={formError} />
            </form>
        </div>
    );
}
