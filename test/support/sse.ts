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

export interface RunLine {
    seq: number;
    step: string;
    level: string;
    text: string;
}

/** A run's log lines, from its event stream. */
export function runLines(messages: SseMessage[]): RunLine[] {
    return messages.filter((message) => message.event === 'event').map((message) => JSON.parse(message.data) as RunLine);
}

/** How a run ended (`succeeded`, `rolled back`, `failed`), from its event stream's end event. */
export function runEndState(messages: SseMessage[]): string {
    const end = messages.find((message) => message.event === 'end');
    return end ? (JSON.parse(end.data) as { state: string }).state : 'no end';
}

/** Starts a run with the request and follows its events to the end. */
export async function runToEnd(browser: Browser, response: { status: number; text: string; body: unknown }) {
    expect(response.status, response.text).to.equal(202);
    const messages = await readEvents(browser, `/api/runs/${(response.body as { runId: number }).runId}/events`);
    return { state: runEndState(messages), lines: runLines(messages), text: JSON.stringify(messages) };
}
