import type { Server } from '@hapi/hapi';

import { issueEvents } from '../issues/issue-events.ts';
import { notifications } from './notification-service.ts';

/** Notification threads: made and refreshed by issue activity. */
export default function setUpNotifications(server: Server): void {
    issueEvents(server).listen('notifications', async (trx, activity) => await notifications(server).notifyIssue(trx, activity));
}
