import { useId, useState } from 'preact/hooks';

import { Button } from '../components/Button.tsx';
import { ErrorText } from '../components/ErrorText.tsx';
import type { FileCheck, Finding } from '../pages/app/types.ts';
import { KeyValueRows, type ListItem, ListRows } from './form-rows.tsx';
import { FileEditor, type FileKind, fileText, fileUpdate, type FileValue } from './file-editor.tsx';
import type { EditorMode } from './mode-switch.tsx';

export type { EditorMode } from './mode-switch.tsx';

/** The parts of a service the form edits; everything else is carried along untouched. */
export interface ComposeService {
    image?: string;
    restart?: string;
    environment?: Record<string, string | null>;
    ports?: ListItem[];
    volumes?: ListItem[];
    [other: string]: unknown;
}

export interface ComposeSpec {
    services: Record<string, ComposeService>;
    volumes?: Record<string, Record<string, unknown> | null>;
    [other: string]: unknown;
}

export type ComposeValue = FileValue<ComposeSpec>;

const RESTART_POLICIES = ['', 'no', 'always', 'on-failure', 'unless-stopped'];

export async function composeText(value: ComposeValue): Promise<string> {
    return await fileText(COMPOSE_FILE, value);
}

/** The request body for the compose update route (`PUT /api/apps/{name}/compose`). */
export function composeUpdate(value: ComposeValue): { mode: EditorMode; text?: string; spec?: ComposeSpec } {
    return fileUpdate(value);
}

function ServiceForm(props: {
    name: string;
    service: ComposeService;
    readOnly: boolean;
    onChange: (service: ComposeService | null) => void;
}) {
    const id = useId();
    const { service } = props;
    const set = (patch: Partial<ComposeService>) => props.onChange({ ...service, ...patch });
    return (
        <fieldset class="model-block">
            <legend>
                Service <code>{props.name}</code>
            </legend>
            <div class="field">
                <label for={`${id}-image`}>Image</label>
                <input
                    id={`${id}-image`}
                    type="text"
                    value={service.image ?? ''}
                    readOnly={props.readOnly}
                    spellcheck={false}
                    onInput={(event) => set({ image: event.currentTarget.value })}
                />
            </div>
            <div class="field">
                <label for={`${id}-restart`}>Restart policy</label>
                <select
                    id={`${id}-restart`}
                    value={service.restart ?? ''}
                    disabled={props.readOnly}
                    onChange={(event) => {
                        const restart = event.currentTarget.value;
                        set({ restart: restart === '' ? undefined : restart });
                    }}
                >
                    {RESTART_POLICIES.map((policy) => (
                        <option key={policy} value={policy}>
                            {policy === '' ? '(none)' : policy}
                        </option>
                    ))}
                </select>
            </div>
            <p class="model-subheading">Environment</p>
            <KeyValueRows
                noun="variable"
                values={service.environment ?? {}}
                readOnly={props.readOnly}
                unsetPlaceholder="(taken from the environment)"
                onChange={(environment) => set({ environment })}
            />
            <p class="model-subheading">Ports</p>
            <p class="field-hint">Short syntax, published on loopback only: 127.0.0.1:host:container.</p>
            <ListRows noun="port" items={service.ports ?? []} readOnly={props.readOnly} onChange={(ports) => set({ ports })} />
            <p class="model-subheading">Volumes</p>
            <ListRows
                noun="volume"
                items={service.volumes ?? []}
                readOnly={props.readOnly}
                placeholder="name:/path/in/container"
                onChange={(volumes) => set({ volumes })}
            />
            {props.readOnly ? null : (
                <Button variant="danger" onClick={() => props.onChange(null)}>
                    Remove service {props.name}
                </Button>
            )}
        </fieldset>
    );
}

