/**
 * The terminal's WebSocket, `GET /api/apps/{name}/terminal/socket?ticket=...` with `Upgrade: websocket`: hapi has no
 * WebSocket routes, so the server's listener's `upgrade` event is taken here. The ticket stands for the session
 * cookie and the CSRF header a browser cannot send on a WebSocket; the Origin is checked as the API checks a write's.
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

import type { Server } from '@hapi/hapi';
import { WebSocketServer } from 'ws';

import { NotFoundError, ServiceError } from '../../../../lib/errors.ts';
import { terminals } from './terminal-service.ts';

const SOCKET_PATH = /^\/api\/apps\/([^/]+)\/terminal\/socket$/;

/** The largest frame a browser may send (a paste, a resize): larger ones close the socket (1009). */
const MAX_FRAME_BYTES = 64 * 1024;

/** The path's app name, decoded; a bad escape is no app's. */
function appName(segment: string): string {
    try {
        return decodeURIComponent(segment);
    } catch {
        throw new NotFoundError('not found');
    }
}

/** Answers the upgrade request with a plain HTTP error in the deploy API's shape, and closes the connection. */
function refuse(socket: Duplex, status: number, message: string): void {
    const body = JSON.stringify({ error: message });
    socket.once('finish', () => socket.destroy());
    socket.end(
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
            `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
}

/**
 * A browser always sends Origin on a WebSocket: it must be PUBLIC_URL's, or name the host the request was sent to
 * (the same origin reached under another name, as in the tests). A page elsewhere names its own.
 */
export function originAllowed(request: IncomingMessage, publicOrigin: string): boolean {
    const origin = request.headers.origin;
    if (!origin) {
        return false;
    }

    try {
        const url = new URL(origin);
        return url.origin === publicOrigin || (request.headers.host !== undefined && url.host === request.headers.host);
    } catch {
        return false;
    }
}

/**
 * Takes the server's upgrade requests: the terminal's path is admitted (Origin, then the ticket) or refused with an
 * HTTP error; any other upgrade, which nothing else on the server takes, is refused with 404 (Node hands every upgrade
 * to this listener once there is one, and answers none by itself). Every open session is closed, hung up and audited
 * when the server stops.
 */
export function acceptTerminalSockets(server: Server): void {
    const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
    const publicOrigin = new URL(server.app.config.publicUrl).origin;
    const listener = server.listener;

    const upgrade = async (request: IncomingMessage, socket: Duplex, head: Buffer) => {
        const url = new URL(request.url ?? '/', 'http://upgrade.invalid');
        const match = SOCKET_PATH.exec(url.pathname);
        // Another upgrade listener (none in Gatehouse itself) may take another path; otherwise nothing would answer it.
        if (!match && listener.listenerCount('upgrade') > 1) {
            return;
        }

        // Node takes its own error listener off an upgraded socket: a reset connection must not become an uncaught error.
        socket.on('error', () => socket.destroy());
        if (!match) {
            refuse(socket, 404, 'not found');
            return;
        }

        try {
            if (!originAllowed(request, publicOrigin)) {
                throw new ServiceError('origin not allowed', 403);
            }

            const admission = await terminals(server).admit(appName(match[1] ?? ''), url.searchParams.get('ticket') ?? '');
            sockets.handleUpgrade(request, socket, head, (webSocket) => terminals(server).start(webSocket, admission));
        } catch (error) {
            if (error instanceof ServiceError && error.statusCode < 500) {
                refuse(socket, error.statusCode, error.message);
            } else {
                server.log(['error', 'terminal'], `terminal: could not open a session: ${(error as Error).message}`);
                refuse(socket, 503, 'the terminal could not be opened');
            }
        }
    };

    listener.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => void upgrade(request, socket, head));
    server.ext('onPreStop', async () => {
        await terminals(server).closeAll('Gatehouse is stopping');
        sockets.close();
    });
}
