import { useEffect, useState } from 'preact/hooks';

import { api, type ApiError, asApiError, useApi } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../router.tsx';
import { RunLog } from './run-log.tsx';
import type { App, AppFile, AppStatus, Run, RunStarted } from './types.ts';

type DeleteOption =
    | 'deleteData'
    | 'removeVolumes'
    | 'removeImages'
    | 'removeCert'
    | 'removeDns'
    | 'removeArchives'
    | 'removeAccess'
    | 'forgetHistory'
    | 'includePreexisting';

interface Known {
    containers: string[];
    site: string;
    folder: string | undefined;
    volumes: string[];
    images: string[];
    runs: number;
}

interface OptionText {
    label: string;
    explain: string;
    /** What this option removes here, from what is known of the app. */
    preview: (known: Known, app: App) => string[];
}

const OPTIONS: Record<DeleteOption, OptionText> = {
    deleteData: {
        label: "Delete the app's folder",
        explain:
            'Its compose file, secrets file and the data of bind mounts inside it; kept in a last backup (listed on the Backups tab, or archived into the archives folder when backups before changes are off), unless the archives are removed too.',
        preview: (known, app) => [known.folder ?? `the folder of ${app.name}`],
    },
    removeVolumes: {
        label: 'Remove the volumes',
        explain:
            'Each volume’s files are kept in that last backup (or archived as app-time-volume-name.tar.gz) unless the archives are removed; a volume that cannot be read is kept, with a warning.',
        preview: (known) => (known.volumes.length > 0 ? known.volumes.map((volume) => `volume ${volume}`) : ['no named volume']),
    },
    removeImages: {
        label: 'Remove the images',
        explain: 'The images the app’s services run, when Gatehouse pulled them (any image with the option below).',
        preview: (known) => known.images.map((image) => `image ${image}`),
    },
    removeCert: {
        label: 'Remove the certificate',
        explain: 'The certificate obtained for the app’s domain.',
        preview: (_known, app) => [`certificate for ${app.domain}`],
    },
    removeDns: {
        label: 'Remove the DNS record',
        explain: 'The record of the app’s domain, through the DNS provider.',
        preview: (_known, app) => [`DNS record ${app.domain}`],
    },
    removeArchives: {
        label: 'Remove the archives',
        explain:
            'The app’s archives, and no last backup or archive is made of its folder or volumes by this delete: their data is gone for good.',
        preview: (_known, app) => [`every archive of ${app.name}`],
    },
    removeAccess: {
        label: 'Remove the access at the identity provider',
        explain:
            'The app’s proxy provider and application (their group bindings and outpost entry go with them), and its OpenID or SAML provider.',
        preview: (_known, app) => [`provider and application dp-${app.name}`],
    },
    forgetHistory: {
        label: 'Forget the history',
        explain: 'The app’s runs and their logs, except the delete itself.',
        preview: (known) => [`${known.runs} run${known.runs === 1 ? '' : 's'}`],
    },
    includePreexisting: {
        label: 'Include what was there before the app',
        explain:
            'Without it only what Gatehouse made is removed: a volume, image, certificate or record that existed before the app is kept.',
        preview: () => ['volumes, images, certificates and records Gatehouse did not make, too'],
    },
};

/** What the page can tell of the app's resources: its containers, site, folder, volumes, images and runs. */
function useKnown(app: App): Known {
    const base = `/api/apps/${encodeURIComponent(app.name)}`;
    const status = useApi<AppStatus>(app.state === 'draft' ? null : `${base}/status`);
    const files = useApi<{ files: AppFile[] }>(`${base}/files`);
    const runs = useApi<{ runs: Run[] }>(`${base}/runs`);
    const [spec, setSpec] = useState<{ services: Record<string, { image?: string }>; volumes?: Record<string, unknown> } | undefined>(
        undefined,
    );
    useEffect(() => {
        api.post<{ spec: NonNullable<typeof spec> }>('/api/compose/parse', { text: app.draft.compose }).then(
            (answer) => setSpec(answer.spec),
            () => setSpec(undefined),
        );
    }, [app.draft.compose]);

    const compose = files.data?.files.find((file) => file.kind === 'compose');
    const site = files.data?.files.find((file) => file.kind === 'nginx');
    return {
        containers: status.data?.containers.map((container) => container.name) ?? [],
        site: site?.path ?? `the nginx site of ${app.name}`,
        folder: compose ? compose.path.slice(0, compose.path.lastIndexOf('/')) : undefined,
        volumes: Object.keys(spec?.volumes ?? {}).map((volume) => `${app.name}_${volume}`),
        images: [...new Set(Object.values(spec?.services ?? {}).flatMap((service) => (service.image ? [service.image] : [])))],
        runs: runs.data?.runs.length ?? 0,
    };
}

