import { useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Link } from '../../router.tsx';
import type { KnownUpdateList } from '../app/types.ts';

export type KnownUpdate = KnownUpdateList['updates'][number];

/** The updates last found per app (`GET /api/updates`: the daily check's and the app pages'), by app name. */
export function useKnownUpdates(): Map<string, KnownUpdate> {
    const known = useApi<KnownUpdateList>('/api/updates');
    return new Map((known.data?.updates ?? []).map((entry) => [entry.app, entry]));
}

/** "update: 1.2.0" beside an app with an update, linked to its Updates tab. */
export function UpdateMark(props: { known: KnownUpdate | undefined }) {
    const newest = props.known?.updates[0];
    if (!props.known || !newest) {
        return null;
    }

    const what = newest.change === 'digest' ? `new ${newest.tag} image` : newest.tag;
    return (
        <Link href={`/apps/${encodeURIComponent(props.known.app)}/updates`} class="update-mark">
            <Badge tone="info" title={`An update of ${props.known.app} is available: ${what}`}>
                update: {what}
            </Badge>
        </Link>
    );
}
