import { useState } from 'preact/hooks';

import { api, ApiError, useApi } from '../../api.ts';
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

export interface AccessGroupsProps {
    app: App;
    /** After the groups were saved: the answer's access (applied at once for a deployed app). */
    onSaved?: (access: AppAccess) => void;
    saveLabel?: string;
}

/** The identity provider's groups to choose from, the ones suggested for this app marked, saved with PUT access. */
export function AccessGroups(props: AccessGroupsProps) {
    const directory = useApi<Directory>(`/api/idp/groups?app=${encodeURIComponent(props.app.name)}`);
    const [chosen, setChosen] = useState<string[]>(() => groupsOf(props.app).map((group) => group.pk));
    const [saving, setSaving] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const [saved, setSaved] = useState<AppAccess | undefined>(undefined);

    if (directory.loading) {
        return <Spinner label="Reading the identity provider's groups…" />;
    }

    if (!directory.data) {
        return (
            <div class="access-groups">
                <ErrorText error={directory.error} />
                <p class="field-hint">
                    Without a connected identity provider the app is deployed as public; an administrator connects one.
                </p>
            </div>
        );
    }

    const suggestions = new Map(directory.data.suggestions.map((suggestion) => [suggestion.pk, suggestion.reason]));
    const toggle = (pk: string, on: boolean) => setChosen(on ? [...chosen, pk] : chosen.filter((other) => other !== pk));
    const save = async () => {
        setSaving(true);
        setError(undefined);
        try {
            const groups = (directory.data?.groups ?? [])
                .filter((group) => chosen.includes(group.pk))
                .map(({ pk, name }) => ({ pk, name }));
            const { access } = await api.put<{ access: AppAccess }>(`/api/apps/${encodeURIComponent(props.app.name)}/access`, { groups });
            setSaved(access);
            props.onSaved?.(access);
        } catch (failure) {
            setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
        } finally {
            setSaving(false);
        }
    };

    return (
        <div class="access-groups">
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
            <p class="field-hint">No group chosen: every user the identity provider knows gets in.</p>
            <Button variant="primary" busy={saving} onClick={() => void save()}>
                {props.saveLabel ?? 'Save the groups'}
            </Button>
            <ErrorText error={error} />
            {saved ? (
                <p role="status" class="saved-note">
                    Saved. {MODE_TEXT[saved.mode]} {saved.applied ? 'The provider was updated and the sign-in checked.' : ''}
                </p>
            ) : null}
        </div>
    );
}
