import { Button } from './Button.tsx';

export interface ConfirmProps {
    /** The group's accessible name: "Confirm: restart". */
    label: string;
    /** What will happen, said before it is done. */
    question: string;
    /** The button that does it: "Restart app". */
    action: string;
    busy?: boolean;
    onConfirm: () => void;
    onCancel: () => void;
}

/** Asks before something that visitors or data feel (a restart, a restore): the question, the action and Cancel. */
export function Confirm(props: ConfirmProps) {
    return (
        <div class="app-action-confirm" role="group" aria-label={props.label}>
            <p>{props.question}</p>
            <div class="app-action-buttons">
                <Button variant="danger" busy={props.busy} onClick={props.onConfirm}>
                    {props.action}
                </Button>
                <Button onClick={props.onCancel}>Cancel</Button>
            </div>
        </div>
    );
}
