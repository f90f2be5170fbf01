/**
 * A rendered site served by the real nginx: the app is a loopback server that answers the path and headers it got,
 * the outpost one that knows a visitor by a cookie and answers with the identity headers, as authentik's does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import Fs from 'node:fs';
import Http from 'node:http';
import type Net from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { defaultSite, renderSite } from '../../../../../plugins/deploy/domain/nginx/site-model.ts';
import type { SiteSpec } from '../../../../../plugins/deploy/domain/nginx/site-types.ts';
import { AUTOLOGIN_PATH } from '../../../../../plugins/sso/methods/autologin.ts';
import header from '../../../../../plugins/sso/methods/header.ts';
import type { MethodSettings, SignInMethod } from '../../../../../plugins/sso/method-types.ts';
import saml from '../../../../../plugins/sso/methods/saml.ts';
import { freePort, temporaryDirectory } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { ensureNginx } from '../../../../support/nginx.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const nginx = ensureNginx();
const ACS = '/saml/acs';
const DOMAIN = 'archive.apps.test';
const SESSION = 'session=alice';
/** What the outpost answers for the signed-in visitor. */
const OUTPOST_ANSWER = {
    'X-authentik-username': 'alice',
    'X-authentik-email': 'alice@example.com',
    'X-authentik-name': 'Alice',
    'X-authentik-groups': 'archivists',
    'X-authentik-uid': 'uid-alice',
};
/** A visitor's forgeries of every header an app may take as the visitor's identity. */
const FORGED = Object.fromEntries(
    [
        'Remote-User',
        'Remote-Email',
        'Remote-Name',
        'Remote-Groups',
        'X-idp-username',
        'X-idp-email',
        'X-idp-name',
        'X-authentik-username',
        'X-authentik-email',
        'X-authentik-groups',
        'X-authentik-uid',
        'X-authentik-jwt',
        'X-authentik-meta-app',
        'X-Forwarded-User',
        'X-Remote-User',
        'X-WEBAUTH-USER',
        'X-Forwarded-Email',
        'X-Forwarded-Preferred-Username',
    ].map((name) => [name, 'mallory']),
);

interface Echo {
    url: string;
    headers: Record<string, string>;
}

interface Answer {
    status: number;
    location: string | undefined;
    echo: Echo | undefined;
}

