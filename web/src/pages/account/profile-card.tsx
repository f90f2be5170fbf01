import { useState } from 'preact/hooks';
import type { TargetedSubmitEvent } from 'preact';

import { type SessionUser, api, reloadSession } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { type FormError, errorFor, formError } from './form-error.ts';

/** The display name; the e-mail address is the sign-in name, which only shows here. */
export function ProfileCard(props: { user: SessionUser }) {
    const [name, setName] = useState(props.user.name);
    const { busy, error, submit } = useSubmit<FormError>((failure) => formError(failure, ['name']));
    const [saved, setSaved] = useState(false);

    const save = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setSaved(false);
        await submit(async () => {
            await api.put('/api/account/profile', { name });
            setSaved(true);
            await reloadSession();
        });
    };

    return (
        <Card title="Profile">
            <form class="form account-form" onSubmit={(event) => void save(event)}>
                <Field
                    label="E-mail address"
                    name="email"
                    type="email"
                    value={props.user.email}
                    onInput={() => undefined}
                    readOnly
                    hint="You sign in with this address; it cannot be changed."
                />
                <Field
                    label="Name"
                    name="name"
                    value={name}
                    onInput={setName}
                    required
                    maxLength={255}
                    autocomplete="name"
                    error={errorFor(error, 'name')}
                />
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Save profile
                    </Button>
                    <p class="form-status" role="status">
                        {saved ? 'Profile saved.' : ''}
                    </p>
                </div>
                <ErrorText error={errorFor(error)} />
            </form>
        </Card>
    );
}
