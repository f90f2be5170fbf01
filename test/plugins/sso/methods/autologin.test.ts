import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { signInServerSide } from '../../../../plugins/sso/methods/autologin.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('auto-login: the login path is a path on the app', () => {
    const reached: string[] = [];
    let listener: Http.Server;
    let address: string;

    before(async () => {
        // Stands for the app and for any other host at once: whatever reaches it is recorded.
        listener = Http.createServer((request, response) => {
            reached.push(`${request.method} ${request.url}`);
            response
                .writeHead(200, { 'content-type': 'text/html' })
                .end('<form method="post"><input name="u"><input type="password" name="p"></form>');
        });
        await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
        address = `127.0.0.1:${(listener.address() as AddressInfo).port}`;
    });

    after(() => {
        listener.close();
    });

    it('refuses a stored login path that is not one before the adapter sends anything', async () => {
        const settings = {
            app: 'wiki',
            domain: 'wiki.apps.test',
            origin: 'https://wiki.apps.test:8443',
            sharedUser: 'admin',
            sharedPassword: 'shared-secret',
            login: { adapter: 'form', path: `/a/%2e%2e//${address}/x` },
        };
        const outcome = await signInServerSide(settings, `http://${address}`);
        expect(outcome).to.equal({
            ok: false,
            reason: `refused: the login path "/a/%2e%2e//${address}/x" must be a path on the app: /, then no //, no . or .. segment, no backslash, space or control character`,
        });
        expect(reached).to.equal([]);
    });
});
