import { useEffect, useState } from 'preact/hooks';
import YAML from 'yaml';

import { api, ApiError } from '../../api.ts';
import { Badge, type BadgeLevel } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { Link } from '../../router.tsx';
import type { App, AppFile } from './types.ts';

/** A variable name the API takes among `keys` (specs/deploy/recipes.yaml). */
const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_.]*$/;
/** A value that refers to the secrets file (`${NAME}`, `$NAME`): the API refuses to carry it. */
const SECRET_REFERENCE = /\$\{?[A-Za-z_]/;
const MAX_STEPS = 30;
const MAX_STEP_LENGTH = 2000;
const MAX_NOTES_LENGTH = 4000;

interface Variable {
    name: string;
    value: string;
    /** Why it cannot be carried, in words; undefined when it can. */
    refused?: string;
}

/** The answer of `POST /api/apps/{name}/recipe`, as far as this form reads it. */
interface SavedRecipe {
    id: string;
    title: string;
    level: string;
}

interface ComposeModel {
    services: Record<string, { image?: string; environment?: Record<string, string | null> }>;
}

/** The service running the app's image (as the API picks it: the one with its image, else the only one). */
function mainService(spec: ComposeModel, image: string | null): string | undefined {
    const names = Object.keys(spec.services);
    const running = names.find((name) => {
        const used = spec.services[name]?.image ?? '';
        return image !== null && (used === image || used.startsWith(`${image}:`) || used.startsWith(`${image}@`));
    });
    return running ?? (names.length === 1 ? names[0] : undefined);
}

function variablesOf(spec: ComposeModel, service: string): Variable[] {
    return Object.entries(spec.services[service]?.environment ?? {}).map(([name, value]) => {
        const text = value ?? '';
        if (!KEY_PATTERN.test(name)) {
            return { name, value: text, refused: 'its name has characters a recipe cannot carry' };
        }

        if (value === null) {
            return { name, value: text, refused: 'it has no value in the compose file' };
        }

        return SECRET_REFERENCE.test(text)
            ? { name, value: text, refused: 'it comes from the secrets, and a recipe keeps none' }
            : { name, value: text };
    });
}

/** The main service's variables of the compose file the app runs (on disk, as the API reads it when saving). */
function useVariables(app: App): { variables: Variable[] | undefined; service: string | undefined; error: string | undefined } {
    const [state, setState] = useState<{ variables?: Variable[]; service?: string; error?: string }>({});
    useEffect(() => {
        let current = true;
        const load = async () => {
            const { files } = await api.get<{ files: AppFile[] }>(`/api/apps/${encodeURIComponent(app.name)}/files`);
            const compose = files.find((file) => file.kind === 'compose');
            if (!compose) {
                return { error: 'The compose file the app runs was not found on disk.' };
            }

            const { spec } = await api.post<{ spec: ComposeModel }>('/api/compose/parse', { text: compose.content });
            const service = mainService(spec, app.image);
            if (!service) {
                return { error: 'The compose file has several services and none runs the app’s image: a recipe cannot be saved from it.' };
            }

            return { service, variables: variablesOf(spec, service) };
        };
        load().then(
            (found) => current && setState(found),
            (failure: unknown) =>
                current &&
                setState({
                    error: `The app’s variables could not be read (${failure instanceof Error ? failure.message : String(failure)}).`,
                }),
        );
        return () => {
            current = false;
        };
    }, [app.name, app.image]);
    return { variables: state.variables, service: state.service, error: state.error };
}

/** The steps as the API takes them: one a line, blank lines left out. */
function stepsOf(text: string): string[] {
    return text
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '');
}

function stepsProblem(steps: string[]): string | undefined {
    if (steps.length > MAX_STEPS) {
        return `At most ${MAX_STEPS} steps, one a line.`;
    }

    const long = steps.findIndex((step) => step.length > MAX_STEP_LENGTH);
    return long >= 0 ? `Step ${long + 1} is longer than ${MAX_STEP_LENGTH} characters.` : undefined;
}

/** The saved recipe's variables as the server wrote them (placeholders in place of this app's values). */
function SavedVariables(props: { id: string }) {
    const [env, setEnv] = useState<Record<string, string> | undefined>(undefined);
    const [error, setError] = useState<string | undefined>(undefined);
    useEffect(() => {
        api.get<string>(`/api/recipes/${encodeURIComponent(props.id)}`).then(
            (text) => setEnv(((YAML.parse(String(text)) as { env?: Record<string, string> } | null)?.env ?? {}) as Record<string, string>),
            (failure: unknown) =>
                setError(`The saved recipe could not be read back (${failure instanceof Error ? failure.message : String(failure)}).`),
        );
    }, [props.id]);
    if (error) {
        return <ErrorText error={error} />;
    }

    if (!env) {
        return <Spinner label="Reading the saved recipe…" />;
    }

    const entries = Object.entries(env);
    return entries.length === 0 ? (
        <p>It carries no variables.</p>
    ) : (
        <>
            <p>The variables as saved, with this app’s own values replaced by placeholders:</p>
            <ul class="saved-recipe-variables">
                {entries.map(([name, value]) => (
                    <li key={name} data-variable={name}>
                        <code>
                            {name} = {value}
                        </code>
                    </li>
                ))}
            </ul>
        </>
    );
}

