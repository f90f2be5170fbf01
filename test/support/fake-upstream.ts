/**
 * An HTTP listener on 127.0.0.1 that answers whatever the test says (a registry that misbehaves, a service that
 * should never be asked), recording every request it gets.
 */
import Http from 'node:http';
import type Net from 'node:net';

export type FakeHandler = (request: Http.IncomingMessage, response: Http.ServerResponse, url: URL) => void;

export interface FakeRequest {
    method: string;
    path: string;
    authorization: string | undefined;
}

export interface FakeUpstream {
    /** `127.0.0.1:<port>`, as an image reference names a registry. */
    host: string;
    baseUrl: string;
    requests: FakeRequest[];
    image(repository: string): { registry: string; repository: string };
    answer(handler: FakeHandler): void;
    stop(): Promise<void>;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
    let handle: FakeHandler = (_request, response) => response.writeHead(404).end();
    const requests: FakeRequest[] = [];
    const server = Http.createServer((request, response) => {
        requests.push({ method: request.method ?? '', path: request.url ?? '', authorization: request.headers.authorization });
        handle(request, response, new URL(request.url ?? '/', 'http://127.0.0.1'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = `127.0.0.1:${(server.address() as Net.AddressInfo).port}`;
    return {
        host,
        baseUrl: `http://${host}`,
        requests,
        image: (repository) => ({ registry: host, repository }),
        answer(handler) {
            handle = handler;
        },
        stop: async () => {
            server.closeAllConnections();
            await new Promise((resolve) => server.close(resolve));
        },
    };
}

export const json = (response: Http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