function listen(handler: Http.RequestListener): Promise<Http.Server> {
    const server = Http.createServer(handler);
    return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const portOf = (server: Http.Server) => (server.address() as Net.AddressInfo).port;

function withMethod(method: SignInMethod, spec: SiteSpec, settings: MethodSettings): SiteSpec {
    if (!method.site) {
        throw new Error(`${method.title} changes no site`);
    }

    return method.site(spec, settings);
}

describe('nginx sites for real: no identity a visitor sends reaches the app', { skip: nginx === undefined, timeout: 60_000 }, () => {
    const prefix = temporaryDirectory('gatehouse-identity-nginx-');
    let app: Http.Server;
    let outpost: Http.Server;
    let nginxProcess: ChildProcess | undefined;
    let port: number;

    const request = (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}): Promise<Answer> =>
        new Promise((resolve, reject) => {
            const sent = Http.request(
                { host: '127.0.0.1', port, method, path, headers: { host: DOMAIN, ...headers }, agent: false },
                (response) => {
                    let body = '';
                    response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
                    response.once('end', () => {
                        const fromApp = response.headers['x-echo'] === 'app';
                        resolve({
                            status: response.statusCode ?? 0,
                            location: response.headers.location,
                            echo: fromApp ? (JSON.parse(body) as Echo) : undefined,
                        });
                    });
                },
            );
            sent.once('error', reject);
            sent.end(method === 'POST' ? 'SAMLResponse=x' : undefined);
        });

    const identityReceived = (echo: Echo | undefined) =>
        Object.fromEntries(
            Object.keys(FORGED).flatMap((name) =>
                echo?.headers[name.toLowerCase()] === undefined ? [] : [[name, echo.headers[name.toLowerCase()]]],
            ),
        );

    before(async () => {
        app = await listen((incoming, response) => {
            response.writeHead(200, { 'content-type': 'application/json', 'x-echo': 'app' });
            response.end(JSON.stringify({ url: incoming.url, headers: incoming.headers }));
        });
        outpost = await listen((incoming, response) => {
            const signedIn = incoming.url?.startsWith('/outpost.goauthentik.io/auth/nginx') && incoming.headers.cookie === SESSION;
            response.writeHead(signedIn ? 200 : 401, signedIn ? OUTPOST_ANSWER : {});
            response.end();
        });
        port = await freePort();
        const settings: MethodSettings = { app: 'archive', domain: DOMAIN, origin: `http://${DOMAIN}:${port}`, samlAcs: ACS };
        const site = defaultSite({
            domain: DOMAIN,
            upstreamPort: portOf(app),
            forwardAuth: { outpostUrl: `http://127.0.0.1:${portOf(outpost)}` },
        });
        const guarded: SiteSpec = {
            ...site,
            https: undefined,
            http: { port },
            listenAddress: '127.0.0.1',
            locations: [
                ...site.locations,
                { path: AUTOLOGIN_PATH, proxyPass: `http://127.0.0.1:${portOf(app)}/api/autologin/archive`, auth: true },
            ],
        };
        const text = renderSite(withMethod(header, withMethod(saml, guarded, settings), settings));
        const conf = [
            'worker_processes 1;',
            `pid ${prefix}/nginx.pid;`,
            'error_log stderr;',
            'events { worker_connections 64; }',
            'http {',
            '    access_log off;',
            ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${prefix}/${kind};`),
            `    include ${prefix}/site.conf;`,
            '}',
        ].join('\n');
        Fs.writeFileSync(Path.join(prefix, 'site.conf'), text);
        Fs.writeFileSync(Path.join(prefix, 'nginx.conf'), conf);
        nginxProcess = spawn(nginx as string, ['-p', prefix, '-c', Path.join(prefix, 'nginx.conf'), '-g', 'daemon off;'], {
            stdio: 'ignore',
        });
        await waitUntil('nginx answers', async () => (await request('GET', '/').catch(() => undefined))?.status === 302);
    });

    after(async () => {
        if (nginxProcess?.pid !== undefined && nginxProcess.exitCode === null) {
            const exited = new Promise((resolve) => nginxProcess?.once('exit', resolve));
            process.kill(nginxProcess.pid, 'SIGQUIT');
            await exited;
        }

        await new Promise((resolve) => app?.close(resolve));
        await new Promise((resolve) => outpost?.close(resolve));
        Fs.rmSync(prefix, { recursive: true, force: true });
    });

    it('serves the ACS without forward auth, with none of the forged headers, as its own path', async () => {
        const posted = await request('POST', ACS, { ...FORGED, 'content-type': 'application/x-www-form-urlencoded' });
        expect(posted.status).to.equal(200);
        expect(posted.echo?.url).to.equal(ACS);
        expect(identityReceived(posted.echo)).to.equal({});
        // A spelling that nginx normalises to the ACS reaches the app as the ACS, not as the path it names first.
        const spelled = await request('POST', '/admin/..%2Fsaml/acs?RelayState=1', FORGED);
        expect(spelled.echo?.url).to.equal(`${ACS}?RelayState=1`);
        expect(identityReceived(spelled.echo)).to.equal({});
    });

    it('keeps every path that merely starts with the ACS behind forward auth', async () => {
        for (const path of [`${ACS}X`, `${ACS}/x`, `${ACS}.php`]) {
            const answer = await request('GET', path, FORGED);
            expect(answer.status, path).to.equal(302);
            expect(answer.location, path).to.contain('/outpost.goauthentik.io/start?rd=');
            expect(answer.echo, path).to.be.undefined();
        }
    });

    it("passes only the outpost's answer to the app behind forward auth, at / and at Gatehouse's service path", async () => {
        for (const path of ['/', '/page?x=1', AUTOLOGIN_PATH]) {
            const answer = await request('GET', path, { ...FORGED, cookie: SESSION });
            expect(answer.status, path).to.equal(200);
            expect(identityReceived(answer.echo), path).to.equal({
                'Remote-User': 'alice',
                'Remote-Email': 'alice@example.com',
                'Remote-Name': 'Alice',
                'X-idp-username': 'alice',
                'X-idp-email': 'alice@example.com',
                'X-idp-name': 'Alice',
                'X-authentik-username': 'alice',
                'X-authentik-email': 'alice@example.com',
                'X-authentik-groups': 'archivists',
                'X-authentik-uid': 'uid-alice',
            });
        }
    });
});
