import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';

import { openEventStream } from '../../../../lib/server-sent-events.ts';
import { type Run, type RunEvent, runs } from './run-service.ts';

type LiveMessage = { type: 'event'; event: RunEvent } | { type: 'end'; run: Run };

function lastSeenSeq(request: Request): number {
    const raw = request.headers['last-event-id'] ?? (request.query as { lastEventId?: string }).lastEventId ?? '0';
    const seq = Number.parseInt(String(raw), 10);
    return Number.isFinite(seq) && seq > 0 ? seq : 0;
}

/**
 * A run's log as Server-Sent Events: every stored line after Last-Event-ID, then the live ones, in order and
 * without duplicates (each carries its seq as the event id), then one `end` event carrying the run.
 */
export async function runEventStream(request: Request, h: ResponseToolkit, runId: number, app?: string): Promise<ResponseObject> {
    const service = runs(request.server);
    await service.get(runId, app);
    let sent = lastSeenSeq(request);
    let replaying = true;
    const buffered: LiveMessage[] = [];
    // Listening starts before the replay, so nothing falls between the two; seq removes what both deliver.
    const unsubscribe = service.subscribe(runId, (message) => (replaying ? buffered.push(message) : handle(message)));
    const events = openEventStream(request, unsubscribe);

    const sendEvent = (event: RunEvent) => {
        if (event.seq > sent) {
            sent = event.seq;
            events.send('event', event, event.seq);
        }
    };
    const finish = (run: Run) => {
        if (!events.closed) {
            events.send('end', run);
            events.close();
        }
    };
    const handle = (message: LiveMessage) => (message.type === 'event' ? sendEvent(message.event) : finish(message.run));

    for (const event of await service.eventsAfter(runId, sent)) {
        sendEvent(event);
    }

    replaying = false;
    buffered.splice(0).forEach(handle);
    const current = await service.get(runId);
    if (current.state !== 'running') {
        // A finished run has stored all its lines before its state changed: the replay had them all.
        finish(current);
    }

    return events.respond(h);
}
