import { useState } from 'preact/hooks';

import { useApi } from '../../api.ts';
import { Badge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { dateTime } from '../../format/time.ts';

const PAGE_SIZE = 20;

export interface NotificationDelivery {
    id: number;
    kind: string;
    app: string | null;
    summary: string;
    user: { id: number | null; email: string };
    channel: 'email' | 'webhook';
    target: string;
    status: 'pending' | 'delivered' | 'failed' | 'refused';
    attempts: number;
    error: string | null;
    createdAt: string;
    updatedAt: string;
}

const STATUS_TONES = { pending: 'neutral', delivered: 'good', failed: 'bad', refused: 'bad' } as const;

/** Every notification delivery, newest first: to whom, how, and how it went. */
export function NotificationsSection() {
    const [page, setPage] = useState(1);
    const { data, error, loading } = useApi<{ deliveries: NotificationDelivery[]; total: number }>(
        `/api/admin/notifications/deliveries?page=${page}&limit=${PAGE_SIZE}`,
    );
    const pages = data ? Math.max(1, Math.ceil(data.total / PAGE_SIZE)) : 1;
    return (
        <Card title="Notification deliveries">
            {loading && !data ? <Spinner /> : null}
            <ErrorText error={error} />
            {data && data.deliveries.length === 0 ? <p class="empty">No notification has been sent.</p> : null}
            {data && data.deliveries.length > 0 ? (
                <div class="table-scroll">
                    <table class="table admin-table">
                        <caption class="visually-hidden">Notification deliveries, newest first ({data.total} in all)</caption>
                        <thead>
                            <tr>
                                <th scope="col">When</th>
                                <th scope="col">Event</th>
                                <th scope="col">User</th>
                                <th scope="col">Channel</th>
                                <th scope="col">Status</th>
                                <th scope="col">Attempts</th>
                                <th scope="col">Error</th>
                            </tr>
                        </thead>
                        <tbody>
                            {data.deliveries.map((delivery) => (
                                <tr key={delivery.id}>
                                    <td>
                                        <time dateTime={delivery.createdAt}>{dateTime(delivery.createdAt)}</time>
                                    </td>
                                    <td>{delivery.summary}</td>
                                    <td>{delivery.user.email}</td>
                                    <td>
                                        {delivery.channel === 'email' ? 'E-mail' : 'Webhook'} <code>{delivery.target}</code>
                                    </td>
                                    <td>
                                        <Badge tone={STATUS_TONES[delivery.status]}>{delivery.status}</Badge>
                                    </td>
                                    <td>{delivery.attempts}</td>
                                    <td>{delivery.error ?? '—'}</td>
                                </tr>
                            ))}
                        </tbody>
                    </table>
                </div>
            ) : null}
            {data && data.total > PAGE_SIZE ? (
                <nav class="pager" aria-label="Notification delivery pages">
                    <Button disabled={page <= 1 || loading} onClick={() => setPage(page - 1)}>
                        Newer
                    </Button>
                    <span aria-live="polite">
                        Page {page} of {pages}
                    </span>
                    <Button disabled={page >= pages || loading} onClick={() => setPage(page + 1)}>
                        Older
                    </Button>
                </nav>
            ) : null}
        </Card>
    );
}
