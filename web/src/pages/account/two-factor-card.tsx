import { useRef, useState } from 'preact/hooks';
import type { JSX, TargetedSubmitEvent } from 'preact';

import { api, reloadSession } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { CopyButton } from '../../components/CopyButton.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { type FormError, errorFor, formError } from './form-error.ts';

/** POST /api/account/totp/setup: the pending secret, its otpauth URI and the URI as a QR code (a PNG data URL). */
interface TotpSetup {
    secret: string;
    otpauthUri: string;
    qrCode: string;
}

/** Two factors: set up (QR code, then a code to confirm), the recovery codes shown once, or turned off. */
export function TwoFactorCard(props: { enabled: boolean }) {
    const [setup, setSetup] = useState<TotpSetup | undefined>(undefined);
    const [recoveryCodes, setRecoveryCodes] = useState<string[] | undefined>(undefined);

    let body: JSX.Element;
    if (recoveryCodes) {
        body = <RecoveryCodes codes={recoveryCodes} onDone={() => setRecoveryCodes(undefined)} />;
    } else if (setup) {
        body = (
            <ConfirmSetup
                setup={setup}
                onCancel={() => setSetup(undefined)}
                onEnabled={(codes) => {
                    setSetup(undefined);
                    setRecoveryCodes(codes);
                }}
            />
        );
    } else if (props.enabled) {
        body = <TwoFactorsOn onRecoveryCodes={setRecoveryCodes} />;
    } else {
        body = <BeginSetup onBegun={setSetup} />;
    }

    return <Card title="Two factors">{body}</Card>;
}

function BeginSetup(props: { onBegun: (setup: TotpSetup) => void }) {
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<Error | undefined>(undefined);
    const begin = async () => {
        setBusy(true);
        setError(undefined);
        try {
            props.onBegun(await api.post<TotpSetup>('/api/account/totp/setup'));
        } catch (failure) {
            setError(failure as Error);
            setBusy(false);
        }
    };
    return (
        <>
            <p>
                Two factors are <strong>off</strong>. With them on, signing in also asks for a code from an authenticator app on your phone.
            </p>
            <div class="form-actions">
                <Button variant="primary" busy={busy} onClick={() => void begin()}>
                    Set up two factors
                </Button>
            </div>
            <ErrorText error={error} />
        </>
    );
}

function ConfirmSetup(props: { setup: TotpSetup; onCancel: () => void; onEnabled: (codes: string[]) => void }) {
    const [code, setCode] = useState('');
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<FormError | undefined>(undefined);
    const enable = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
            const { recoveryCodes } = await api.post<{ recoveryCodes: string[] }>('/api/account/totp/enable', { code: code.trim() });
            props.onEnabled(recoveryCodes);
            await reloadSession();
        } catch (failure) {
            setError(formError(failure, ['code']));
            setBusy(false);
        }
    };
    return (
        <form class="form account-form" onSubmit={(event) => void enable(event)}>
            <ol class="totp-steps">
                <li>
                    <p>Scan this QR code with your authenticator app:</p>
                    <img class="totp-qr" src={props.setup.qrCode} alt="QR code of the two-factor key for your authenticator app" />
                    <p>
                        Or type this key into the app: <code class="totp-secret">{props.setup.secret}</code>
                    </p>
                    <p>
                        On the phone itself? <a href={props.setup.otpauthUri}>Open the key in your authenticator app</a>.
                    </p>
                </li>
                <li>
                    <Field
                        label="Code from the app"
                        name="code"
                        value={code}
                        onInput={setCode}
                        required
                        autocomplete="one-time-code"
                        inputMode="numeric"
                        maxLength={32}
                        error={errorFor(error, 'code')}
                    />
                </li>
            </ol>
            <div class="form-actions">
                <Button type="submit" variant="primary" busy={busy}>
                    Turn on two factors
                </Button>
                <Button onClick={props.onCancel}>Cancel</Button>
            </div>
            <ErrorText error={errorFor(error)} />
        </form>
    );
}

/** Shown once, right after two factors are turned on: the API never gives them again. */
function RecoveryCodes(props: { codes: string[]; onDone: () => void }) {
    return (
        <div class="recovery-codes">
            <p role="status">Two factors are on.</p>
            <h3>Recovery codes</h3>
            <p>Each code signs you in once if you lose your phone. Keep them somewhere safe now: they are shown only this once.</p>
            <ul class="recovery-code-list" aria-label="Recovery codes">
                {props.codes.map((code) => (
                    <li key={code}>
                        <code>{code}</code>
                    </li>
                ))}
            </ul>
            <div class="form-actions">
                <CopyButton value={props.codes.join('\n')} label="the recovery codes" />
                <Button variant="primary" onClick={props.onDone}>
                    I have saved them
                </Button>
            </div>
        </div>
    );
}

type Proof = 'password' | 'code';

type Intent = 'recovery-codes' | 'disable';

/** With two factors on, the password or a current code confirms either new recovery codes or turning them off. */
function TwoFactorsOn(props: { onRecoveryCodes: (codes: string[]) => void }) {
    const [proof, setProof] = useState<Proof>('password');
    const [value, setValue] = useState('');
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<FormError | undefined>(undefined);
    // Set by the button's click, which comes before the form's submit event.
    const intent = useRef<Intent>('recovery-codes');
    const submit = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setBusy(true);
        setError(undefined);
        const body = proof === 'password' ? { password: value } : { code: value.trim() };
        try {
            if (intent.current === 'recovery-codes') {
                const { recoveryCodes } = await api.post<{ recoveryCodes: string[] }>('/api/account/totp/recovery-codes', body);
                setValue('');
                props.onRecoveryCodes(recoveryCodes);
                return;
            }

            await api.post('/api/account/totp/disable', body);
            setValue('');
            await reloadSession();
        } catch (failure) {
            setError(formError(failure, ['password', 'code']));
        } finally {
            setBusy(false);
        }
    };
    const choose = (next: Proof) => {
        setProof(next);
        setValue('');
        setError(undefined);
    };
    return (
        <form class="form account-form" onSubmit={(event) => void submit(event)}>
            <p>
                Two factors are <strong>on</strong>: signing in asks for a code from your authenticator app.
            </p>
            <p>Lost or used up your recovery codes? Make new ones: the old ones stop working.</p>
            <fieldset class="choice-group">
                <legend>Confirm with</legend>
                <label>
                    <input type="radio" name="proof" checked={proof === 'password'} onChange={() => choose('password')} /> your password
                </label>
                <label>
                    <input type="radio" name="proof" checked={proof === 'code'} onChange={() => choose('code')} /> a code from the app
                </label>
            </fieldset>
            <Field
                label={proof === 'password' ? 'Password' : 'Code from the app'}
                name={proof}
                type={proof === 'password' ? 'password' : 'text'}
                value={value}
                onInput={setValue}
                required
                autocomplete={proof === 'password' ? 'current-password' : 'one-time-code'}
                inputMode={proof === 'password' ? undefined : 'numeric'}
                error={error?.message}
            />
            <div class="form-actions">
                <Button type="submit" busy={busy} onClick={() => (intent.current = 'recovery-codes')}>
                    Make new recovery codes
                </Button>
                <Button type="submit" variant="danger" busy={busy} onClick={() => (intent.current = 'disable')}>
                    Turn off two factors
                </Button>
            </div>
        </form>
    );
}
