import { useId } from 'preact/hooks';

import { Badge, type BadgeTone } from '../components/Badge.tsx';
import type { Finding, FindingLevel } from '../pages/app/types.ts';

const TONES: Record<FindingLevel, BadgeTone> = { error: 'bad', risk: 'bad', warning: 'warning', info: 'info' };
const ORDER: FindingLevel[] = ['error', 'risk', 'warning', 'info'];

export function hasRisks(findings: Finding[]): boolean {
    return findings.some((finding) => finding.level === 'risk');
}

export interface FindingsProps {
    findings: Finding[];
    /** What was checked, for the list's heading: "The compose file". */
    subject: string;
    /** Shown only when there are risks and the person may accept them. */
    accepted?: boolean;
    onAcceptedChange?: (accepted: boolean) => void;
    checking?: boolean;
}

/** Errors, risks, warnings and notes, each with its fix; risks with the checkbox that accepts them. */
export function Findings(props: FindingsProps) {
    const acceptId = `accept-${useId()}`;
    const sorted = [...props.findings].sort((a, b) => ORDER.indexOf(a.level) - ORDER.indexOf(b.level));
    const risks = sorted.filter((finding) => finding.level === 'risk').length;
    return (
        <div class="findings" aria-live="polite">
            {props.checking ? <p class="findings-status">Checking {props.subject.toLowerCase()}…</p> : null}
            {sorted.length === 0 && !props.checking ? <p class="findings-status findings-clean">{props.subject}: no findings.</p> : null}
            {sorted.length > 0 ? (
                <ul class="findings-list" aria-label={`Findings about ${props.subject.toLowerCase()}`}>
                    {sorted.map((finding, index) => (
                        <li key={`${finding.level}-${finding.path}-${index}`} class={`finding finding-${finding.level}`}>
                            <Badge tone={TONES[finding.level]}>{finding.level}</Badge>{' '}
                            {finding.path ? <code class="finding-path">{finding.path}</code> : null} <span>{finding.message}</span>
                            {finding.fix ? <p class="finding-fix">Fix: {finding.fix}</p> : null}
                        </li>
                    ))}
                </ul>
            ) : null}
            {risks > 0 && props.onAcceptedChange ? (
                <p class="accept-risks">
                    <input
                        id={acceptId}
                        type="checkbox"
                        checked={props.accepted === true}
                        onChange={(event) => props.onAcceptedChange?.(event.currentTarget.checked)}
                    />{' '}
                    <label for={acceptId}>I accept {risks === 1 ? 'this risk' : `these ${risks} risks`}</label>
                </p>
            ) : null}
        </div>
    );
}
