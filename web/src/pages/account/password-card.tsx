import { useState } from 'preact/hooks';
import type { TargetedSubmitEvent } from 'preact';

import { api } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { type FormError, errorFor, formError } from './form-error.ts';

// The account service names the new password `password` in its own checks (its length).
const FIELDS = ['currentPassword', 'newPassword', 'password'] as const;

/** Changes the password; the API signs the user's other sessions out. */
export function PasswordCard() {
    const [currentPassword, setCurrentPassword] = useState('');
    const [newPassword, setNewPassword] = useState('');
    const [repeated, setRepeated] = useState('');
    const { busy, error, setError, submit } = useSubmit<FormError>((failure) => {
        const found = formError(failure, FIELDS);
        // "the current password is wrong" names no field in the API's words, but concerns only this one.
        return found.field === undefined && /current password/i.test(found.message) ? { ...found, field: 'currentPassword' } : found;
    });
    const [changed, setChanged] = useState(false);

    const change = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setChanged(false);
        if (newPassword !== repeated) {
            setError({ field: 'repeated', message: 'The two new passwords differ.' });
            return;
        }

        await submit(async () => {
            await api.post('/api/account/password', { currentPassword, newPassword });
            setCurrentPassword('');
            setNewPassword('');
            setRepeated('');
            setChanged(true);
        });
    };

    return (
        <Card title="Password">
            <form class="form account-form" onSubmit={(event) => void change(event)}>
                <Field
                    label="Current password"
                    name="currentPassword"
                    type="password"
                    value={currentPassword}
                    onInput={setCurrentPassword}
                    required
                    autocomplete="current-password"
                    error={errorFor(error, 'currentPassword')}
                />
                <Field
                    label="New password"
                    name="newPassword"
                    type="password"
                    value={newPassword}
                    onInput={setNewPassword}
                    required
                    autocomplete="new-password"
                    error={errorFor(error, 'newPassword') ?? errorFor(error, 'password')}
                />
                <Field
                    label="New password again"
                    name="repeatedPassword"
                    type="password"
                    value={repeated}
                    onInput={setRepeated}
                    required
                    autocomplete="new-password"
                    error={errorFor(error, 'repeated')}
                />
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Change password
                    </Button>
                    <p class="form-status" role="status">
                        {changed ? 'Password changed. Your other sessions were signed out.' : ''}
                    </p>
                </div>
                <ErrorText error={errorFor(error)} />
            </form>
        </Card>
    );
}
