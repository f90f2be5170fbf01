import type { TargetedSubmitEvent } from 'preact';
import { useState } from 'preact/hooks';

import { type Role, api, useApi, useSession } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { useSubmit } from '../../components/use-submit.ts';
import { dateTime } from '../../format/time.ts';
import { type FormError, errorFor, formError } from '../account/form-error.ts';
import { SelectField } from './select-field.tsx';
import type { AdminUser } from './types.ts';

const ROLES: { value: Role; label: string }[] = [
    { value: 'viewer', label: 'Viewer: sees everything, changes nothing' },
    { value: 'editor', label: 'Editor: deploys and changes apps' },
    { value: 'admin', label: 'Administrator: also users and settings' },
];

const ROLE_NAMES: Record<Role, string> = { viewer: 'Viewer', editor: 'Editor', admin: 'Administrator' };
const ROLE_ARTICLES: Record<Role, string> = { viewer: 'a viewer', editor: 'an editor', admin: 'an administrator' };

/** Users: the list with each one's role, state and actions, and a form to add one. */
export function UsersSection() {
    const { data, error, loading, reload } = useApi<{ users: AdminUser[] }>('/api/admin/users');
    return (
        <>
            <Card title="Users">
                {loading && !data ? <Spinner /> : null}
                <ErrorText error={error} />
                {data ? <UserTable users={data.users} onChange={reload} /> : null}
            </Card>
            <NewUserCard onCreated={reload} />
        </>
    );
}

function UserTable(props: { users: AdminUser[]; onChange: () => void }) {
    const activeAdmins = props.users.filter((user) => user.role === 'admin' && !user.disabled).length;
    return (
        <div class="table-scroll">
            <table class="table admin-table users-table">
                <thead>
                    <tr>
                        <th scope="col">Name</th>
                        <th scope="col">E-mail</th>
                        <th scope="col">Role</th>
                        <th scope="col">State</th>
                        <th scope="col">Last sign-in</th>
                        <th scope="col">Actions</th>
                    </tr>
                </thead>
                <tbody>
                    {props.users.map((user) => (
                        <UserRow
                            key={user.id}
                            user={user}
                            lastAdmin={user.role === 'admin' && !user.disabled && activeAdmins === 1}
                            onChange={props.onChange}
                        />
                    ))}
                </tbody>
            </table>
        </div>
    );
}

/** A row's actions: the last active administrator can be neither disabled nor deleted, so neither is offered. */
function UserRow(props: { user: AdminUser; lastAdmin: boolean; onChange: () => void }) {
    const { user } = props;
    const session = useSession();
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<Error | undefined>(undefined);
    const [done, setDone] = useState('');
    const [confirmingDelete, setConfirmingDelete] = useState(false);
    const [settingPassword, setSettingPassword] = useState(false);
    const isSelf = session.user?.id === user.id;

    const act = async (work: () => Promise<unknown>, success = '') => {
        setBusy(true);
        setError(undefined);
        setDone('');
        try {
            await work();
            setConfirmingDelete(false);
            setSettingPassword(false);
            setDone(success);
            props.onChange();
        } catch (failure) {
            setError(failure as Error);
        } finally {
            setBusy(false);
        }
    };
    const update = (changes: Partial<Pick<AdminUser, 'role' | 'disabled'>> & { resetTotp?: boolean; password?: string }, success = '') =>
        void act(() => api.put(`/api/admin/users/${user.id}`, changes), success);

    return (
        <tr class={user.disabled ? 'user-disabled' : undefined}>
            <th scope="row">
                {user.name}
                {isSelf ? <span class="muted"> (you)</span> : null}
            </th>
            <td>{user.email}</td>
            <td>
                <label class="visually-hidden" for={`role-${user.id}`}>
                    Role of {user.email}
                </label>
                <select
                    id={`role-${user.id}`}
                    value={user.role}
                    disabled={busy}
                    onChange={(event) => {
                        const role = event.currentTarget.value as Role;
                        update({ role }, `Saved: ${user.email} is now ${ROLE_ARTICLES[role]}.`);
                    }}
                >
                    {ROLES.map((role) => (
                        <option key={role.value} value={role.value}>
                            {ROLE_NAMES[role.value]}
                        </option>
                    ))}
                </select>
            </td>
            <td>
                {user.disabled ? <Badge tone="bad">disabled</Badge> : <Badge tone="good">active</Badge>}{' '}
                {user.totpEnabled ? <Badge tone="info">two factors</Badge> : null}
            </td>
            <td>{user.lastLoginAt > 0 ? dateTime(new Date(user.lastLoginAt).toISOString()) : 'never'}</td>
            <td>
                <div class="row-actions">
                    {confirmingDelete ? (
                        <>
                            <span>Delete {user.email}?</span>
                            <Button variant="danger" busy={busy} onClick={() => void act(() => api.delete(`/api/admin/users/${user.id}`))}>
                                Delete for good
                            </Button>
                            <Button onClick={() => setConfirmingDelete(false)}>Keep</Button>
                        </>
                    ) : settingPassword ? (
                        <NewPasswordForm
                            email={user.email}
                            busy={busy}
                            onSet={(password) =>
                                update({ password }, `New password set for ${user.email}; their sessions were signed out.`)
                            }
                            onCancel={() => setSettingPassword(false)}
                        />
                    ) : (
                        <>
                            {props.lastAdmin ? null : (
                                <Button
                                    busy={busy}
                                    onClick={() => update({ disabled: !user.disabled })}
                                    aria-label={`${user.disabled ? 'Enable' : 'Disable'} ${user.email}`}
                                >
                                    {user.disabled ? 'Enable' : 'Disable'}
                                </Button>
                            )}
                            <Button onClick={() => setSettingPassword(true)} aria-label={`Set password for ${user.email}`}>
                                Set password
                            </Button>
                            {user.totpEnabled ? (
                                <Button
                                    busy={busy}
                                    onClick={() => update({ resetTotp: true })}
                                    aria-label={`Reset the two factors of ${user.email}`}
                                >
                                    Reset two factors
                                </Button>
                            ) : null}
                            {props.lastAdmin ? (
                                <span class="muted">The only active administrator: it cannot be disabled or deleted.</span>
                            ) : (
                                <Button
                                    variant="danger"
                                    disabled={busy}
                                    onClick={() => setConfirmingDelete(true)}
                                    aria-label={`Delete ${user.email}`}
                                >
                                    Delete
                                </Button>
                            )}
                        </>
                    )}
                </div>
                <p class="form-status" role="status">
                    {done}
                </p>
                <ErrorText error={error} />
            </td>
        </tr>
    );
}

