import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

export interface CardProps {
    title?: ComponentChildren;
    /** The heading's level, so that headings stay in order on every page (default 2). */
    level?: 2 | 3 | 4;
    actions?: ComponentChildren;
    children?: ComponentChildren;
    class?: string;
}

/** A titled section of a page; the title names the section for assistive technology. */
export function Card(props: CardProps) {
    const headingId = `card-${useId()}`;
    const Heading = `h${props.level ?? 2}` as 'h2' | 'h3' | 'h4';
    return (
        <section class={['card', props.class].filter(Boolean).join(' ')} aria-labelledby={props.title ? headingId : undefined}>
            {props.title || props.actions ? (
                <div class="card-header">
                    {props.title ? (
                        <Heading id={headingId} class="card-title">
                            {props.title}
                        </Heading>
                    ) : null}
                    {props.actions ? <div class="card-actions">{props.actions}</div> : null}
                </div>
            ) : null}
            {props.children}
        </section>
    );
}
