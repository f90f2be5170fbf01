/** Server-Sent Events read over real HTTP, as a browser's EventSource would receive them. */
import Code from '@hapi/code';

import type { Browser } from '../helpers/browser.ts';

const { expect } = Code;

export interface SseMessage {
    id?: string;
    event: string;
    data: string;
}

function parseBlocks(text: string): SseMessage[] {
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

async function openStream(browser: Browser, path: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${browser.baseUrl}${path}`, { headers: { cookie, ...headers }, ...(signal ? { signal } : {}) });
    expect(response.status, await (response.status === 200 ? Promise.resolve('') : response.text())).to.equal(200);
    expect(String(response.headers.get('content-type'))).to.startWith('text/event-stream');
    return response;
}

/** Reads a Server-Sent Events stream over real HTTP until it closes. */
export async function readEvents(browser: Browser, path: string, headers: Record<string, string> = {}): Promise<SseMessage[]> {
    return parseBlocks(await (await openStream(browser, path, headers)).text());
}

export interface FollowedEvents {
    /** The messages received so far, whole ones only. */
    readonly messages: SseMessage[];
    /** Whether the server ended the stream. */
    readonly ended: boolean;
    /** Closes it from this side. */
    close(): void;
}

/** Follows a stream that may stay open: its messages gather as they arrive, until the server ends it or close(). */
export async function followEvents(browser: Browser, path: string): Promise<FollowedEvents> {
    const aborter = new AbortController();
    const response = await openStream(browser, path, {}, aborter.signal);
    const followed = { messages: [] as SseMessage[], ended: false, close: () => aborter.abort() };
    const reader = response.body?.getReader();
    if (!reader) throw new Error(`${path} answered no body`);
    const decoder = new TextDecoder();
    let pending = '';
    void (async () => {
        try {
            for (;;) {
                const { done, value } = await reader.read();
                if (done) break;
                pending += decoder.decode(value, { stream: true });
                const cut = pending.lastIndexOf('\n\n');
                if (cut >= 0) {
                    followed.messages.push(...parseBlocks(pending.slice(0, cut + 2)));
                    pending = pending.slice(cut + 2);
                }
            }
        } catch {
            // Aborted by close().
        }

        followed.ended = true;
    })();
    return followed;
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
    const lines = runLines(messages);
    return { state: runEndState(messages), lines, text: runLog(lines, messages) };
}

/** A run's log as its page shows it, one line per event and its end last: readable in an assertion's message. */
function runLog(lines: RunLine[], messages: SseMessage[]): string {
    const end = messages.find((message) => message.event === 'end');
    return [...lines.map((line) => `[${line.step}] ${line.level}: ${line.text}`), `end: ${end ? end.data : 'none'}`].join('\n');
}