/** Delete with each option explained and what it removes previewed; the name typed confirms (`DELETE /api/apps/{name}`). */
export function DeleteTab(props: { app: App; onEnded: (run: Run) => void }) {
    const known = useKnown(props.app);
    const [chosen, setChosen] = useState<Partial<Record<DeleteOption, boolean>>>({});
    const [confirm, setConfirm] = useState('');
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const [runId, setRunId] = useState<number | undefined>(undefined);
    const [ended, setEnded] = useState<Run | undefined>(undefined);
    const options = Object.keys(OPTIONS) as DeleteOption[];
    const removed = [
        ...(known.containers.length > 0 ? known.containers.map((container) => `container ${container}`) : ['the app’s containers']),
        `nginx site ${known.site} (then nginx reloads)`,
        ...options.filter((option) => chosen[option]).flatMap((option) => OPTIONS[option].preview(known, props.app)),
    ];

    const remove = async () => {
        setBusy(true);
        setError(undefined);
        try {
            const body = { confirm, ...Object.fromEntries(options.filter((option) => chosen[option]).map((option) => [option, true])) };
            setRunId((await api.delete<RunStarted>(`/api/apps/${encodeURIComponent(props.app.name)}`, body)).runId);
        } catch (failure) {
            setError(asApiError(failure));
        } finally {
            setBusy(false);
        }
    };

    return (
        <div class="delete-app">
            <p>A delete always removes the app’s containers and its nginx site. Each option removes more:</p>
            <fieldset class="delete-options">
                <legend>What else to remove</legend>
                {options.map((option) => (
                    <div key={option} class="delete-option">
                        <input
                            id={`delete-${option}`}
                            type="checkbox"
                            checked={chosen[option] === true}
                            aria-describedby={`delete-${option}-explain`}
                            onChange={(event) => setChosen({ ...chosen, [option]: event.currentTarget.checked })}
                        />{' '}
                        <label for={`delete-${option}`}>{OPTIONS[option].label}</label>
                        <p id={`delete-${option}-explain`} class="field-hint">
                            {OPTIONS[option].explain}
                        </p>
                    </div>
                ))}
            </fieldset>
            <section class="delete-preview" aria-labelledby="delete-preview-heading">
                <h3 id="delete-preview-heading">What this delete removes</h3>
                <ul>
                    {removed.map((item) => (
                        <li key={item}>{item}</li>
                    ))}
                </ul>
            </section>
            <Field
                label={`Type the app's name (${props.app.name}) to confirm`}
                value={confirm}
                autocomplete="off"
                spellcheck={false}
                onInput={setConfirm}
            />
            <Button
                variant="danger"
                busy={busy || (runId !== undefined && !ended)}
                disabled={confirm !== props.app.name || ended?.state === 'succeeded'}
                onClick={() => void remove()}
            >
                Delete {props.app.name}
            </Button>
            <ErrorText error={error} />
            {runId !== undefined ? (
                <RunLog
                    runId={runId}
                    title="Delete"
                    onEnd={(run) => {
                        setEnded(run);
                        props.onEnded(run);
                    }}
                />
            ) : null}
            {ended?.state === 'succeeded' ? (
                <p role="status" class="deploy-done">
                    {props.app.name} is deleted. <Link href="/apps">Back to the apps</Link>.
                </p>
            ) : null}
        </div>
    );
}
