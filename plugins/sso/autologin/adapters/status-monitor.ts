/**
 * Uptime Kuma, the status-monitoring app (../shared/reference/autologin.md §2): it has no login form, its web client
 * logs in over socket.io (`login` with `{username, password, token}`, the token being a second-factor code) and keeps
 * the answered JWT in localStorage. Gatehouse logs in the same way and hands the browser only that token.
 */
import { io } from 'socket.io-client';

import type { AutoLoginAdapter, AutoLoginOutcome, AutoLoginRequest } from '../adapter-types.ts';

interface LoginAnswer {
    ok?: boolean;
    token?: string;
    tokenRequired?: boolean;
    msg?: string;
}

/** Uptime Kuma's message keys, as words. */
const REFUSALS: Record<string, string> = {
    authIncorrectCreds: 'the user or password was refused',
    authInvalidToken: 'the second-factor code was refused',
    authUserInactiveOrDeleted: 'the user is inactive or deleted',
};

function outcomeOf(answer: LoginAnswer): AutoLoginOutcome {
    if (answer.ok === true && typeof answer.token === 'string' && answer.token !== '') {
        return { ok: true, cookies: [], storage: { remember: '1', token: answer.token }, landing: '/' };
    }

    if (answer.tokenRequired) {
        return { ok: false, reason: 'the account has two-factor authentication on, which a shared account for auto-login cannot answer' };
    }

    const message = answer.msg ?? 'no reason given';
    return { ok: false, reason: `the app refused the login: ${REFUSALS[message] ?? message}` };
}

function login(request: AutoLoginRequest): Promise<AutoLoginOutcome> {
    const origin = new URL(request.origin);
    const socket = io(request.upstream, {
        transports: ['websocket'],
        reconnection: false,
        timeout: request.timeoutMs,
        // The app checks a WebSocket's Origin against its Host: both are the public ones, as a browser's would be.
        extraHeaders: { host: origin.host, origin: origin.origin, ...request.visitorHeaders },
    });
    return new Promise<AutoLoginOutcome>((resolve) => {
        const timer = setTimeout(
            () => resolve({ ok: false, reason: `the app did not answer within ${request.timeoutMs} ms` }),
            request.timeoutMs,
        );
        const finish = (outcome: AutoLoginOutcome) => {
            clearTimeout(timer);
            resolve(outcome);
        };
        socket.once('connect_error', (error: Error) =>
            finish({ ok: false, reason: `the app could not be reached at ${request.upstream} (${error.message})` }),
        );
        socket.once('connect', () => {
            socket.emit('login', { username: request.username, password: request.password, token: '' }, (answer: LoginAnswer) =>
                finish(outcomeOf(answer)),
            );
        });
    }).finally(() => socket.close());
}

const statusMonitor: AutoLoginAdapter = {
    title: "A status-monitoring app's socket.io login (Uptime Kuma)",
    signIn: login,
};

export default statusMonitor;
