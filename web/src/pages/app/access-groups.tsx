import { useState } from 'preact/hooks';

import { api, ApiError, type ApiState, useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import type { AccessGroup, App, AppAccess, Directory } from './types.ts';

const MODE_TEXT: Record<AppAccess['mode'], string> = {
    public: 'Public: no identity provider stands in front of it.',
    'signed-in': 'Every user the identity provider knows may reach it (no group chosen).',
    groups: 'Only members of the chosen groups may reach it.',
};

export function accessModeText(access: AppAccess | undefined): string {
    return access ? MODE_TEXT[access.mode] : '';
}

function groupsOf(app: App): AccessGroup[] {
    return app.access?.groups ?? app.draft.auth?.groups ?? [];
}

/** A draft whose groups were never saved (its `auth` is unset): no choice has been made yet. */
function neverChosen(app: App): boolean {
    return app.state === 'draft' && app.draft.auth === undefined;
}

function sameGroups(left: string[], right: string[]): boolean {
    return left.length === right.length && left.every((pk) => right.includes(pk));
}

/** Read-only: who may reach the app (viewers, and editors before choosing). */
export function AccessSummary(props: { app: App }) {
    const groups = groupsOf(props.app);
    return (
        <div class="access-summary">
            <p>{accessModeText(props.app.access)}</p>
            {groups.length > 0 ? (
                <ul class="group-names" aria-label="Groups that may reach the app">
                    {groups.map((group) => (
                        <li key={group.pk}>{group.name}</li>
                    ))}
                </ul>
            ) : null}
        </div>
    );
}

export interface AccessChoice {
    directory: ApiState<Directory>;
    /** The pks of the ticked groups. */
    chosen: string[];
    toggle(pk: string, on: boolean): void;
    /** Whether the ticks differ from what the app has saved (or nothing was ever saved for a draft). */
    unsaved: boolean;
    /** Saves the ticked groups with PUT access; undefined without the provider's groups to choose from. */
    save(): Promise<AppAccess | undefined>;
}

/**
 * The groups ticked for the app. With `suggest`, a draft whose groups were never chosen starts with the suggested
 * groups ticked, so that the default is not every user of the provider.
 */
export function useAccessChoice(app: App, options: { suggest?: boolean } = {}): AccessChoice {
    const directory = useApi<Directory>(`/api/idp/groups?app=${encodeURIComponent(app.name)}`);
    const [ticked, setTicked] = useState<string[] | undefined>(undefined);
    const saved = groupsOf(app).map((group) => group.pk);
    const suggested = options.suggest && neverChosen(app) ? directory.data?.suggestions.map((suggestion) => suggestion.pk) : undefined;
    const chosen = ticked ?? suggested ?? saved;
    const toggle = (pk: string, on: boolean) => setTicked([...chosen.filter((other) => other !== pk), ...(on ? [pk] : [])]);
    const save = async () => {
        if (!directory.data) {
            return undefined;
        }

        const groups = directory.data.groups.filter((group) => chosen.includes(group.pk)).map(({ pk, name }) => ({ pk, name }));
        const answer = await api.put<{ access: AppAccess }>(`/api/apps/${encodeURIComponent(app.name)}/access`, { groups });
        return answer.access;
    };
    return { directory, chosen, toggle, unsaved: neverChosen(app) || !sameGroups(chosen, saved), save };
}

/** Who the ticks let in, kept in step with them. */
function choiceHint(directory: Directory, chosen: string[]): string {
    const names = directory.groups.filter((group) => chosen.includes(group.pk)).map((group) => group.name);
    return names.length === 0
        ? 'No group chosen: every user the identity provider knows gets in.'
        : `Only members of ${names.join(', ')} get in.`;
}

/** The identity provider's groups as checkboxes, the ones suggested for this app marked. */
export function GroupPicker(props: { app: App; choice: AccessChoice }) {
    const { directory, chosen, toggle } = props.choice;
    if (directory.loading) {
        return <Spinner label="Reading the identity provider's groups…" />;
    }

    if (!directory.data) {
        return (
            <>
                <ErrorText error={directory.error} />
                <p class="field-hint">
                    Without a connected identity provider the app can only be deployed public, and only when that is said; an administrator
                    connects one.
                </p>
            </>
        );
    }

    const suggestions = new Map(directory.data.suggestions.map((suggestion) => [suggestion.pk, suggestion.reason]));
    return (
        <>
            <fieldset>
                <legend>Groups that may reach {props.app.title || props.app.name}</legend>
                {directory.data.groups.length === 0 ? <p>The identity provider has no groups.</p> : null}
                <ul class="group-list">
                    {directory.data.groups.map((group) => {
                        const id = `group-${group.pk}`;
                        const reason = suggestions.get(group.pk);
                        return (
                            <li key={group.pk}>
                                <input
                                    id={id}
                                    type="checkbox"
                                    checked={chosen.includes(group.pk)}
                                    onChange={(event) => toggle(group.pk, event.currentTarget.checked)}
                                />{' '}
                                <label for={id}>{group.name}</label>{' '}
                                <span class="group-meta">
                                    {group.members.length} member{group.members.length === 1 ? '' : 's'}
                                    {group.apps.length > 0 ? `, opens ${group.apps.join(', ')}` : ''}
                                </span>{' '}
                                {reason ? (
                                    <Badge tone="info" title={reason}>
                                        suggested: {reason}
                                    </Badge>
                                ) : null}
                            </li>
                        );
                    })}
                </ul>
            </fieldset>
            <p class="field-hint access-hint" aria-live="polite">
                {choiceHint(directory.data, chosen)}
            </p>
        </>
    );
}

export interface AccessGroupsProps {
    app: App;
    /** After the groups were saved: the answer's access (applied at once for a deployed app). */
    onSaved?: (access: AppAccess) => void;
}

/** The groups to choose from, saved with their own button (PUT access): the app page's access tab. */
export function AccessGroups(props: AccessGroupsProps) {
    const choice = useAccessChoice(props.app);
    const [saving, setSaving] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const [saved, setSaved] = useState<AppAccess | undefined>(undefined);
    const save = async () => {
        setSaving(true);
        setError(undefined);
        try {
            const access = await choice.save();
            if (access) {
                setSaved(access);
                props.onSaved?.(access);
            }
        } catch (failure) {
            setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
        } finally {
            setSaving(false);
        }
    };

    return (
        <div class="access-groups">
            <GroupPicker app={props.app} choice={choice} />
            {choice.directory.data ? (
                <Button variant="primary" busy={saving} onClick={() => void save()}>
                    Save the groups
                </Button>
            ) : null}
            <ErrorText error={error} />
            {saved ? (
                <p role="status" class="saved-note">
                    Saved. {MODE_TEXT[saved.mode]} {saved.applied ? 'The provider was updated and the sign-in checked.' : ''}
                </p>
            ) : null}
        </div>
    );
}
