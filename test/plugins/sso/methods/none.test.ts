import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { HostConfig } from '../../../../lib/config.ts';
import { methodCheckHelpers } from '../../../../plugins/deploy/domain/engine/access-steps.ts';
import { renderSite } from '../../../../plugins/deploy/domain/nginx/site-render.ts';
import none from '../../../../plugins/sso/methods/none.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const OPEN_PAGE = '<html><body>Welcome, no password asked here</body></html>';

async function listen(handler: Http.RequestListener): Promise<{ server: Http.Server; address: string }> {
    const server = Http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('sign-in method none: the check follows only redirects on the app', () => {
    const reached: string[] = [];
    let elsewhere: Awaited<ReturnType<typeof listen>>;
    let app: Awaited<ReturnType<typeof listen>>;
    /** Where the app sends a visitor of `/`. */
    let firstHop = '';

    before(async () => {
        // Another listener on loopback that answers a page without a password, and records whatever reaches it.
        elsewhere = await listen((request, response) => {
            reached.push(`${request.method} ${request.url}`);
            response.writeHead(200, { 'content-type': 'text/html' }).end(OPEN_PAGE);
        });
        app = await listen((request, response) => {
            if (request.url === '/') response.writeHead(302, { location: firstHop }).end();
            else if (request.url === '/open') response.writeHead(200, { 'content-type': 'text/html' }).end(OPEN_PAGE);
            else response.writeHead(200, { 'content-type': 'text/html' }).end('<form><input type="password" name="p"></form>');
        });
    });

    after(() => {
        elsewhere.server.close();
        app.server.close();
    });

    const checkWithFirstHop = async (location: string) => {
        firstHop = location;
        const site = renderSite({
            serverNames: ['notes.apps.test'],
            http: { port: 8080 },
            locations: [{ path: '/', proxyPass: `http://${app.address}` }],
        });
        const settings = { app: 'notes', domain: 'notes.apps.test', origin: 'https://notes.apps.test:8443' };
        return await none.check?.({ ...methodCheckHelpers, settings, site, host: {} as HostConfig, https: true });
    };

    it("follows the app's redirects on its own origin, absolute ones included", async () => {
        for (const location of ['/open', 'https://notes.apps.test:8443/open', 'http://notes.apps.test/open']) {
            const outcome = await checkWithFirstHop(location);
            expect(outcome, location).to.include({ ok: true, text: 'the app answers /open without its own login' });
        }
    });

    it('refuses a redirect that leads to another host, dotted or absolute, and asks nothing there', async () => {
        reached.length = 0;
        for (const location of [`/.//${elsewhere.address}/open`, `http://${elsewhere.address}/open`, '//evil.example/open']) {
            const outcome = await checkWithFirstHop(location);
            expect(outcome?.ok, location).to.be.false();
            expect(outcome?.text, location).to.contain("leads off the app's origin");
        }

        expect(reached).to.equal([]);
    });
});
