/** A local listener that takes notification webhooks' deliveries, as a user's endpoint would. */
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
    kind: string;
    app: string | null;
    summary: string;
    details: Record<string, unknown>;
}

export interface WebhookReceiver {
    url: string;
    received: ReceivedDelivery[];
    close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
    const received: ReceivedDelivery[] = [];
    const server = Http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
            received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedDelivery);
            response.writeHead(200).end('ok');
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
        received,
        close: async () => {
            await new Promise((resolve) => server.close(resolve));
        },
    };
}
