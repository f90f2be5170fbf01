import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import form, { findLoginForm, formBody } from '../../../../../plugins/sso/autologin/adapters/form.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const LOGIN_FORM = `<html><body>
<form action="/search" method="get"><input name="q"></form>
<form method="post" action="/auth/login">
  <input type="hidden" name="csrf" value="TOKEN">
  <fieldset disabled><input name="ghost" value="x"></fieldset>
  <label>Email <input type="email" name="email"></label>
  <input type="password" name="secret">
  <input type="checkbox" name="remember" value="yes" checked>
  <input type="checkbox" name="newsletter">
  <select name="lang"><option value="de">de</option><option value="en" selected>en</option></select>
  <button type="submit" name="go" value="1">Sign in</button>
  <button type="submit" name="other" value="2">Other</button>
</form></body></html>`;

/** A small app with a CSRF-protected login form: a csrf cookie and hidden field, a session under /auth. */
function loginApp() {
    const seen: { hosts: string[]; forwardedHosts: string[] } = { hosts: [], forwardedHosts: [] };
    const server = Http.createServer((request, response) => {
        seen.hosts.push(request.headers.host ?? '');
        seen.forwardedHosts.push(String(request.headers['x-forwarded-host'] ?? ''));
        if (request.method === 'GET' && request.url === '/auth/login') {
            response.writeHead(200, { 'set-cookie': 'csrf=TOKEN; HttpOnly', 'content-type': 'text/html' }).end(LOGIN_FORM);
            return;
        }

        if (request.method === 'POST' && request.url === '/auth/login') {
            let body = '';
            request.on('data', (chunk: Buffer) => (body += chunk.toString()));
            request.on('end', () => {
                const fields = new URLSearchParams(body);
                const csrfOk = fields.get('csrf') === 'TOKEN' && (request.headers.cookie ?? '').includes('csrf=TOKEN');
                const account = fields.get('email') === 'ada@example.com' && fields.get('secret') === 'right';
                if (!csrfOk) response.writeHead(403).end('csrf');
                else if (!account) response.writeHead(200, { 'content-type': 'text/html' }).end(LOGIN_FORM);
                else response.writeHead(302, { location: '/home', 'set-cookie': 'session=S1; SameSite=Lax' }).end();
            });
            return;
        }

        response.writeHead(404).end();
    });
    return { server, seen };
}

describe('auto-login adapter form', () => {
    const app = loginApp();
    let upstream: string;
    const request = (password: string, loginPath?: string) => ({
        upstream,
        origin: 'https://app.apps.test:8443',
        ...(loginPath ? { loginPath } : {}),
        username: 'ada@example.com',
        password,
        timeoutMs: 5000,
    });

    before(async () => {
        await new Promise<void>((resolve) => app.server.listen(0, '127.0.0.1', resolve));
        upstream = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    });

    after(() => {
        app.server.close();
    });

    it('chooses the form with one password field and sends what a browser sends', () => {
        const chosen = findLoginForm(LOGIN_FORM);
        if (!chosen) throw new Error('no login form found');
        const { fields, usernameFound } = formBody(chosen, 'ada@example.com', 'pw');
        expect(usernameFound).to.be.true();
        expect(fields).to.equal([
            ['csrf', 'TOKEN'],
            ['email', 'ada@example.com'],
            ['secret', 'pw'],
            ['remember', 'yes'],
            ['lang', 'en'],
            ['go', '1'],
        ]);
        expect(findLoginForm('<form><input type="password" name="a"><input type="password" name="b"></form>')).to.not.exist();
    });

    it('finds the login page, keeps the CSRF token and cookie, and re-issues the session for the public host', async () => {
        const outcome = await form.signIn(request('right'));
        expect(outcome.ok, JSON.stringify(outcome)).to.be.true();
        if (!outcome.ok) return;
        expect(outcome.landing).to.equal('/home');
        const session = outcome.cookies.find((cookie) => cookie.name === 'session');
        // No Path given: the default path of the login request (/auth/login) is /auth; Secure, since the site is HTTPS.
        expect(session).to.include({ value: 'S1', path: '/auth', secure: true, httpOnly: false, sameSite: 'Lax' });
        expect(outcome.cookies.find((cookie) => cookie.name === 'csrf')).to.include({ httpOnly: true, path: '/auth' });
        // Host as nginx sends it (no port), the public host with its port as X-Forwarded-Host.
        expect(app.seen.hosts.at(-1)).to.equal('app.apps.test');
        expect(app.seen.forwardedHosts.at(-1)).to.equal('app.apps.test:8443');
    });

    it('a refused login (the form again) is a failure with its reason, after one attempt', async () => {
        const before = app.seen.hosts.length;
        const outcome = await form.signIn(request('wrong', '/auth/login'));
        expect(outcome).to.equal({ ok: false, reason: 'the app answered with its login form again: the user or password was refused' });
        expect(app.seen.hosts.length - before).to.equal(2);
    });

    it('no login form anywhere, or an app that does not answer, is a failure naming it', async () => {
        const none = await form.signIn(request('right', '/nowhere'));
        expect(none).to.equal({ ok: false, reason: 'no login form (one with a single password field) at /nowhere' });
        const gone = await form.signIn({ ...request('right'), upstream: 'http://127.0.0.1:1' });
        expect(gone.ok).to.be.false();
        expect(!gone.ok && gone.reason).to.contain('could not be reached');
    });

    describe('app-supplied URLs stay on the app', () => {
        /** A listener on another loopback port that records whatever reaches it, and answers a login form to lure a post. */
        const elsewhere = { requests: [] as string[], server: Http.createServer() };
        const hostileApp = Http.createServer();
        let hostileUpstream: string;
        let away: string;

        before(async () => {
            elsewhere.server.on('request', (request: Http.IncomingMessage, response: Http.ServerResponse) => {
                let body = '';
                request.on('data', (chunk: Buffer) => (body += chunk.toString()));
                request.on('end', () => {
                    elsewhere.requests.push(`${request.method} ${request.url} ${body}`);
                    response.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'planted=1' }).end(LOGIN_FORM);
                });
            });
            await new Promise<void>((resolve) => elsewhere.server.listen(0, '127.0.0.1', resolve));
            away = `127.0.0.1:${(elsewhere.server.address() as AddressInfo).port}`;
            const formTo = (action: string, method = 'post') =>
                `<form method="${method}" action="${action}"><input name="email"><input type="password" name="secret"></form>`;
            const pages: Record<string, (response: Http.ServerResponse) => void> = {
                'GET /absolute-action': (response) => response.writeHead(200).end(formTo(`http://${away}/steal`)),
                'GET /dotted-action': (response) => response.writeHead(200).end(formTo(`/.//${away}/steal`)),
                'GET /dotted-get-action': (response) => response.writeHead(200).end(formTo(`/.//${away}/steal`, 'get')),
                'GET /hop': (response) => response.writeHead(302, { location: `/.//${away}/login` }).end(),
                'GET /away': (response) => response.writeHead(302, { location: `http://${away}/login` }).end(),
                'GET /phish': (response) => response.writeHead(200).end(formTo('/phish')),
                'POST /phish': (response) =>
                    response.writeHead(302, { location: '/.//evil.example/phish', 'set-cookie': 'session=S2; Path=/' }).end(),
            };
            hostileApp.on('request', (request: Http.IncomingMessage, response: Http.ServerResponse) => {
                request.resume();
                request.on('end', () => (pages[`${request.method} ${request.url}`] ?? ((answer) => answer.writeHead(404).end()))(response));
            });
            await new Promise<void>((resolve) => hostileApp.listen(0, '127.0.0.1', resolve));
            hostileUpstream = `http://127.0.0.1:${(hostileApp.address() as AddressInfo).port}`;
        });

        after(() => {
            elsewhere.server.close();
            hostileApp.close();
        });

        const signInAt = (loginPath: string) => form.signIn({ ...request('right', loginPath), upstream: hostileUpstream });
        /** Each sign-in is refused as leading off the app, and nothing reached the other listener. */
        const expectRefusedAt = async (loginPaths: string[]) => {
            elsewhere.requests.length = 0;
            for (const loginPath of loginPaths) {
                const outcome = await signInAt(loginPath);
                expect(outcome.ok, loginPath).to.be.false();
                expect(!outcome.ok && outcome.reason, loginPath).to.contain("leads off the app's origin");
            }

            expect(elsewhere.requests).to.equal([]);
        };

        it('a login path that reads as another host after dot-segment removal is refused, and nothing reaches that host', async () => {
            await expectRefusedAt([`/.//${away}/login`, `/%2e//${away}/login`, `/a/..//${away}/login`]);
        });

        it('a form action on another origin, absolute or dotted, is refused and nothing is posted', async () => {
            await expectRefusedAt(['/absolute-action', '/dotted-action', '/dotted-get-action']);
        });

        it("a redirect off the app's origin, absolute or dotted, is refused and not followed", async () => {
            await expectRefusedAt(['/hop', '/away']);
        });

        it("the visitor's landing from the app's answer stays on the app's origin", async () => {
            const outcome = await signInAt('/phish');
            expect(outcome.ok, JSON.stringify(outcome)).to.be.true();
            expect(outcome.ok && outcome.landing).to.equal('/');
        });
    });
});
