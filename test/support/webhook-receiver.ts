/** A local listener that takes notification webhooks' deliveries, as a user's endpoint would. */
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
    kind: string;
    app: string | null;
    summary: string;
    details: Record<string, unknown>;
    /** The delivery's id: the same on each attempt. */
    delivery: number;
}

export interface WebhookReceiver {
    url: string;
    received: ReceivedDelivery[];
    close(): Promise<void>;
}

/** `failFirst`: how many requests are answered 500 before the rest are answered 200 (each is recorded). */
export async function startWebhookReceiver(options: { failFirst?: number } = {}): Promise<WebhookReceiver> {
    const received: ReceivedDelivery[] = [];
    const server = Http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
            received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedDelivery);
            response.writeHead(received.length <= (options.failFirst ?? 0) ? 500 : 200).end('ok');
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