/**
 * "Save as a recipe" (`POST /api/apps/{name}/recipe`), for an app whose last sign-in check passed: the variables
 * to carry, steps and notes. The server puts placeholders in place of the app's domain, URL, client id, issuer,
 * gateway and admin; what it saved is shown after, read back from the recipe's file.
 */
export function SaveRecipe(props: { app: App }) {
    const { variables, service, error: loadError } = useVariables(props.app);
    const [ticked, setTicked] = useState<Set<string>>(new Set());
    const [steps, setSteps] = useState('');
    const [notes, setNotes] = useState('');
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<ApiError | string | undefined>(undefined);
    const [saved, setSaved] = useState<SavedRecipe | undefined>(undefined);
    const tick = (name: string, on: boolean) => {
        const next = new Set(ticked);
        if (on) {
            next.add(name);
        } else {
            next.delete(name);
        }

        setTicked(next);
    };
    const save = async () => {
        const stepList = stepsOf(steps);
        const problem =
            stepsProblem(stepList) ??
            (notes.length > MAX_NOTES_LENGTH ? `The notes are longer than ${MAX_NOTES_LENGTH} characters.` : undefined);
        setError(problem);
        if (problem) {
            return;
        }

        setBusy(true);
        setSaved(undefined);
        try {
            const payload = {
                keys: [...ticked],
                ...(stepList.length > 0 ? { steps: stepList } : {}),
                ...(notes.trim() ? { notes: notes.trim() } : {}),
            };
            const answer = await api.post<{ recipe: SavedRecipe }>(`/api/apps/${encodeURIComponent(props.app.name)}/recipe`, payload);
            setSaved(answer.recipe);
        } catch (failure) {
            setError(failure instanceof ApiError ? failure : new ApiError(0, String(failure)));
        } finally {
            setBusy(false);
        }
    };

    return (
        <Card title="Save as a recipe" level={3} class="save-recipe">
            <p>
                Keep this working setup for the next app made from {props.app.image ?? 'this image'}: its sign-in method, the variables you
                tick, and the steps done by hand. The app’s domain, address, client ID, issuer, gateway and admin account are replaced by
                placeholders.
            </p>
            <ErrorText error={loadError} />
            {!variables && !loadError ? <Spinner label="Reading the app’s variables…" /> : null}
            {variables ? (
                <fieldset class="recipe-variables">
                    <legend>Variables to carry{service ? ` (service ${service})` : ''}</legend>
                    {variables.length === 0 ? <p>The service sets no variables.</p> : null}
                    {variables.map((variable) => {
                        const id = `recipe-variable-${variable.name}`;
                        return (
                            <p key={variable.name} class="field-check" data-variable={variable.name}>
                                <input
                                    id={id}
                                    type="checkbox"
                                    checked={ticked.has(variable.name)}
                                    disabled={variable.refused !== undefined}
                                    aria-describedby={variable.refused ? `${id}-why` : undefined}
                                    onChange={(event) => tick(variable.name, event.currentTarget.checked)}
                                />{' '}
                                <label for={id}>
                                    <code>
                                        {variable.name} = {variable.value}
                                    </code>
                                </label>
                                {variable.refused ? (
                                    <span id={`${id}-why`} class="muted">
                                        {' '}
                                        (not carried: {variable.refused})
                                    </span>
                                ) : null}
                            </p>
                        );
                    })}
                </fieldset>
            ) : null}
            <Field
                label="Steps done by hand"
                multiline
                rows={4}
                value={steps}
                onInput={setSteps}
                hint="One step a line, as the next person should do them."
            />
            <Field label="Notes" multiline rows={3} value={notes} onInput={setNotes} maxLength={MAX_NOTES_LENGTH} />
            <Button variant="primary" busy={busy} disabled={!variables} onClick={() => void save()}>
                Save the recipe
            </Button>
            <ErrorText error={error} />
            {saved ? (
                <div class="saved-recipe" role="status">
                    <p>
                        Saved as the recipe <strong class="saved-recipe-id">{saved.id}</strong> ({saved.title}){' '}
                        <Badge level={saved.level as BadgeLevel} />. It is listed on the <Link href="/recipes">recipes page</Link>.
                    </p>
                    <SavedVariables id={saved.id} />
                </div>
            ) : null}
        </Card>
    );
}
