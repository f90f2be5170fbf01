import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { api, ApiError, asApiError } from '../api.ts';
import { ErrorText } from '../components/ErrorText.tsx';
import { Spinner } from '../components/Spinner.tsx';
import type { FileCheck, Finding } from '../pages/app/types.ts';
import { CodeEditor } from './code-editor.tsx';
import { Findings } from './findings.tsx';
import { type EditorMode, ModeSwitch } from './mode-switch.tsx';
import { useCheck } from './use-check.ts';

export type FileValue<Spec> = { mode: 'text'; text: string } | { mode: 'model'; spec: Spec };

/** A file the API reads as a model and as text: the compose file, the nginx site. */
export interface FileKind<Spec> {
    /** The API's `/api/<api>/parse`, `/render` and `/validate`. */
    api: 'compose' | 'nginx';
    language: 'yaml' | 'nginx';
    /** In sentences: "the compose file". */
    name: string;
    /** The text editor's label. */
    label: string;
    ModelForm: (props: { spec: Spec; readOnly: boolean; onChange: (spec: Spec) => void }) => JSX.Element;
}

export async function fileText<Spec>(kind: FileKind<Spec>, value: FileValue<Spec>): Promise<string> {
    return value.mode === 'text' ? value.text : (await api.post<{ text: string }>(`/api/${kind.api}/render`, { spec: value.spec })).text;
}

/** The request body of the update routes (`PUT /api/apps/{name}/compose` and `/nginx`). */
export function fileUpdate<Spec>(value: FileValue<Spec>): { mode: EditorMode; text?: string; spec?: Spec } {
    return value.mode === 'text' ? { mode: 'text', text: value.text } : { mode: 'model', spec: value.spec };
}

export interface FileEditorProps<Spec> {
    kind: FileKind<Spec>;
    initialText: string;
    initialMode: EditorMode;
    readOnly?: boolean;
    onChange: (value: FileValue<Spec>) => void;
    onCheck?: (check: FileCheck | undefined) => void;
    /** Sent with every check (the app a compose file is judged for). */
    checkContext?: Record<string, string>;
    /** Risks shown with a checkbox accepting them when given. */
    acceptedRisks?: boolean;
    onAcceptedRisksChange?: (accepted: boolean) => void;
    /** What the findings say where they are shown (the wizard's compose step defers variables to its secrets step). */
    shownFindings?: (findings: Finding[]) => Finding[];
}

/** A file as a form or as text, switching both ways through the API, checked as it is edited. */
export function FileEditor<Spec>(props: FileEditorProps<Spec>) {
    const { kind } = props;
    const readOnly = props.readOnly === true;
    // Viewers read the text: reading it into the model is for editors.
    const startsAsText = props.initialMode === 'text' || readOnly;
    const [value, setValue] = useState<FileValue<Spec> | undefined>(startsAsText ? { mode: 'text', text: props.initialText } : undefined);
    const [switching, setSwitching] = useState(false);
    const [switchError, setSwitchError] = useState<ApiError | undefined>(undefined);

    useEffect(() => {
        if (!startsAsText) {
            api.post<{ spec: Spec }>(`/api/${kind.api}/parse`, { text: props.initialText }).then(
                ({ spec }) => setValue({ mode: 'model', spec }),
                (error: unknown) => {
                    setSwitchError(error instanceof ApiError ? error : undefined);
                    setValue({ mode: 'text', text: props.initialText });
                },
            );
        }
    }, []);

    useEffect(() => {
        if (value) {
            props.onChange(value);
        }
    }, [value]);

    const payload = readOnly || !value ? null : { ...fileUpdateBody(value), ...props.checkContext };
    const check = useCheck(`/api/${kind.api}/validate`, value?.mode === 'text' && value.text.trim() === '' ? null : payload);
    useEffect(() => props.onCheck?.(check.result), [check.result]);

    const switchTo = async (mode: EditorMode) => {
        if (!value || value.mode === mode) {
            return;
        }

        setSwitching(true);
        setSwitchError(undefined);
        try {
            if (value.mode === 'text') {
                const { spec } = await api.post<{ spec: Spec }>(`/api/${kind.api}/parse`, { text: value.text });
                setValue({ mode: 'model', spec });
            } else {
                setValue({ mode: 'text', text: await fileText(kind, value) });
            }
        } catch (error) {
            setSwitchError(asApiError(error));
        } finally {
            setSwitching(false);
        }
    };

    if (!value) {
        return <Spinner label={`Reading ${kind.name}…`} />;
    }

    const checked = check.result ? [...check.result.errors, ...check.result.lint] : [];
    const findings = props.shownFindings ? props.shownFindings(checked) : checked;
    const subject = `${kind.name.charAt(0).toUpperCase()}${kind.name.slice(1)}`;
    return (
        <div class="file-editor">
            {readOnly ? null : (
                <ModeSwitch label={`Edit ${kind.name} as`} mode={value.mode} busy={switching} onSwitch={(mode) => void switchTo(mode)} />
            )}
            <ErrorText error={switchError} />
            {value.mode === 'model' ? (
                <kind.ModelForm spec={value.spec} readOnly={readOnly} onChange={(spec) => setValue({ mode: 'model', spec })} />
            ) : (
                <CodeEditor
                    language={kind.language}
                    label={kind.label}
                    value={value.text}
                    readOnly={readOnly}
                    findings={findings}
                    onChange={(text) => setValue({ mode: 'text', text })}
                />
            )}
            {readOnly ? null : (
                <>
                    <ErrorText error={check.error} />
                    <Findings
                        subject={subject}
                        findings={findings}
                        checking={check.checking}
                        accepted={props.acceptedRisks}
                        onAcceptedChange={props.onAcceptedRisksChange}
                    />
                </>
            )}
        </div>
    );
}

/** What a check sends: the text, or the model. */
function fileUpdateBody<Spec>(value: FileValue<Spec>): { text: string } | { spec: Spec } {
    return value.mode === 'text' ? { text: value.text } : { spec: value.spec };
}
