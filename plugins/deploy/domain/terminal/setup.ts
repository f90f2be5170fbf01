import type { Server } from '@hapi/hapi';

import { acceptTerminalSockets } from './terminal-socket.ts';

/**
 * With TERMINAL_ENABLED, the terminal's WebSocket is taken from the server's listener. Off, no upgrade listener is
 * added at all: Node then answers upgrade requests as ordinary ones (hapi's 404 for the socket's path).
 */
export default function setUpTerminal(server: Server): void {
    if (server.app.config.terminal.enabled) {
        acceptTerminalSockets(server);
    }
}
