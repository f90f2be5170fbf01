import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generate } from 'otplib';

import { Browser, signIn } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const PASSWORD = 'user-password-1';

interface ListedSession {
    id: number;
    createdAt: string;
    lastSeenAt: string;
    clientAddress: string;
    current: boolean;
}

async function emailOf(browser: Browser): Promise<string> {
    return ((await browser.get('/api/auth/me')).body as { user: { email: string } }).user.email;
}

/** Turns two factors on for the signed-in user. */
async function turnOnTwoFactors(browser: Browser): Promise<void> {
    const { secret } = (await browser.post('/api/account/totp/setup')).body as { secret: string };
    const enabled = await browser.post('/api/account/totp/enable', { code: await generate({ secret }) });
    expect(enabled.status, enabled.text).to.equal(200);
}

async function auditActions(server: DeployTestServer, email: string): Promise<string[]> {
    const rows = await server.context.server.app.knex('dp_audit').where({ target: email }).orderBy('id').select('action', 'outcome');
    return rows.map((row) => `${String(row.action)}:${String(row.outcome)}`);
}

describe('deploy manager: own recovery codes and sessions', { timeout: 60_000 }, () => {
    let server: DeployTestServer;

    before(async () => {
        server = await deployTestServer();
    });

    after(async () => {
        await server?.context.cleanup();
    });

    it('makes new recovery codes given the password or a current code; the old ones stop working', async () => {
        const browser = await server.signInAs('editor');
        const email = await emailOf(browser);
        expect((await browser.post('/api/account/totp/recovery-codes', { password: PASSWORD })).body).to.equal({
            error: 'two factors are off: turn them on first',
        });

        await turnOnTwoFactors(browser);
        const missing = await browser.post('/api/account/totp/recovery-codes', {});
        expect(missing.status).to.equal(422);
        expect(missing.body).to.equal({ error: 'give your password or a code from your app' });
        const wrong = await browser.post('/api/account/totp/recovery-codes', { password: 'not-the-password' });
        expect(wrong.status).to.equal(403);

        const first = await browser.post('/api/account/totp/recovery-codes', { password: PASSWORD });
        expect(first.status).to.equal(200);
        const firstCodes = (first.body as { recoveryCodes: string[] }).recoveryCodes;
        expect(firstCodes).to.have.length(10);
        // A recovery code proves it as well as a code from the app.
        const second = await browser.post('/api/account/totp/recovery-codes', { code: firstCodes[0] });
        expect(second.status, second.text).to.equal(200);
        const secondCodes = (second.body as { recoveryCodes: string[] }).recoveryCodes;
        expect(secondCodes).to.have.length(10);
        expect(secondCodes.some((code) => firstCodes.includes(code))).to.be.false();
        const stored = JSON.stringify(await server.context.server.app.knex('dp_recovery_codes').select('*'));
        for (const code of secondCodes) {
            expect(stored).to.not.contain(code);
        }

        // Only the new codes complete a sign-in.
        const later = new Browser(server.baseUrl);
        await later.get('/api/setup/status');
        expect((await later.post('/api/auth/login', { email, password: PASSWORD })).body).to.equal({ mfaRequired: true });
        expect((await later.post('/api/auth/mfa', { code: firstCodes[1] })).status).to.equal(401);
        expect((await later.post('/api/auth/mfa', { code: secondCodes[0] })).status).to.equal(200);

        expect(await auditActions(server, email)).to.include(['account.totp.recovery-codes:success']);
    });

    it("lists one's own sessions without their secrets, marks the current one, and ends another", async () => {
        const browser = await server.signInAs('viewer');
        const email = await emailOf(browser);
        const other = await signIn(server.baseUrl, email, PASSWORD);
        const stranger = await server.signInAs('viewer');

        const listed = await browser.get('/api/account/sessions');
        expect(listed.status).to.equal(200);
        const { sessions } = listed.body as { sessions: ListedSession[] };
        expect(sessions).to.have.length(2);
        expect(sessions.filter((session) => session.current)).to.have.length(1);
        for (const session of sessions) {
            expect(Object.keys(session).sort()).to.equal(['clientAddress', 'createdAt', 'current', 'id', 'lastSeenAt']);
            expect(session.clientAddress).to.equal('127.0.0.1');
            expect(session.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        }

        const cookieValues = [...browser.cookies.values(), ...other.cookies.values()].map(String);
        for (const value of cookieValues) {
            expect(listed.text).to.not.contain(value);
        }

        // Another user's session is not one's own to end.
        const strangerSessions = ((await stranger.get('/api/account/sessions')).body as { sessions: ListedSession[] }).sessions;
        expect((await browser.delete(`/api/account/sessions/${strangerSessions[0]?.id}`)).status).to.equal(404);
        expect((await stranger.get('/api/auth/me')).status).to.equal(200);

        const otherSession = sessions.find((session) => !session.current);
        expect((await browser.delete(`/api/account/sessions/${otherSession?.id}`)).status).to.equal(204);
        expect((await other.get('/api/auth/me')).status).to.equal(401);
        expect((await browser.get('/api/auth/me')).status).to.equal(200);
        const left = ((await browser.get('/api/account/sessions')).body as { sessions: ListedSession[] }).sessions;
        expect(left.map((session) => session.current)).to.equal([true]);
        expect(await auditActions(server, email)).to.include(['account.session.end:success']);
    });
});
