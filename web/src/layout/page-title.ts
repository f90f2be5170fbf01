import { useEffect } from 'preact/hooks';

/** Each page names itself in the browser's title (and so in history and for screen readers). */
export function usePageTitle(title: string): void {
    useEffect(() => {
        document.title = title ? `${title} · Gatehouse` : 'Gatehouse';
    }, [title]);
}
