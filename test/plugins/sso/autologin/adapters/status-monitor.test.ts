import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { io } from 'socket.io-client';

import statusMonitor from '../../../../../plugins/sso/autologin/adapters/status-monitor.ts';
import { freePort } from '../../../../helpers/server.ts';
import { startUptimeKuma, type UptimeKumaStandIn } from '../../../../support/uptime-kuma.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ACCOUNT = { username: 'monitor', password: 'monitor-password' };

/** The token's worth, asked of the app as its web client asks: loginByToken. */
async function loginByToken(url: string, token: string): Promise<{ ok: boolean; username?: string }> {
    const socket = io(url, { transports: ['websocket'], reconnection: false });
    try {
        return await new Promise((resolve) => socket.once('connect', () => socket.emit('loginByToken', token, resolve)));
    } finally {
        socket.close();
    }
}

describe('auto-login adapter status-monitor (Uptime Kuma over socket.io)', () => {
    let kuma: UptimeKumaStandIn;
    let guarded: UptimeKumaStandIn;

    const request = (target: UptimeKumaStandIn, password = ACCOUNT.password) => ({
        upstream: target.url,
        origin: 'https://status.apps.test:8443',
        username: ACCOUNT.username,
        password,
        timeoutMs: 5000,
    });

    before(async () => {
        kuma = await startUptimeKuma(ACCOUNT);
        guarded = await startUptimeKuma({ ...ACCOUNT, twoFactor: true });
    });

    after(async () => {
        await kuma?.close();
        await guarded?.close();
    });

    it("logs in over the app's own socket.io login and hands over only its token, for localStorage", async () => {
        const outcome = await statusMonitor.signIn(request(kuma));
        expect(outcome.ok).to.be.true();
        if (!outcome.ok) return;
        expect(outcome.cookies).to.equal([]);
        expect(outcome.landing).to.equal('/');
        expect(Object.keys(outcome.storage).sort()).to.equal(['remember', 'token']);
        expect(await loginByToken(kuma.url, outcome.storage.token ?? '')).to.equal({ ok: true, username: 'monitor' });
    });

    it('a wrong password, an account with a second factor, or an app that is not there is a refusal with its reason', async () => {
        const wrong = await statusMonitor.signIn(request(kuma, 'wrong'));
        expect(wrong).to.equal({ ok: false, reason: 'the app refused the login: the user or password was refused' });
        const twoFactor = await statusMonitor.signIn(request(guarded));
        expect(twoFactor.ok).to.be.false();
        expect(!twoFactor.ok && twoFactor.reason).to.contain('two-factor');
        const gone = await statusMonitor.signIn({ ...request(kuma), upstream: `http://127.0.0.1:${await freePort()}` });
        expect(gone.ok).to.be.false();
        expect(!gone.ok && gone.reason).to.contain('could not be reached');
    });

    it("passes the app's WebSocket origin check, which a foreign origin does not", async () => {
        const foreign = io(kuma.url, {
            transports: ['websocket'],
            reconnection: false,
            extraHeaders: { origin: 'https://elsewhere.test' },
        });
        const refused = await new Promise<boolean>((resolve) => {
            foreign.once('connect', () => resolve(false));
            foreign.once('connect_error', () => resolve(true));
        });
        foreign.close();
        expect(refused).to.be.true();
        expect((await statusMonitor.signIn(request(kuma))).ok).to.be.true();
    });
});
