/** Driving Gatehouse's runs over HTTP for the benchmarks: the first administrator, a run started, its event stream followed. */
import Fs from 'node:fs';
import Path from 'node:path';

import { Browser } from '../test/helpers/browser.ts';

export const wallClock = () => performance.timeOrigin + performance.now();

export interface TimedEvent {
    at: number;
    step: string;
    text: string;
}

export interface FollowedRun {
    events: TimedEvent[];
    state: string;
    error: string | null;
    endAt: number;
}

/** Reads a run's event stream as it arrives, stamping each event with its receipt time; `onEvent` sees each one then. */
export async function followRun(
    admin: Browser,
    runId: number,
    onEvent: (event: TimedEvent) => void = () => undefined,
): Promise<FollowedRun> {
    const cookie = [...admin.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(`${admin.baseUrl}/api/runs/${runId}/events`, { headers: { cookie, accept: 'text/event-stream' } });
    if (response.status !== 200 || !response.body) {
        throw new Error(`GET /api/runs/${runId}/events: ${response.status}`);
    }

    const followed: FollowedRun = { events: [], state: '', error: null, endAt: Number.NaN };
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
        const at = wallClock();
        buffer += decoder.decode(chunk, { stream: true });
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const block of blocks.filter((candidate) => candidate.trim() !== '' && !candidate.startsWith(':'))) {
            const fields = new Map(
                block.split('\n').map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
            );
            const data = JSON.parse(fields.get('data') ?? '{}') as { step?: string; text?: string; state?: string; error?: string | null };
            if (fields.get('event') === 'end') {
                Object.assign(followed, { state: data.state ?? '', error: data.error ?? null, endAt: at });
            } else if (fields.get('event') === 'event') {
                const event = { at, step: data.step ?? '', text: data.text ?? '' };
                followed.events.push(event);
                onEvent(event);
            }
        }
    }

    if (followed.state === '') {
        throw new Error(`run ${runId}: the stream closed without an end event`);
    }

    return followed;
}

/** The first administrator, set up and signed in over HTTP as a person does it. */
export async function signIn(baseUrl: string, dataDir: string): Promise<Browser> {
    const admin = new Browser(baseUrl);
    await admin.get('/api/setup/status');
    const token = Fs.readFileSync(Path.join(dataDir, 'setup-token'), 'utf8').trim();
    const account = { email: 'bench@example.com', name: 'Bench', password: 'bench-password-1' };
    const setUp = await admin.post('/api/setup', { token, ...account });
    const signedIn = await admin.post('/api/auth/login', { email: account.email, password: account.password });
    if (setUp.status >= 300 || signedIn.status >= 300) {
        throw new Error(`sign-in failed: setup ${setUp.status} ${setUp.text}, login ${signedIn.status} ${signedIn.text}`);
    }

    return admin;
}

export async function startRun(admin: Browser, method: 'post' | 'delete', path: string, payload: unknown): Promise<number> {
    const response = await admin[method](path, payload);
    if (response.status !== 202) {
        throw new Error(`${method.toUpperCase()} ${path}: ${response.status} ${response.text}`);
    }

    return (response.body as { runId: number }).runId;
}
