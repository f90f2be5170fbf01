/** A real HTTP server on 127.0.0.1 that records what webhooks deliver to it. */
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import { waitUntil } from '../../../../helpers/wait.ts';

export interface ReceivedDelivery {
    headers: Http.IncomingHttpHeaders;
    body: string;
    at: number;
}

export interface Receiver {
    url: string;
    port: number;
    received: ReceivedDelivery[];
    /** Status codes to answer with, one per request in order; 200 once they run out. */
    answers: number[];
    waitFor(count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
    close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
    const received: ReceivedDelivery[] = [];
    const answers: number[] = [];
    const server = Http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
            received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
            const status = answers.shift() ?? 200;
            response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'thanks' : 'try again');
        });
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const actualPort = (server.address() as AddressInfo).port;
    return {
        url: `http://127.0.0.1:${actualPort}/hook`,
        port: actualPort,
        received,
        answers,
        async waitFor(count, timeoutMs = 15_000) {
            await waitUntil(`${count} deliveries reached the receiver`, () => received.length >= count, {
                timeoutMs,
                intervalMs: 20,
            }).catch((error: Error) => {
                throw new Error(`${error.message} (it got ${received.length})`);
            });
            return received.slice(0, count);
        },
        async close() {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        },
    };
}
