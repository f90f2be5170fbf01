import type Http from 'node:http';

/** node:http's response headers as a fetch Headers, each value of a repeated header kept. */
export function headersOf(incoming: Http.IncomingHttpHeaders): Headers {
    const headers = new Headers();
    for (const [name, value] of Object.entries(incoming)) {
        for (const item of Array.isArray(value) ? value : [value ?? '']) {
            headers.append(name, item);
        }
    }

    return headers;
}
