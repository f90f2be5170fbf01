import type { Server } from '@hapi/hapi';

/**
 * With TERMINAL_ENABLED, the terminal's WebSocket is taken from the server's listener. Off, no upgrade listener is
 * added at all: Node then answers upgrade requests as ordinary ones (hapi's 404 for the socket's path).
 */
export default async function setUpTerminal(server: Server): Promise<void> {
    if (server.app.config.terminal.enabled) {
        // Imported only then: the WebSocket library is not loaded by a server without the terminal.
        const { acceptTerminalSockets } = await import('./terminal-socket.ts');
        acceptTerminalSockets(server);
    }
}
