/**
 * An Uptime Kuma stand-in for the status-monitor auto-login: socket.io 4 on 127.0.0.1 speaking the events its web
 * client uses (../shared/reference/autologin.md §2): `info` and `loginRequired` on connect, `login` answering a JWT
 * (or tokenRequired, authIncorrectCreds, the global rate limit), `loginByToken`; a WebSocket's Origin must match its
 * Host. `/` is a page that, like Uptime Kuma's client, reads localStorage.token and logs in with it.
 */
import Crypto from 'node:crypto';
import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import { Server } from 'socket.io';

export interface UptimeKumaOptions {
    username: string;
    password: string;
    /** Two-factor authentication on: a login without a code answers tokenRequired. */
    twoFactor?: boolean;
    port?: number;
}

export interface UptimeKumaStandIn {
    url: string;
    port: number;
    /** Logins attempted over socket.io, and how many succeeded. */
    logins: { attempted: number; succeeded: number };
    close(): Promise<void>;
}

const LOGIN_LIMIT_PER_MINUTE = 20;

const PAGE = `<!doctype html><html><head><title>Uptime Kuma</title><script src="/socket.io/socket.io.js"></script></head>
<body data-state="loading"><h1>Uptime Kuma</h1><p id="who"></p><script>
const socket = io({ transports: ['websocket'] });
socket.on('loginRequired', () => {
  const token = localStorage.getItem('token');
  if (!token) { document.body.dataset.state = 'login-required'; return; }
  socket.emit('loginByToken', token, (answer) => {
    document.body.dataset.state = answer.ok ? 'signed-in' : 'refused';
    document.getElementById('who').textContent = answer.ok ? 'Signed in as ' + answer.username : answer.msg;
  });
});
</script></body></html>`;

function signToken(secret: Buffer, username: string): string {
    const payload = Buffer.from(JSON.stringify({ username })).toString('base64url');
    const signature = Crypto.createHmac('sha256', secret).update(payload).digest('base64url');
    return `${payload}.${signature}`;
}

function userOfToken(secret: Buffer, token: unknown): string | undefined {
    const [payload = '', signature = ''] = typeof token === 'string' ? token.split('.') : [];
    const expected = Crypto.createHmac('sha256', secret).update(payload).digest('base64url');
    if (signature.length !== expected.length || !Crypto.timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) {
        return undefined;
    }

    return (JSON.parse(Buffer.from(payload, 'base64url').toString()) as { username?: string }).username;
}

export async function startUptimeKuma(options: UptimeKumaOptions): Promise<UptimeKumaStandIn> {
    const secret = Crypto.randomBytes(32);
    const logins = { attempted: 0, succeeded: 0 };
    const recent: number[] = [];
    const http = Http.createServer((request, response) => {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    });
    const io = new Server(http, {
        allowRequest: (request, callback) => {
            const origin = request.headers.origin;
            const allowed = origin === undefined || new URL(origin).host === request.headers.host;
            callback(allowed ? null : 'origin not allowed', allowed);
        },
    });
    io.on('connection', (socket) => {
        socket.emit('info', { version: '2.0.0-stand-in' });
        socket.on('login', (data: { username?: string; password?: string; token?: string }, ack: (answer: object) => void) => {
            logins.attempted += 1;
            const now = Date.now();
            recent.push(now);
            while ((recent[0] ?? now) < now - 60_000) recent.shift();
            if (recent.length > LOGIN_LIMIT_PER_MINUTE) return ack({ ok: false, msg: 'Too frequently, try again later.' });
            if (data.username !== options.username || data.password !== options.password) {
                return ack({ ok: false, msg: 'authIncorrectCreds', msgi18n: true });
            }

            if (options.twoFactor && !data.token) return ack({ tokenRequired: true });
            logins.succeeded += 1;
            return ack({ ok: true, token: signToken(secret, options.username) });
        });
        socket.on('loginByToken', (token: unknown, ack: (answer: object) => void) => {
            const username = userOfToken(secret, token);
            ack(username ? { ok: true, username } : { ok: false, msg: 'authInvalidToken', msgi18n: true });
        });
        socket.emit('loginRequired');
    });
    await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
    const port = (http.address() as AddressInfo).port;
    return {
        url: `http://127.0.0.1:${port}`,
        port,
        logins,
        close: async () => {
            await io.close();
            http.closeAllConnections();
        },
    };
}
