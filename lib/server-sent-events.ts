/** A Server-Sent Events answer: the stream's events, a keep-alive comment while it is open, no buffering on the way. */
import { PassThrough } from 'node:stream';

import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';

const KEEP_ALIVE_MS = 15_000;

export interface EventSink {
    /** One event; `id` lets a client that reconnects say where it was (Last-Event-ID). */
    send(event: string, data: unknown, id?: number): void;
    /** Ends the answer (once), after a last event if given. */
    close(): void;
    readonly closed: boolean;
}

/**
 * Opens the stream for `request`; `stop` runs once, when the client goes or the stream is closed. Answer
 * `respond(h)` from the handler.
 */
export function openEventStream(request: Request, stop: () => void): EventSink & { respond(h: ResponseToolkit): ResponseObject } {
    const stream = new PassThrough();
    let closed = false;
    const keepAlive = setInterval(() => stream.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
    const finish = () => {
        if (!closed) {
            closed = true;
            clearInterval(keepAlive);
            stop();
        }
    };
    request.raw.req.once('close', finish);
    stream.write(': connected\n\n');
    return {
        get closed() {
            return closed;
        },
        send(event, data, id) {
            if (!closed) {
                stream.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
            }
        },
        close() {
            finish();
            stream.end();
        },
        respond(h) {
            return h
                .response(stream)
                .type('text/event-stream')
                .header('Cache-Control', 'no-cache')
                .header('X-Accel-Buffering', 'no')
                .header('Content-Encoding', 'identity');
        },
    };
}
