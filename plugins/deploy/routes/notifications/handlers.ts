import type { Lifecycle } from '@hapi/hapi';

import { parsePaging, setPagingHeaders } from '../../../../lib/paging.ts';
import { type NotificationSettingsChange, notifications } from '../../domain/notifications/notification-service.ts';
import { requireDeployCredentials } from '../../security.ts';

export const getNotificationSettings: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    return await notifications(request.server).settingsFor(user);
};

export const updateNotificationSettings: Lifecycle.Method = async (request) => {
    const { user } = requireDeployCredentials(request);
    return await notifications(request.server).updateSettings(user, request.payload as NotificationSettingsChange);
};

export const listNotificationDeliveries: Lifecycle.Method = async (request, h) => {
    const paging = parsePaging(request.query);
    const { deliveries, total } = await notifications(request.server).deliveries(paging);
    return setPagingHeaders(request, h.response({ deliveries, total }), request.server.app.config.publicUrl, { total, paging });
};
