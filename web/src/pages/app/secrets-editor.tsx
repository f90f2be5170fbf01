import type { TargetedEvent } from 'preact';
import { useId, useState } from 'preact/hooks';

import { api, ApiError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';

type SecretKind = 'password' | 'hex16' | 'hex32';

const KINDS: Array<{ kind: SecretKind; label: string }> = [
    { kind: 'password', label: 'password (24 characters)' },
    { kind: 'hex16', label: '16 random bytes, hexadecimal' },
    { kind: 'hex32', label: '32 random bytes, hexadecimal' },
];

export interface SecretRow {
    name: string;
    value: string;
    /** Saved already: its name stays (the draft keeps every saved secret). */
    saved: boolean;
}

/** `${NAME}` and `${NAME:?message}` in the compose file: variables without a default, which need a value. */
export function variablesNeeded(compose: string): string[] {
    const names = new Set<string>();
    for (const match of compose.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)(:?\?[^}]*)?\}/g)) {
        if (match[1]) {
            names.add(match[1]);
        }
    }

    return [...names];
}

export function secretRows(secrets: Record<string, string>, compose: string): SecretRow[] {
    const rows = Object.entries(secrets).map(([name, value]) => ({ name, value, saved: true }));
    const missing = variablesNeeded(compose).filter((name) => !(name in secrets));
    return [...rows, ...missing.map((name) => ({ name, value: '', saved: false }))];
}

export function secretsPayload(rows: SecretRow[]): Record<string, string> {
    return Object.fromEntries(rows.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.value]));
}

function SecretRowEditor(props: { row: SecretRow; index: number; onChange: (row: SecretRow | null) => void }) {
    const id = `secret-${useId()}`;
    const [shown, setShown] = useState(false);
    const [kind, setKind] = useState<SecretKind>('password');
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const { row } = props;
    const label = row.name || `secret ${props.index + 1}`;
    const valueInput = {
        id: `${id}-value`,
        value: row.value,
        autocomplete: 'off',
        spellcheck: false,
        onInput: (event: TargetedEvent<HTMLInputElement>) => props.onChange({ ...row, value: event.currentTarget.value }),
    };
    const generate = async () => {
        setError(undefined);
        try {
            const { value } = await api.get<{ value: string }>(`/api/secrets/generate?kind=${kind}`);
            props.onChange({ ...row, value });
        } catch (failure) {
            setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
        }
    };

    return (
        <li class="secret-row">
            <div class="field">
                <label for={`${id}-name`}>Name</label>
                <input
                    id={`${id}-name`}
                    type="text"
                    value={row.name}
                    readOnly={row.saved}
                    spellcheck={false}
                    pattern="[A-Z_][A-Z0-9_]*"
                    onInput={(event) => props.onChange({ ...row, name: event.currentTarget.value.toUpperCase() })}
                />
            </div>
            <div class="field">
                <label for={`${id}-value`}>Value of {label}</label>
                {shown ? <input type="text" {...valueInput} /> : <input type="password" {...valueInput} />}
            </div>
            <Button variant="link" onClick={() => setShown(!shown)} aria-label={`${shown ? 'Hide' : 'Show'} ${label}`}>
                {shown ? 'Hide' : 'Show'}
            </Button>
            <div class="field">
                <label for={`${id}-kind`}>Kind to generate for {label}</label>
                <select id={`${id}-kind`} value={kind} onChange={(event) => setKind(event.currentTarget.value as SecretKind)}>
                    {KINDS.map((option) => (
                        <option key={option.kind} value={option.kind}>
                            {option.label}
                        </option>
                    ))}
                </select>
            </div>
            <Button onClick={() => void generate()} aria-label={`Generate ${label}`}>
                Generate
            </Button>
            {row.saved ? null : (
                <Button variant="link" onClick={() => props.onChange(null)} aria-label={`Remove ${label}`}>
                    Remove
                </Button>
            )}
            <ErrorText error={error} />
        </li>
    );
}

/** The app's secrets: the values its compose file's `${VAR}`s take, written to its secrets file (0600). */
export function SecretsEditor(props: { rows: SecretRow[]; onChange: (rows: SecretRow[]) => void }) {
    const change = (index: number, row: SecretRow | null) =>
        props.onChange(props.rows.flatMap((old, at) => (at !== index ? [old] : row ? [row] : [])));
    return (
        <div class="secrets">
            {props.rows.length === 0 ? <p>No secrets yet: the compose file uses no variable without a default.</p> : null}
            <ul class="secret-list">
                {props.rows.map((row, index) => (
                    <SecretRowEditor key={index} row={row} index={index} onChange={(next) => change(index, next)} />
                ))}
            </ul>
            <Button onClick={() => props.onChange([...props.rows, { name: '', value: '', saved: false }])}>Add a secret</Button>
        </div>
    );
}
