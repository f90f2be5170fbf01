import { useState } from 'preact/hooks';

import { api, useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { dateTime, relativeTime } from '../../format/time.ts';

/** GET /api/account/sessions: one signed-in browser or client of the user. */
interface AccountSession {
    id: number;
    createdAt: string;
    lastSeenAt: string;
    clientAddress: string;
    current: boolean;
}

/** Where the user is signed in; any other session can be ended from here (this one signs out in the header). */
export function SessionsCard() {
    const { data, error, loading, reload } = useApi<{ sessions: AccountSession[] }>('/api/account/sessions');
    return (
        <Card title="Where you are signed in">
            {loading && !data ? <Spinner /> : null}
            <ErrorText error={error} />
            {data ? (
                <ul class="session-list" aria-label="Your sessions">
                    {data.sessions.map((session) => (
                        <SessionItem key={session.id} session={session} onEnded={reload} />
                    ))}
                </ul>
            ) : null}
        </Card>
    );
}

function SessionItem(props: { session: AccountSession; onEnded: () => void }) {
    const { session } = props;
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState<Error | undefined>(undefined);
    const described = `from ${session.clientAddress || 'an unknown address'}, signed in ${dateTime(session.createdAt)}`;
    const end = async () => {
        setBusy(true);
        setError(undefined);
        try {
            await api.delete(`/api/account/sessions/${session.id}`);
            props.onEnded();
        } catch (failure) {
            setError(failure as Error);
            setBusy(false);
        }
    };
    return (
        <li class="session-item">
            <p class="session-facts">
                {session.current ? <Badge tone="info">this browser</Badge> : null} {described}, last seen{' '}
                <time dateTime={session.lastSeenAt}>{relativeTime(session.lastSeenAt)}</time>
            </p>
            {session.current ? null : (
                <Button busy={busy} onClick={() => void end()} aria-label={`End the session ${described}`}>
                    End
                </Button>
            )}
            <ErrorText error={error} />
        </li>
    );
}
