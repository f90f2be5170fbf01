import { useEffect, useRef, useState } from 'preact/hooks';

import { ErrorText } from '../components/ErrorText.tsx';
import { Spinner } from '../components/Spinner.tsx';
import type * as CodeMirrorModule from './codemirror.ts';
import type { EditorHandle } from './codemirror.ts';
import type { EditorFinding, EditorLanguage } from './finding-lines.ts';

type EditorModule = typeof CodeMirrorModule;

let editorModule: Promise<EditorModule> | undefined;

/** CodeMirror is fetched the first time an editor is shown, once. */
function loadEditor(): Promise<EditorModule> {
    editorModule ??= import('./codemirror.ts');
    return editorModule;
}

export interface CodeEditorProps {
    language: EditorLanguage;
    /**
     * The text the editor starts with. The editor keeps its own text from then on (onChange reports it): pushing
     * each echo back in would replace what was typed since with an older text. A new `key` starts it afresh.
     */
    value: string;
    /** The accessible name of the text. */
    label: string;
    onChange?: (text: string) => void;
    /** Shown in the gutter, each on its line. */
    findings?: EditorFinding[];
    readOnly?: boolean;
}

/** A CodeMirror 6 editor for YAML or an nginx site, with lint findings in the gutter. */
export function CodeEditor(props: CodeEditorProps) {
    const host = useRef<HTMLDivElement>(null);
    const editor = useRef<EditorHandle | undefined>(undefined);
    const latest = useRef(props);
    latest.current = props;
    const [ready, setReady] = useState(false);
    const [failure, setFailure] = useState<string | undefined>(undefined);
    const readOnly = props.readOnly === true;

    useEffect(() => {
        let mounted = true;
        loadEditor().then(
            (module) => {
                if (!mounted || !host.current) {
                    return;
                }

                editor.current = module.createEditor(host.current, {
                    language: props.language,
                    doc: latest.current.value,
                    readOnly,
                    label: props.label,
                    onChange: (text) => latest.current.onChange?.(text),
                });
                editor.current.setFindings(latest.current.findings ?? []);
                setReady(true);
            },
            (error: unknown) => setFailure(error instanceof Error ? error.message : String(error)),
        );
        return () => {
            mounted = false;
            editor.current?.destroy();
            editor.current = undefined;
        };
    }, [props.language, props.label, readOnly]);

    useEffect(() => editor.current?.setFindings(props.findings ?? []), [props.findings, ready]);

    return (
        <div class="code-editor-frame">
            {!ready && !failure ? <Spinner label="Loading the editor…" /> : null}
            <ErrorText error={failure ? `The editor could not be loaded (${failure}); reload to try again.` : undefined} />
            <div ref={host} class="code-editor" data-language={props.language} data-ready={ready ? 'true' : 'false'} />
        </div>
    );
}
