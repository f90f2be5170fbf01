import { useId } from 'preact/hooks';

import { Button } from '../components/Button.tsx';
import type { FileCheck } from '../pages/app/types.ts';
import { KeyValueRows, ListRows } from './form-rows.tsx';
import { FileEditor, type FileKind, fileText, fileUpdate, type FileValue } from './file-editor.tsx';
import type { EditorMode } from './mode-switch.tsx';

/** The parts of a site the form edits; the rest (ports, certificates, forward auth) is carried along. */
export interface SiteLocation {
    path: string;
    proxyPass: string;
    websocket?: boolean;
    [other: string]: unknown;
}

export interface SiteSpec {
    serverNames: string[];
    locations: SiteLocation[];
    clientMaxBodySize?: string;
    headers?: Record<string, string>;
    extra?: string;
    [other: string]: unknown;
}

export type SiteValue = FileValue<SiteSpec>;

export async function siteText(value: SiteValue): Promise<string> {
    return await fileText(SITE_FILE, value);
}

/** The request body for the site update route (`PUT /api/apps/{name}/nginx`). */
export function siteUpdate(value: SiteValue): { mode: EditorMode; text?: string; spec?: SiteSpec } {
    return fileUpdate(value);
}

function LocationForm(props: {
    index: number;
    location: SiteLocation;
    readOnly: boolean;
    onChange: (location: SiteLocation | null) => void;
}) {
    const id = useId();
    const { location } = props;
    const set = (patch: Partial<SiteLocation>) => props.onChange({ ...location, ...patch });
    return (
        <fieldset class="model-block">
            <legend>
                Location <code>{location.path || `#${props.index + 1}`}</code>
            </legend>
            <div class="field">
                <label for={`${id}-path`}>Path</label>
                <input
                    id={`${id}-path`}
                    type="text"
                    value={location.path}
                    readOnly={props.readOnly}
                    spellcheck={false}
                    onInput={(event) => set({ path: event.currentTarget.value })}
                />
            </div>
            <div class="field">
                <label for={`${id}-proxy`}>Proxied to</label>
                <input
                    id={`${id}-proxy`}
                    type="text"
                    value={location.proxyPass}
                    readOnly={props.readOnly}
                    spellcheck={false}
                    placeholder="http://127.0.0.1:8080"
                    onInput={(event) => set({ proxyPass: event.currentTarget.value })}
                />
            </div>
            <p class="field-check">
                <input
                    id={`${id}-websocket`}
                    type="checkbox"
                    checked={location.websocket === true}
                    disabled={props.readOnly}
                    onChange={(event) => set({ websocket: event.currentTarget.checked || undefined })}
                />{' '}
                <label for={`${id}-websocket`}>WebSocket upgrades</label>
            </p>
            {props.readOnly ? null : (
                <Button variant="danger" onClick={() => props.onChange(null)}>
                    Remove location {location.path}
                </Button>
            )}
        </fieldset>
    );
}

/** The site model as a form: names, locations, body size, response headers and hand-written directives. */
export function SiteModelForm(props: { spec: SiteSpec; readOnly: boolean; onChange: (spec: SiteSpec) => void }) {
    const id = useId();
    const { spec } = props;
    const set = (patch: Partial<SiteSpec>) => props.onChange({ ...spec, ...patch });
    const setLocation = (index: number, location: SiteLocation | null) => {
        const locations = spec.locations.flatMap((old, at) => (at !== index ? [old] : location ? [location] : []));
        set({ locations });
    };
    return (
        <div class="model-form" data-testid="nginx-model">
            <p class="field-hint">Ports, certificates and the identity provider's check are kept as they are; the deploy manages them.</p>
            <fieldset class="model-block">
                <legend>Server names</legend>
                <ListRows
                    noun="server name"
                    items={spec.serverNames}
                    readOnly={props.readOnly}
                    onChange={(names) => set({ serverNames: names.map(String) })}
                />
            </fieldset>
            {spec.locations.map((location, index) => (
                <LocationForm
                    key={index}
                    index={index}
                    location={location}
                    readOnly={props.readOnly}
                    onChange={(next) => setLocation(index, next)}
                />
            ))}
            {props.readOnly ? null : (
                <Button
                    onClick={() =>
                        set({ locations: [...spec.locations, { path: '/new/', proxyPass: spec.locations[0]?.proxyPass ?? '' }] })
                    }
                >
                    Add a location
                </Button>
            )}
            <div class="field">
                <label for={`${id}-body`}>Largest request body</label>
                <input
                    id={`${id}-body`}
                    type="text"
                    value={spec.clientMaxBodySize ?? ''}
                    placeholder="1m (nginx's default)"
                    readOnly={props.readOnly}
                    onInput={(event) => set({ clientMaxBodySize: event.currentTarget.value || undefined })}
                />
            </div>
            <fieldset class="model-block">
                <legend>Response headers</legend>
                <KeyValueRows
                    noun="header"
                    values={spec.headers ?? {}}
                    readOnly={props.readOnly}
                    onChange={(headers) =>
                        set({ headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, value ?? ''])) })
                    }
                />
            </fieldset>
            <div class="field">
                <label for={`${id}-extra`}>Hand-written directives (kept verbatim)</label>
                <textarea
                    id={`${id}-extra`}
                    rows={4}
                    value={spec.extra ?? ''}
                    readOnly={props.readOnly}
                    spellcheck={false}
                    onInput={(event) => set({ extra: event.currentTarget.value || undefined })}
                />
            </div>
        </div>
    );
}

export interface NginxEditorProps {
    initialText: string;
    initialMode: EditorMode;
    readOnly?: boolean;
    onChange: (value: SiteValue) => void;
    onCheck?: (check: FileCheck | undefined) => void;
}

const SITE_FILE: FileKind<SiteSpec> = {
    api: 'nginx',
    language: 'nginx',
    name: 'the nginx site',
    label: 'nginx site',
    ModelForm: SiteModelForm,
};

/** The app's nginx site as a form or as text, switching both ways through the API, checked with nginx -t. */
export function NginxEditor(props: NginxEditorProps) {
    return <FileEditor kind={SITE_FILE} {...props} />;
}
