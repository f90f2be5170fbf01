import { useEffect, useState } from 'preact/hooks';

import { Button } from './Button.tsx';

const COPIED_FOR_MS = 2_000;

export interface CopyButtonProps {
    value: string;
    /** What is copied, for the button's accessible name ("Copy <label>"). */
    label?: string;
    class?: string;
}

/** The clipboard API needs a secure context; elsewhere (plain http on a LAN) a hidden selection does it. */
async function copyText(value: string): Promise<boolean> {
    if (navigator.clipboard && window.isSecureContext) {
        try {
            await navigator.clipboard.writeText(value);
            return true;
        } catch {
            // falls through to the selection
        }
    }

    const area = document.createElement('textarea');
    area.value = value;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.append(area);
    area.select();
    const copied = document.execCommand('copy');
    area.remove();
    return copied;
}

export function CopyButton(props: CopyButtonProps) {
    const [outcome, setOutcome] = useState<'idle' | 'copied' | 'failed'>('idle');
    useEffect(() => {
        if (outcome === 'idle') {
            return undefined;
        }

        const timer = setTimeout(() => setOutcome('idle'), COPIED_FOR_MS);
        return () => clearTimeout(timer);
    }, [outcome]);

    const copy = async () => setOutcome((await copyText(props.value)) ? 'copied' : 'failed');
    const text = outcome === 'copied' ? 'Copied' : outcome === 'failed' ? 'Copy failed' : 'Copy';
    return (
        <span class={['copy-button', props.class].filter(Boolean).join(' ')}>
            <Button variant="secondary" aria-label={props.label ? `Copy ${props.label}` : undefined} onClick={() => void copy()}>
                {text}
            </Button>
            <span class="visually-hidden" role="status">
                {outcome === 'copied' ? 'Copied to the clipboard' : outcome === 'failed' ? 'Could not copy' : ''}
            </span>
        </span>
    );
}
