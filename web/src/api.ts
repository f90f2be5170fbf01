import { useCallback, useEffect, useState } from 'preact/hooks';

/** An answer of the API that is not a success; `message` is the API's `{error}` text. */
export class ApiError extends Error {
    readonly status: number;
    readonly body: unknown;

    constructor(status: number, message: string, body?: unknown) {
        super(message);
        this.name = 'ApiError';
        this.status = status;
        this.body = body;
    }
}

export type Role = 'viewer' | 'editor' | 'admin';

export interface SessionUser {
    id: number;
    email: string;
    name: string;
    role: Role;
    totpEnabled?: boolean;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const CSRF_COOKIE = 'dp_csrf';

/** Pages a signed-out visitor may see: a 401 there is an answer, not an expired session. */
const PUBLIC_PAGES = ['/setup', '/sign-in', '/sign-in/mfa'];

/**
 * Calls whose 401 is the answer itself (a wrong password or code, or "nobody is signed in", which useSession
 * reports and the page turns into a visit to the sign-in page), never an expired session to act on here.
 */
const SIGN_IN_CALLS = ['/api/auth/me', '/api/auth/login', '/api/auth/mfa', '/api/auth/logout', '/api/setup'];

function cookieValue(name: string): string | undefined {
    for (const part of document.cookie.split(';')) {
        const [key, ...rest] = part.trim().split('=');
        if (key === name) {
            return decodeURIComponent(rest.join('='));
        }
    }

    return undefined;
}

/** The CSRF cookie is set by any GET under /api; a first write without one asks for it first. */
async function csrfToken(): Promise<string | undefined> {
    const existing = cookieValue(CSRF_COOKIE);
    if (existing !== undefined) {
        return existing;
    }

    await fetchRead('/api/setup/status', { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    return cookieValue(CSRF_COOKIE);
}

export function isPublicPage(pathname: string): boolean {
    return PUBLIC_PAGES.includes(pathname);
}

/** Where the browser goes when its session is gone: the sign-in page, then back to where it was. */
export function signInUrl(): string {
    const here = window.location.pathname + window.location.search;
    return here === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`;
}

function sendToSignIn(): void {
    clearSession();
    window.history.pushState(null, '', signInUrl());
    window.dispatchEvent(new PopStateEvent('popstate'));
}

function errorText(body: unknown, response: Response): string {
    if (body && typeof body === 'object' && 'error' in body && typeof body.error === 'string') {
        return body.error;
    }

    return response.statusText || `request failed (${response.status})`;
}

async function readBody(response: Response): Promise<unknown> {
    if (response.status === 204) {
        return undefined;
    }

    const type = response.headers.get('content-type') ?? '';
    if (type.includes('json')) {
        return (await response.json()) as unknown;
    }

    const text = await response.text();
    return text === '' ? undefined : text;
}

/** The pauses before asking a read again that got no answer at all. */
const READ_RETRY_PAUSES_MS = [250, 1000];

/**
 * A GET that failed before any answer (the connection dropped, the machine's network changed under the browser) is
 * asked again, twice, after a short pause: a read is safe to repeat, and a page must not take a dropped connection for
 * an answer (a session check that fails that way would send a signed-in person to the sign-in page).
 */
async function fetchRead(path: string, init: RequestInit): Promise<Response> {
    for (let attempt = 0; ; attempt += 1) {
        try {
            return await fetch(path, init);
        } catch (error) {
            const pause = READ_RETRY_PAUSES_MS[attempt];
            if (pause === undefined) {
                throw error;
            }

            await new Promise((resolve) => setTimeout(resolve, pause));
        }
    }
}

async function request<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (method !== 'GET') {
        const token = await csrfToken();
        if (token !== undefined) {
            headers['X-CSRF-Token'] = token;
        }
    }

    if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
    }

    const init: RequestInit = { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) };
    const response = method === 'GET' ? await fetchRead(path, init) : await fetch(path, init);
    const parsed = await readBody(response);
    if (!response.ok) {
        const expected = SIGN_IN_CALLS.includes(path.split('?')[0] ?? path) || isPublicPage(window.location.pathname);
        if (response.status === 401 && !expected) {
            sendToSignIn();
        }

        throw new ApiError(response.status, errorText(parsed, response), parsed);
    }

    return parsed as T;
}

export const api = {
    get: <T>(path: string): Promise<T> => request<T>('GET', path),
    post: <T>(path: string, body?: unknown): Promise<T> => request<T>('POST', path, body),
    put: <T>(path: string, body?: unknown): Promise<T> => request<T>('PUT', path, body),
    delete: <T>(path: string, body?: unknown): Promise<T> => request<T>('DELETE', path, body),
};

export interface ApiState<T> {
    data: T | undefined;
    error: ApiError | undefined;
    loading: boolean;
    reload(): void;
}

/** Any failure as an ApiError (a network failure or a thrown error: status 0), for the forms' error text. */
export function asApiError(error: unknown): ApiError {
    return error instanceof ApiError ? error : new ApiError(0, error instanceof Error ? error.message : String(error));
}

/** GETs `path` (nothing when null) and again on `reload()`; an answer for a path no longer asked for is dropped. */
export function useApi<T>(path: string | null): ApiState<T> {
    const [data, setData] = useState<T | undefined>(undefined);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const [loading, setLoading] = useState(path !== null);
    const [generation, setGeneration] = useState(0);

    useEffect(() => {
        if (path === null) {
            setLoading(false);
            return undefined;
        }

        let current = true;
        setLoading(true);
        api.get<T>(path).then(
            (answer) => {
                if (current) {
                    setData(answer);
                    setError(undefined);
                    setLoading(false);
                }
            },
            (failure: unknown) => {
                if (current) {
                    setError(asApiError(failure));
                    setLoading(false);
                }
            },
        );
        return () => {
            current = false;
        };
    }, [path, generation]);

    const reload = useCallback(() => setGeneration((value) => value + 1), []);
    return { data, error, loading, reload };
}

export interface RunEventMessage {
    type: 'line' | 'end';
    data: unknown;
}

const FIRST_RETRY_MS = 1_000;
const LONGEST_RETRY_MS = 15_000;

/**
 * Follows a run's log: each stored line as `line` (in order, without duplicates: the server resumes after the
 * last id seen), then one `end` with the run. The browser reconnects by itself after a dropped connection, with
 * Last-Event-ID; when it gives up (an error answer, the server restarting), the stream is opened again from the
 * last line seen, waiting longer each time. Returns the function that stops following.
 */
export function runEvents(runId: number, onEvent: (event: RunEventMessage) => void): () => void {
    let lastEventId = '';
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let retryDelay = FIRST_RETRY_MS;
    let stopped = false;

    const stop = () => {
        stopped = true;
        clearTimeout(retry);
        source?.close();
    };
    const open = () => {
        const query = lastEventId === '' ? '' : `?lastEventId=${encodeURIComponent(lastEventId)}`;
        source = new EventSource(`/api/runs/${runId}/events${query}`, { withCredentials: true });
        source.addEventListener('open', () => {
            retryDelay = FIRST_RETRY_MS;
        });
        source.addEventListener('event', (message: MessageEvent<string>) => {
            lastEventId = message.lastEventId || lastEventId;
            onEvent({ type: 'line', data: JSON.parse(message.data) as unknown });
        });
        source.addEventListener('end', (message: MessageEvent<string>) => {
            stop();
            onEvent({ type: 'end', data: JSON.parse(message.data) as unknown });
        });
        // A dropped stream is reopened here rather than by the browser, so that the lines after the last one seen are
        // asked for by name (the browser's own retry does not always say which it had).
        source.addEventListener('error', () => {
            source?.close();
            if (!stopped) {
                retry = setTimeout(open, retryDelay);
                retryDelay = Math.min(retryDelay * 2, LONGEST_RETRY_MS);
            }
        });
    };

    open();
    return stop;
}

interface SessionState {
    user: SessionUser | null;
    loading: boolean;
}

let session: SessionState = { user: null, loading: true };
let sessionRequest: Promise<void> | undefined;
const sessionListeners = new Set<(state: SessionState) => void>();

function publishSession(next: SessionState): void {
    session = next;
    for (const listener of sessionListeners) {
        listener(session);
    }
}

/** Asks the server who is signed in (again); everyone using `useSession` sees the answer. */
export function reloadSession(): Promise<void> {
    sessionRequest = api.get<{ user: SessionUser }>('/api/auth/me').then(
        ({ user }) => publishSession({ user, loading: false }),
        () => publishSession({ user: null, loading: false }),
    );
    return sessionRequest;
}

/** Sets the signed-in user from an answer that carries it (sign-in, second factor). */
export function setSessionUser(user: SessionUser | null): void {
    publishSession({ user, loading: false });
}

function clearSession(): void {
    publishSession({ user: null, loading: false });
}

export async function signOut(): Promise<void> {
    try {
        await api.post('/api/auth/logout');
    } finally {
        clearSession();
    }
}

export function useSession(): SessionState {
    const [state, setState] = useState(session);
    useEffect(() => {
        sessionListeners.add(setState);
        setState(session);
        if (sessionRequest === undefined) {
            void reloadSession();
        }

        return () => {
            sessionListeners.delete(setState);
        };
    }, []);
    return state;
}

export function canEdit(role: string | undefined): boolean {
    return role === 'editor' || role === 'admin';
}

export function isAdmin(role: string | undefined): boolean {
    return role === 'admin';
}

export interface LogStreamQuery {
    tail: number;
    /** Seconds since the epoch. */
    since?: number;
}

/** Closes a followed stream at its `end` event or on an error, telling `onEnd` why; answers what stops following. */
function endingWith(source: EventSource, onEnd: (reason: string) => void): () => void {
    source.addEventListener('end', (message: MessageEvent<string>) => {
        source.close();
        onEnd((JSON.parse(message.data) as { reason: string }).reason);
    });
    source.addEventListener('error', () => {
        source.close();
        onEnd('the connection to Gatehouse was lost');
    });
    return () => source.close();
}

/**
 * Follows an app's containers' resources (`GET /api/apps/{name}/stats/stream`): the kept history first, then each new
 * sample; `onEnd` when the server ends the stream. A lost connection is opened again, waiting longer each time.
 * Answers the function that stops it.
 */
export function followStats(
    app: string,
    onHistory: (history: unknown) => void,
    onSample: (sample: unknown) => void,
    onEnd: (reason: string) => void,
): () => void {
    let source: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let retryDelay = FIRST_RETRY_MS;
    const stop = () => {
        clearTimeout(retry);
        source?.close();
    };
    const open = () => {
        source = new EventSource(`/api/apps/${encodeURIComponent(app)}/stats/stream`, { withCredentials: true });
        source.addEventListener('history', (message: MessageEvent<string>) => {
            retryDelay = FIRST_RETRY_MS;
            onHistory(JSON.parse(message.data) as unknown);
        });
        source.addEventListener('sample', (message: MessageEvent<string>) => onSample(JSON.parse(message.data) as unknown));
        source.addEventListener('end', (message: MessageEvent<string>) => {
            stop();
            onEnd((JSON.parse(message.data) as { reason: string }).reason);
        });
        // A lost connection (a network change, the server restarting) is opened again: each opening starts with the
        // whole kept history, so nothing is missed or drawn twice.
        source.addEventListener('error', () => {
            source?.close();
            retry = setTimeout(open, retryDelay);
            retryDelay = Math.min(retryDelay * 2, LONGEST_RETRY_MS);
        });
    };
    open();
    return stop;
}

/**
 * Follows an app's logs (`GET /api/apps/{name}/logs/stream`): `onLine` with each line, `onEnd` with why the stream
 * ended (the containers stopped) or failed; answers what stops following.
 */
export function followLogs(
    app: string,
    query: LogStreamQuery,
    onLine: (line: unknown) => void,
    onEnd: (reason: string) => void,
): () => void {
    const search = new URLSearchParams({ tail: String(query.tail), ...(query.since === undefined ? {} : { since: String(query.since) }) });
    const source = new EventSource(`/api/apps/${encodeURIComponent(app)}/logs/stream?${search.toString()}`, { withCredentials: true });
    source.addEventListener('line', (message: MessageEvent<string>) => onLine(JSON.parse(message.data) as unknown));
    return endingWith(source, onEnd);
}
