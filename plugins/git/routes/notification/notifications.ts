import type { Lifecycle, Request } from '@hapi/hapi';

import { now } from '../../../../lib/database.ts';
import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { readsAsOf, signedInUser } from '../../domain/identity/auth.ts';
import { notifications, sourceValues, STATUS, statusValues, type ThreadFilter } from '../../domain/notifications/notification-service.ts';
import { formStrings, formTime, secondEnd, secondStart } from '../shared/query.ts';

interface ListQuery {
    all?: boolean | string;
    'status-types'?: string[];
    'to-status'?: string;
}

/** Go's ParseBool, plus `on` as Gitea's form reader takes it. */
function isTrue(value: boolean | string | undefined): boolean {
    return value === true || (typeof value === 'string' && ['1', 't', 'T', 'TRUE', 'true', 'True', 'on'].includes(value));
}

/** The statuses asked for; when every one given is unknown, no status filter applies (Gitea's rule). */
function statusFilter(query: ListQuery, defaults: number[]): number[] | undefined {
    if (isTrue(query.all)) {
        return undefined;
    }

    const asked = query['status-types'];
    if (!asked || asked.length === 0) {
        return defaults;
    }

    const known = statusValues(asked);
    return known.length > 0 ? known : undefined;
}

/** `to-status`: read, unread or pinned; anything else is read. */
function targetStatus(query: ListQuery): number {
    return statusValues([query['to-status'] ?? 'read'])[0] ?? STATUS.read;
}

function threadId(request: Request): number {
    const raw = String(request.params.id);
    return /^\d+$/.test(raw) ? Number(raw) : 0;
}

export const notifyGetList: Lifecycle.Method = async (request, h) => {
    const user = signedInUser(request);
    const query = request.query as ListQuery;
    // Gitea reads `before` first, and answers a malformed time 422 with Go's own words.
    const before = formTime(request.query, 'before', 422);
    const since = formTime(request.query, 'since', 422);
    const paging = parsePaging(request.query);
    const filter: ThreadFilter = {
        statuses: statusFilter(query, [STATUS.unread, STATUS.pinned]),
        sources: sourceValues(formStrings(request.query, 'subject-type')),
        since: since === undefined ? undefined : secondStart(since),
        before: before === undefined ? undefined : secondEnd(before),
    };
    const { items, total } = await notifications(request.server).page(user, filter, paging, readsAsOf(request));
    return setPagingHeaders(request, h.response(items), request.server.app.config.publicUrl, { total, paging });
};

export const notifyReadList: Lifecycle.Method = async (request, h) => {
    const user = signedInUser(request);
    const query = request.query as ListQuery;
    // A malformed `last_read_at` is a 400 here, not a 422 as on the listing: Gitea's own inconsistency.
    const lastReadAt = formTime(request.query, 'last_read_at', 400);
    const service = notifications(request.server);
    const changed = await service.markMany(
        user,
        statusFilter(query, [STATUS.unread]),
        targetStatus(query),
        lastReadAt === undefined ? now() : secondEnd(lastReadAt),
    );
    return h.response(await service.toApiThreads(changed, user)).code(205);
};

export const notifyNewAvailable: Lifecycle.Method = async (request) => ({
    new: await notifications(request.server).unreadCount(signedInUser(request)),
});

export const notifyGetThread: Lifecycle.Method = async (request) => {
    const user = signedInUser(request);
    const service = notifications(request.server);
    const [thread] = await service.toApiThreads([await service.thread(threadId(request), user)], user);
    return thread;
};

export const notifyReadThread: Lifecycle.Method = async (request, h) => {
    const user = signedInUser(request);
    const service = notifications(request.server);
    const changed = await service.setStatus(threadId(request), user, targetStatus(request.query as ListQuery));
    const [thread] = await service.toApiThreads([changed], user);
    return h.response(thread).code(205);
};