/** The administrator's reset of someone's password: the API ends that user's sessions. */
function NewPasswordForm(props: { email: string; busy: boolean; onSet: (password: string) => void; onCancel: () => void }) {
    const [password, setPassword] = useState('');
    const submit = (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        props.onSet(password);
    };
    return (
        <form class="row-password" onSubmit={submit}>
            <Field
                label={`New password for ${props.email}`}
                name="password"
                type="password"
                value={password}
                onInput={setPassword}
                required
                autocomplete="new-password"
            />
            <Button type="submit" variant="primary" busy={props.busy}>
                Set password
            </Button>
            <Button onClick={props.onCancel}>Cancel</Button>
        </form>
    );
}

const NEW_USER_FIELDS = ['email', 'name', 'password', 'role'] as const;

function NewUserCard(props: { onCreated: () => void }) {
    const [email, setEmail] = useState('');
    const [name, setName] = useState('');
    const [password, setPassword] = useState('');
    const [role, setRole] = useState<Role>('viewer');
    const { busy, error, submit } = useSubmit<FormError>((failure) => {
        const found = formError(failure, NEW_USER_FIELDS);
        // "a user with this e-mail already exists" names no field in the API's words, but concerns this one.
        return found.field === undefined && /e-mail/.test(found.message) ? { ...found, field: 'email' } : found;
    });
    const [created, setCreated] = useState<string | undefined>(undefined);

    const create = async (event: TargetedSubmitEvent<HTMLFormElement>) => {
        event.preventDefault();
        setCreated(undefined);
        await submit(async () => {
            const answer = await api.post<{ user: AdminUser }>('/api/admin/users', { email, name, password, role });
            setCreated(`${answer.user.email} was added as ${ROLE_NAMES[answer.user.role].toLowerCase()}.`);
            setEmail('');
            setName('');
            setPassword('');
            setRole('viewer');
            props.onCreated();
        });
    };

    return (
        <Card title="Add a user">
            <form class="form admin-form" onSubmit={(event) => void create(event)}>
                <Field
                    label="E-mail address"
                    name="email"
                    type="email"
                    value={email}
                    onInput={setEmail}
                    required
                    autocomplete="off"
                    error={errorFor(error, 'email')}
                />
                <Field label="Name" name="name" value={name} onInput={setName} required error={errorFor(error, 'name')} />
                <Field
                    label="Password"
                    name="password"
                    type="password"
                    value={password}
                    onInput={setPassword}
                    required
                    autocomplete="new-password"
                    hint="Give it to the person; they can change it on their account page."
                    error={errorFor(error, 'password')}
                />
                <SelectField
                    label="Role"
                    name="role"
                    value={role}
                    options={ROLES}
                    onChange={(value) => setRole(value as Role)}
                    error={errorFor(error, 'role')}
                />
                <div class="form-actions">
                    <Button type="submit" variant="primary" busy={busy}>
                        Add user
                    </Button>
                    <p class="form-status" role="status">
                        {created ?? ''}
                    </p>
                </div>
                <ErrorText error={errorFor(error)} />
            </form>
        </Card>
    );
}
