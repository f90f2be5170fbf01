/** Server-Sent Events read over real HTTP, as a browser's EventSource would receive them. */
import Code from '@hapi/code';

import type { Browser } from '../helpers/browser.ts';

const { expect } = Code;

export interface SseMessage {
    id?: string;
    event: string;
    data: string;
}

/** Reads a Server-Sent Events stream over real HTTP until it closes. */
export async function readEvents(browser: Browser, path: string, headers: Record<string, string> = {}): Promise<SseMessage[]> {
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${browser.baseUrl}${path}`, { headers: { cookie, ...headers } });
    expect(response.status).to.equal(200);
    expect(String(response.headers.get('content-type'))).to.startWith('text/event-stream');
    const text = await response.text();
    return text
        .split('\n\n')
        .filter((block) => block.trim() !== '' && !block.startsWith(':'))
        .map((block) => {
            const message: SseMessage = { event: 'message', data: '' };
            for (const line of block.split('\n')) {
                const [field, ...rest] = line.split(': ');
                const value = rest.join(': ');
                if (field === 'id') message.id = value;
                if (field === 'event') message.event = value;
                if (field === 'data') message.data = value;
            }

            return message;
        });
}
