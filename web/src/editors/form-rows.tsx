import { useState } from 'preact/hooks';

import { Button } from '../components/Button.tsx';

interface Row {
    name: string;
    value: string;
    /** A value the person has not touched that was "no value" (`null`): kept as it was. */
    unset: boolean;
}

export interface KeyValueRowsProps {
    /** What one row is, for labels: "variable", "header". */
    noun: string;
    values: Record<string, string | null>;
    onChange: (values: Record<string, string | null>) => void;
    readOnly?: boolean;
    /** What an empty value without a name means, shown as the placeholder. */
    unsetPlaceholder?: string;
}

function toRecord(rows: Row[]): Record<string, string | null> {
    return Object.fromEntries(rows.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.unset ? null : row.value]));
}

/** Name and value pairs (environment, headers); rows without a name are left out of the value. */
export function KeyValueRows(props: KeyValueRowsProps) {
    const [rows, setRows] = useState<Row[]>(() =>
        Object.entries(props.values).map(([name, value]) => ({ name, value: value ?? '', unset: value === null })),
    );
    const update = (next: Row[]) => {
        setRows(next);
        props.onChange(toRecord(next));
    };
    const change = (index: number, patch: Partial<Row>) => update(rows.map((row, at) => (at === index ? { ...row, ...patch } : row)));

    return (
        <div class="rows">
            {rows.length === 0 ? <p class="rows-empty">No {props.noun}s.</p> : null}
            {rows.map((row, index) => (
                <div class="row" key={index}>
                    <input
                        type="text"
                        class="row-name"
                        aria-label={`Name of ${props.noun} ${index + 1}`}
                        value={row.name}
                        readOnly={props.readOnly}
                        spellcheck={false}
                        onInput={(event) => change(index, { name: event.currentTarget.value })}
                    />
                    <input
                        type="text"
                        class="row-value"
                        aria-label={`Value of ${props.noun} ${row.name || index + 1}`}
                        value={row.value}
                        placeholder={row.unset ? props.unsetPlaceholder : undefined}
                        readOnly={props.readOnly}
                        spellcheck={false}
                        onInput={(event) => change(index, { value: event.currentTarget.value, unset: false })}
                    />
                    {props.readOnly ? null : (
                        <Button
                            variant="link"
                            aria-label={`Remove ${props.noun} ${row.name || index + 1}`}
                            onClick={() => update(rows.filter((_row, at) => at !== index))}
                        >
                            Remove
                        </Button>
                    )}
                </div>
            ))}
            {props.readOnly ? null : (
                <Button onClick={() => update([...rows, { name: '', value: '', unset: false }])}>Add a {props.noun}</Button>
            )}
        </div>
    );
}

export type ListItem = string | number | Record<string, unknown>;

export interface ListRowsProps {
    noun: string;
    items: ListItem[];
    onChange: (items: ListItem[]) => void;
    readOnly?: boolean;
    placeholder?: string;
}

/** A list of short strings (ports, volumes, names); items in a long form are kept as they are and shown as such. */
export function ListRows(props: ListRowsProps) {
    const [items, setItems] = useState<ListItem[]>(() => props.items);
    const update = (next: ListItem[]) => {
        setItems(next);
        props.onChange(next.filter((item) => item !== ''));
    };

    return (
        <div class="rows">
            {items.length === 0 ? <p class="rows-empty">No {props.noun}s.</p> : null}
            {items.map((item, index) => (
                <div class="row" key={index}>
                    {typeof item === 'object' ? (
                        <code class="row-long" aria-label={`${props.noun} ${index + 1}, long syntax (edit it as text)`}>
                            {JSON.stringify(item)}
                        </code>
                    ) : (
                        <input
                            type="text"
                            class="row-item"
                            aria-label={`${props.noun} ${index + 1}`}
                            value={String(item)}
                            placeholder={props.placeholder}
                            readOnly={props.readOnly}
                            spellcheck={false}
                            onInput={(event) => update(items.map((old, at) => (at === index ? event.currentTarget.value : old)))}
                        />
                    )}
                    {props.readOnly ? null : (
                        <Button
                            variant="link"
                            aria-label={`Remove ${props.noun} ${index + 1}`}
                            onClick={() => update(items.filter((_item, at) => at !== index))}
                        >
                            Remove
                        </Button>
                    )}
                </div>
            ))}
            {props.readOnly ? null : <Button onClick={() => update([...items, ''])}>Add a {props.noun}</Button>}
        </div>
    );
}
