/**
 * The CodeMirror side of the text editors, loaded only when an editor is first shown (dynamic import), so that
 * CodeMirror, its languages and the YAML reader stay out of the initial JavaScript.
 */
import { yaml } from '@codemirror/lang-yaml';
import { bracketMatching, foldGutter, indentOnInput, StreamLanguage } from '@codemirror/language';
import { nginx } from '@codemirror/legacy-modes/mode/nginx';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { EditorState, type Extension } from '@codemirror/state';
import { EditorView, highlightActiveLine, highlightActiveLineGutter, lineNumbers } from '@codemirror/view';
import { minimalSetup } from 'codemirror';

import { findingLine, type EditorFinding, type EditorLanguage } from './finding-lines.ts';

export interface EditorOptions {
    language: EditorLanguage;
    doc: string;
    readOnly: boolean;
    /** The accessible name of the text area. */
    label: string;
    onChange(text: string): void;
}

export interface EditorHandle {
    setFindings(findings: EditorFinding[]): void;
    focus(): void;
    destroy(): void;
}

const SEVERITY: Record<EditorFinding['level'], Diagnostic['severity']> = {
    error: 'error',
    risk: 'error',
    warning: 'warning',
    info: 'info',
};

const LEVEL_WORD: Record<EditorFinding['level'], string> = { error: 'Error', risk: 'Risk', warning: 'Warning', info: 'Note' };

function languageOf(language: EditorLanguage): Extension {
    return language === 'yaml' ? yaml() : StreamLanguage.define(nginx);
}

/** Each finding on the line it is about; one the text cannot place goes on the first line. */
function diagnosticsFor(state: EditorState, language: EditorLanguage, findings: EditorFinding[]): Diagnostic[] {
    const text = state.doc.toString();
    return findings.map((finding) => {
        const number = Math.min(Math.max(findingLine(text, language, finding) ?? 1, 1), state.doc.lines);
        const line = state.doc.line(number);
        const fix = finding.fix ? ` Fix: ${finding.fix}` : '';
        return {
            from: line.from,
            to: line.to,
            severity: SEVERITY[finding.level],
            message: `${LEVEL_WORD[finding.level]}: ${finding.path ? `${finding.path}: ` : ''}${finding.message}.${fix}`,
        };
    });
}

/** The frame's own rules, inside the editor's shadow root (the page's stylesheets do not reach into it). */
const FRAME_CSS = `
.cm-editor { min-height: 12rem; max-height: 32rem; border: 1px solid var(--border, #d5dae1); border-radius: var(--radius, 6px);
    background: var(--surface, #fff); color: var(--text, #1c2430); font-size: 0.9rem; }
.cm-editor.cm-focused { outline: 3px solid var(--focus, #f0a000); outline-offset: 2px; }
.cm-scroller { font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace; }
.cm-gutters { color: var(--muted, #556070); background: #f7f8fa; }
`;

let frameSheet: CSSStyleSheet | undefined;

/**
 * The editor lives in a shadow root: there CodeMirror's styles go into a constructed stylesheet, which the
 * page's Content-Security-Policy (`style-src 'self'`, no inline styles) allows, where a <style> element is refused.
 */
function shadowMount(host: HTMLElement): { root: ShadowRoot; parent: HTMLElement } {
    const root = host.shadowRoot ?? host.attachShadow({ mode: 'open' });
    root.replaceChildren();
    if (!frameSheet) {
        frameSheet = new CSSStyleSheet();
        frameSheet.replaceSync(FRAME_CSS);
    }

    if (!root.adoptedStyleSheets.includes(frameSheet)) {
        root.adoptedStyleSheets = [...root.adoptedStyleSheets, frameSheet];
    }

    const parent = document.createElement('div');
    root.append(parent);
    return { root, parent };
}

export function createEditor(host: HTMLElement, options: EditorOptions): EditorHandle {
    let findings: EditorFinding[] = [];
    const { root, parent } = shadowMount(host);
    const view = new EditorView({
        parent,
        root,
        state: EditorState.create({
            doc: options.doc,
            extensions: [
                // Not basicSetup: its completion pop-ups position themselves with style attributes, which the
                // page's Content-Security-Policy refuses.
                minimalSetup,
                lineNumbers(),
                highlightActiveLineGutter(),
                highlightActiveLine(),
                foldGutter(),
                indentOnInput(),
                bracketMatching(),
                languageOf(options.language),
                lintGutter(),
                EditorView.lineWrapping,
                EditorState.readOnly.of(options.readOnly),
                EditorView.editable.of(!options.readOnly),
                EditorView.contentAttributes.of({
                    'aria-label': options.label,
                    // Keyboard users reach the text (and scroll it) even when it is read-only.
                    tabindex: '0',
                    ...(options.readOnly ? { 'aria-readonly': 'true' } : {}),
                }),
                EditorView.updateListener.of((update) => {
                    if (update.docChanged) {
                        options.onChange(update.state.doc.toString());
                    }
                }),
            ],
        }),
    });

    const showFindings = () => view.dispatch(setDiagnostics(view.state, diagnosticsFor(view.state, options.language, findings)));

    return {
        setFindings(next) {
            findings = next;
            showFindings();
        },
        focus: () => view.focus(),
        destroy: () => view.destroy(),
    };
}