function AddService(props: { onAdd: (name: string, image: string) => void; taken: string[] }) {
    const id = useId();
    const [name, setName] = useState('');
    const [image, setImage] = useState('');
    const problem = props.taken.includes(name) ? `a service named ${name} exists` : undefined;
    return (
        <fieldset class="model-block model-add">
            <legend>Add a service</legend>
            <div class="field">
                <label for={`${id}-name`}>Service name</label>
                <input
                    id={`${id}-name`}
                    type="text"
                    value={name}
                    spellcheck={false}
                    onInput={(event) => setName(event.currentTarget.value)}
                />
            </div>
            <div class="field">
                <label for={`${id}-image`}>Image of the new service</label>
                <input
                    id={`${id}-image`}
                    type="text"
                    value={image}
                    spellcheck={false}
                    onInput={(event) => setImage(event.currentTarget.value)}
                />
            </div>
            <ErrorText error={problem} />
            <Button
                disabled={name.trim() === '' || image.trim() === '' || problem !== undefined}
                onClick={() => {
                    props.onAdd(name.trim(), image.trim());
                    setName('');
                    setImage('');
                }}
            >
                Add service
            </Button>
        </fieldset>
    );
}

/** The compose model as a form: services (image, restart, environment, ports, volumes) and named volumes. */
export function ComposeModelForm(props: { spec: ComposeSpec; readOnly: boolean; onChange: (spec: ComposeSpec) => void }) {
    const { spec } = props;
    const setService = (name: string, service: ComposeService | null) => {
        const services = { ...spec.services };
        if (service === null) {
            delete services[name];
        } else {
            services[name] = service;
        }

        props.onChange({ ...spec, services });
    };
    const volumeNames = Object.keys(spec.volumes ?? {});
    const setVolumes = (names: ListItem[]) => {
        const volumes = Object.fromEntries(names.map((name) => [String(name), spec.volumes?.[String(name)] ?? {}]));
        props.onChange({ ...spec, volumes });
    };

    return (
        <div class="model-form" data-testid="compose-model">
            <p class="field-hint">Other settings of the file are kept as written; switch to the text to edit them.</p>
            {Object.entries(spec.services).map(([name, service]) => (
                <ServiceForm
                    key={name}
                    name={name}
                    service={service}
                    readOnly={props.readOnly}
                    onChange={(next) => setService(name, next)}
                />
            ))}
            {props.readOnly ? null : (
                <AddService
                    taken={Object.keys(spec.services)}
                    onAdd={(name, image) => setService(name, { image, restart: 'unless-stopped' })}
                />
            )}
            <fieldset class="model-block">
                <legend>Named volumes</legend>
                <ListRows noun="named volume" items={volumeNames} readOnly={props.readOnly} onChange={setVolumes} />
            </fieldset>
        </div>
    );
}

export interface ComposeEditorProps {
    /** The app the file is judged for (its secrets, folder and site). */
    app: string;
    initialText: string;
    initialMode: EditorMode;
    readOnly?: boolean;
    onChange: (value: ComposeValue) => void;
    onCheck?: (check: FileCheck | undefined) => void;
    /** Risks shown with a checkbox accepting them when given. */
    acceptedRisks?: boolean;
    onAcceptedRisksChange?: (accepted: boolean) => void;
    /** The wizard asks for the variables' values in a later step: a variable without one is said so, not an error. */
    variablesAskedLater?: string;
}

/** A variable without a value, as a note that the step named asks for it; other findings as they are. */
function variablesDeferredTo(step: string): (findings: Finding[]) => Finding[] {
    return (findings) =>
        findings.map((finding) =>
            finding.variable
                ? { path: finding.path, level: 'info', message: `\${${finding.variable}} has no value yet: the ${step} step asks for it.` }
                : finding,
        );
}

const COMPOSE_FILE: FileKind<ComposeSpec> = {
    api: 'compose',
    language: 'yaml',
    name: 'the compose file',
    label: 'Compose file',
    ModelForm: ComposeModelForm,
};

/** The compose file as a form or as text, switching both ways through the API, checked as it is edited. */
export function ComposeEditor(props: ComposeEditorProps) {
    const { app, variablesAskedLater, ...rest } = props;
    const shownFindings = variablesAskedLater ? variablesDeferredTo(variablesAskedLater) : undefined;
    return <FileEditor kind={COMPOSE_FILE} checkContext={{ app }} shownFindings={shownFindings} {...rest} />;
}
