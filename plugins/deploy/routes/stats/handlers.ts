import type { Lifecycle } from '@hapi/hapi';

import { openEventStream } from '../../../../lib/server-sent-events.ts';
import { apps } from '../../domain/apps/app-service.ts';
import { resourceStats } from '../../domain/stats/resource-stats.ts';

/**
 * A `history` event with what is kept, then a `sample` event per new sample until the client goes; a draft, which
 * has no container to read, ends there with an `end` event.
 */
export const streamAppStats: Lifecycle.Method = async (request, h) => {
    const app = await apps(request.server).require(request.params.name as string);
    const stats = resourceStats(request.server);
    let stop: () => void = () => undefined;
    const events = openEventStream(request, () => stop());
    events.send('history', stats.history(app.name));
    if (app.state === 'draft') {
        events.send('end', { reason: 'the app has not been deployed yet' });
        events.close();
        return events.respond(h);
    }

    stop = stats.watch(app.name, (event) => events.send('sample', event));
    if (events.closed) stop();
    return events.respond(h);
};

export const getTopApps: Lifecycle.Method = async (request) =>
    await resourceStats(request.server).top((request.query as { limit: number }).limit);
