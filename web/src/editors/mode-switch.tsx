import { useId } from 'preact/hooks';

export type EditorMode = 'model' | 'text';

export interface ModeSwitchProps {
    label: string;
    mode: EditorMode;
    busy?: boolean;
    onSwitch: (mode: EditorMode) => void;
}

/** Form or text: two toggle buttons, the pressed one is the current view. */
export function ModeSwitch(props: ModeSwitchProps) {
    const labelId = `mode-${useId()}`;
    return (
        <div class="mode-switch" role="group" aria-labelledby={labelId}>
            <span id={labelId} class="mode-switch-label">
                {props.label}
            </span>
            {(['model', 'text'] as const).map((mode) => (
                <button
                    key={mode}
                    type="button"
                    class={props.mode === mode ? 'button button-primary' : 'button button-secondary'}
                    aria-pressed={props.mode === mode ? 'true' : 'false'}
                    disabled={props.busy === true}
                    onClick={() => props.onSwitch(mode)}
                >
                    {mode === 'model' ? 'Form' : 'Text'}
                </button>
            ))}
        </div>
    );
}
