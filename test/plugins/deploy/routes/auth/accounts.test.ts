import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { generate } from 'otplib';

import { Browser, signIn } from '../../../../helpers/browser.ts';
import { createTestServer, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ADMIN = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };
const OWNER = { email: 'owner@example.com', password: 'owner-password-1' };

interface UserBody {
    user: { id: number; email: string; role: string; totpEnabled: boolean };
}

async function startServer(environment: Record<string, string> = {}): Promise<{ context: TestServer; baseUrl: string }> {
    const context = await createTestServer(environment);
    await context.server.start();
    return { context, baseUrl: `http://127.0.0.1:${context.server.info.port}` };
}

async function completeSetup(context: TestServer, baseUrl: string): Promise<Browser> {
    const token = Fs.readFileSync(Path.join(context.dataDir, 'setup-token'), 'utf8').trim();
    const browser = new Browser(baseUrl);
    await browser.get('/api/setup/status');
    const response = await browser.post('/api/setup', { token, ...ADMIN });
    expect(response.status, response.text).to.equal(201);
    return browser;
}

describe('deploy manager: first run', () => {
    let context: TestServer;
    let baseUrl: string;

    before(async () => {
        ({ context, baseUrl } = await startServer());
    });

    after(async () => {
        await context.cleanup();
    });

    it('writes a one-time setup token (mode 0600) and creates the first administrator with it, once', async () => {
        const tokenFile = Path.join(context.dataDir, 'setup-token');
        expect(Fs.statSync(tokenFile).mode & 0o777).to.equal(0o600);
        const browser = new Browser(baseUrl);
        const status = await browser.get('/api/setup/status');
        expect(status.body).to.equal({ needsSetup: true, oidcEnabled: false, tokenFile });
        expect(browser.cookies.has('dp_csrf')).to.be.true();

        const wrong = await browser.post('/api/setup', { token: 'not-the-token', ...ADMIN });
        expect(wrong.status).to.equal(403);
        expect(wrong.body).to.equal({ error: 'the setup token is not valid' });
        const token = Fs.readFileSync(tokenFile, 'utf8').trim();
        const invalid = await browser.post('/api/setup', { token, email: 'x', name: 'x', password: 'short' });
        expect(invalid.status).to.equal(422);
        expect(await context.database.knex('dp_users')).to.equal([]);

        const done = await browser.post('/api/setup', { token, ...ADMIN });
        expect(done.status).to.equal(201);
        expect((done.body as UserBody).user).to.include({ email: ADMIN.email, role: 'admin' });
        expect(Fs.existsSync(tokenFile)).to.be.false();
        const again = await browser.post('/api/setup', { token, ...ADMIN, email: 'second@example.com' });
        expect(again.status).to.equal(409);
        expect((await browser.get('/api/setup/status')).body).to.equal({ needsSetup: false, oidcEnabled: false });
    });
});

describe('deploy manager: sessions, CSRF and origin', () => {
    let context: TestServer;
    let baseUrl: string;

    before(async () => {
        ({ context, baseUrl } = await startServer());
        await completeSetup(context, baseUrl);
    });

    after(async () => {
        await context.cleanup();
    });

    it('signs in with an HttpOnly, SameSite=Lax session cookie, and signs out', async () => {
        const browser = new Browser(baseUrl);
        expect((await browser.get('/api/auth/me')).status).to.equal(401);
        const login = await browser.post('/api/auth/login', { email: 'ADMIN@example.com', password: ADMIN.password });
        expect(login.status).to.equal(200);
        expect((login.body as { mfaRequired: boolean }).mfaRequired).to.be.false();
        const cookie = login.setCookies.find((header) => header.startsWith('dp_session='));
        expect(cookie).to.contain('HttpOnly');
        expect(cookie).to.contain('SameSite=Lax');
        expect(cookie).to.not.contain('Secure');
        expect(((await browser.get('/api/auth/me')).body as UserBody).user.email).to.equal(ADMIN.email);

        const stolen = browser.cookies.get('dp_session') ?? '';
        expect((await browser.post('/api/auth/logout')).status).to.equal(204);
        expect((await browser.get('/api/auth/me')).status).to.equal(401);
        const replay = new Browser(baseUrl);
        replay.cookies.set('dp_session', stolen);
        expect((await replay.get('/api/auth/me')).status).to.equal(401);
    });

    it('refuses a wrong password with 401 and the same answer for an unknown e-mail', async () => {
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        const wrong = await browser.post('/api/auth/login', { email: ADMIN.email, password: 'wrong-password' });
        const unknown = await browser.post('/api/auth/login', { email: 'nobody@example.com', password: 'wrong-password' });
        expect(wrong.status).to.equal(401);
        expect(unknown.body).to.equal(wrong.body);
    });

    it('refuses a non-GET request without the CSRF header, with a wrong one, and from another origin', async () => {
        const browser = await signIn(baseUrl, ADMIN.email, ADMIN.password);
        const missing = await browser.put('/api/account/profile', { name: 'x' }, { csrf: false });
        expect(missing.status).to.equal(403);
        expect(Object.keys(missing.body as object)).to.equal(['error']);
        const wrong = await browser.put('/api/account/profile', { name: 'x' }, { csrf: false, headers: { 'x-csrf-token': 'forged' } });
        expect(wrong.status).to.equal(403);
        const foreign = await browser.put('/api/account/profile', { name: 'x' }, { headers: { origin: 'http://evil.example' } });
        expect(foreign.status).to.equal(403);
        expect(foreign.body).to.equal({ error: 'origin not allowed' });
        const own = await browser.put('/api/account/profile', { name: 'Ada' }, { headers: { origin: 'http://127.0.0.1:3000' } });
        expect(own.status).to.equal(200);
    });

    it('limits failed logins per account with 429 and Retry-After', async () => {
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        const email = 'limited@example.com';
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 6; attempt += 1) {
            statuses.push((await browser.post('/api/auth/login', { email, password: 'wrong-password' })).status);
        }

        expect(statuses).to.equal([401, 401, 401, 401, 401, 429]);
        const limited = await browser.post('/api/auth/login', { email, password: 'wrong-password' });
        expect(Number(limited.headers.get('retry-after'))).to.be.above(0);
        expect(limited.body).to.equal({ error: 'too many failed attempts; try again later' });
    });
});

describe('deploy manager: failed sign-ins per client address', () => {
    it('limits failures from one address across accounts, with the limits from the environment', async () => {
        const { context, baseUrl } = await startServer({ LOGIN_MAX_FAILURES_PER_ADDRESS: '3', LOGIN_WINDOW_SECONDS: '60' });
        try {
            const browser = new Browser(baseUrl);
            await browser.get('/api/auth/me');
            const statuses: number[] = [];
            for (const email of ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']) {
                statuses.push((await browser.post('/api/auth/login', { email, password: 'wrong-password' })).status);
            }

            expect(statuses).to.equal([401, 401, 401, 429]);
            const limited = await browser.post('/api/auth/login', { email: 'e@example.com', password: 'wrong-password' });
            expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
        } finally {
            await context.cleanup();
        }
    });
});

describe('deploy manager: sign-in throttling that spares the owner', () => {
    let context: TestServer;
    let baseUrl: string;

    before(async () => {
        ({ context, baseUrl } = await startServer({ TRUSTED_PROXIES: '127.0.0.1/32,::1' }));
        const admin = await completeSetup(context, baseUrl);
        await admin.post('/api/auth/login', { email: ADMIN.email, password: ADMIN.password });
        const created = await admin.post('/api/admin/users', { ...OWNER, name: 'Owen Owner', role: 'editor' });
        expect(created.status, created.text).to.equal(201);
    });

    after(async () => {
        await context.cleanup();
    });

    /** A sign-in as if from `address`, which the trusted proxy on 127.0.0.1 names in X-Forwarded-For. */
    const loginFrom = async (address: string, email: string, password: string) => {
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        const headers = { 'x-forwarded-for': address };
        return { browser, response: await browser.post('/api/auth/login', { email, password }, { headers }) };
    };

    it('lets the owner in from another address after 5 failures from an attacker address', async () => {
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 6; attempt += 1) {
            statuses.push((await loginFrom('203.0.113.66', ADMIN.email, 'wrong-password')).response.status);
        }

        expect(statuses).to.equal([401, 401, 401, 401, 401, 429]);
        expect((await loginFrom('203.0.113.66', ADMIN.email, ADMIN.password)).response.status).to.equal(429);
        expect((await loginFrom('198.51.100.7', ADMIN.email, ADMIN.password)).response.status).to.equal(200);
    });

    it('records the address a trusted proxy forwards in the audit log and the session', async () => {
        const { response } = await loginFrom('198.51.100.8, 127.0.0.1', ADMIN.email, ADMIN.password);
        expect(response.status).to.equal(200);
        const entry = await context.database
            .knex('dp_audit')
            .where({ action: 'auth.login', outcome: 'success' })
            .orderBy('id', 'desc')
            .first('client_address');
        expect(entry.client_address).to.equal('198.51.100.8');
        const session = await context.database.knex('dp_sessions').orderBy('id', 'desc').first('client_address');
        expect(session.client_address).to.equal('198.51.100.8');
    });

    it('counts wrong current passwords and codes inside a session as failures of the account and address', async () => {
        const { browser } = await loginFrom('198.51.100.9', OWNER.email, OWNER.password);
        const headers = { 'x-forwarded-for': '198.51.100.9' };
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 3; attempt += 1) {
            const payload = { currentPassword: 'wrong-password', newPassword: 'new-password-12' };
            statuses.push((await browser.post('/api/account/password', payload, { headers })).status);
        }

        for (const payload of [{ password: 'wrong-password' }, { code: '000000' }]) {
            statuses.push((await browser.post('/api/account/totp/disable', payload, { headers })).status);
        }

        const payload = { currentPassword: OWNER.password, newPassword: 'new-password-12' };
        statuses.push((await browser.post('/api/account/password', payload, { headers })).status);
        expect(statuses).to.equal([403, 403, 403, 403, 403, 429]);
        expect((await loginFrom('198.51.100.9', OWNER.email, OWNER.password)).response.status).to.equal(429);
        expect((await loginFrom('198.51.100.10', OWNER.email, OWNER.password)).response.status).to.equal(200);
    });
});

describe('deploy manager: X-Forwarded-For without a trusted proxy', () => {
    it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
        const { context, baseUrl } = await startServer();
        try {
            await completeSetup(context, baseUrl);
            for (let attempt = 0; attempt < 5; attempt += 1) {
                const browser = new Browser(baseUrl);
                await browser.get('/api/auth/me');
                const headers = { 'x-forwarded-for': `203.0.113.${attempt}` };
                expect((await browser.post('/api/auth/login', { email: ADMIN.email, password: 'wrong' }, { headers })).status).to.equal(
                    401,
                );
            }

            const browser = new Browser(baseUrl);
            await browser.get('/api/auth/me');
            const headers = { 'x-forwarded-for': '198.51.100.1' };
            const refused = await browser.post('/api/auth/login', { email: ADMIN.email, password: ADMIN.password }, { headers });
            expect(refused.status).to.equal(429);
            const entry = await context.database
                .knex('dp_audit')
                .where({ action: 'auth.login' })
                .orderBy('id', 'desc')
                .first('client_address');
            expect(entry.client_address).to.equal('127.0.0.1');
        } finally {
            await context.cleanup();
        }
    });
});

describe('deploy manager: two factors', () => {
    let context: TestServer;
    let baseUrl: string;
    let admin: Browser;
    let people = 0;

    before(async () => {
        ({ context, baseUrl } = await startServer());
        await completeSetup(context, baseUrl);
        admin = await signIn(baseUrl, ADMIN.email, ADMIN.password);
    });

    after(async () => {
        await context.cleanup();
    });

    /** A person of the test's own, so that each test passes alone (withTwoFactors: with two factors already on). */
    const person = async () => {
        people += 1;
        const account = { email: `factor${people}@example.com`, password: `factor-password-${people}` };
        const created = await admin.post('/api/admin/users', { ...account, name: `Factor ${people}`, role: 'viewer' });
        expect(created.status, created.text).to.equal(201);
        return account;
    };
    const withTwoFactors = async () => {
        const account = await person();
        const browser = await signIn(baseUrl, account.email, account.password);
        const { secret } = (await browser.post('/api/account/totp/setup')).body as { secret: string };
        const enabled = await browser.post('/api/account/totp/enable', { code: await generate({ secret }) });
        expect(enabled.status, enabled.text).to.equal(200);
        return { ...account, secret, recoveryCodes: (enabled.body as { recoveryCodes: string[] }).recoveryCodes };
    };

    it('sets TOTP up with a QR code, enables it only with a valid code, and shows recovery codes once', async () => {
        const account = await person();
        const browser = await signIn(baseUrl, account.email, account.password);
        const setup = await browser.post('/api/account/totp/setup');
        expect(setup.status).to.equal(200);
        const body = setup.body as { secret: string; otpauthUri: string; qrCode: string };
        expect(body.otpauthUri).to.startWith('otpauth://totp/Gatehouse:');
        expect(body.qrCode).to.startWith('data:image/png;base64,');
        const { secret } = body;
        expect((await browser.post('/api/account/totp/enable', { code: '000000' })).status).to.equal(422);
        const enabled = await browser.post('/api/account/totp/enable', { code: await generate({ secret }) });
        expect(enabled.status).to.equal(200);
        expect((enabled.body as { recoveryCodes: string[] }).recoveryCodes.length).to.equal(10);
        const stored = JSON.stringify(await context.database.knex('dp_users').select('*'));
        expect(stored).to.not.contain(secret);
    });

    it('asks for the code after the password; the pending session reaches nothing else', async () => {
        const { email, password, secret } = await withTwoFactors();
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        const login = await browser.post('/api/auth/login', { email, password });
        expect(login.body).to.equal({ mfaRequired: true });
        expect((await browser.get('/api/auth/me')).status).to.equal(401);
        expect((await browser.get('/api/dashboard')).status).to.equal(401);
        expect((await browser.put('/api/account/profile', { name: 'x' })).status).to.equal(401);
        expect((await browser.post('/api/auth/mfa', { code: '123456' })).status).to.equal(401);
        // The current step's code was spent enabling two factors; the next step's is within the allowed drift.
        const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
        const passed = await browser.post('/api/auth/mfa', { code });
        expect(passed.status).to.equal(200);
        expect(((await browser.get('/api/auth/me')).body as UserBody).user.totpEnabled).to.be.true();

        const second = new Browser(baseUrl);
        await second.get('/api/auth/me');
        await second.post('/api/auth/login', { email, password });
        const replayed = await second.post('/api/auth/mfa', { code });
        expect(replayed.status).to.equal(401);
        expect((replayed.body as { error: string }).error).to.contain('already used');
        const wrong = await second.post('/api/auth/mfa', { code: code === '000000' ? '111111' : '000000' });
        expect((wrong.body as { error: string }).error).to.equal('the code is not valid');
    });

    it('lets a person who left the code page unfinished sign in again with the password, and reach public pages meanwhile', async () => {
        const { email, password } = await withTwoFactors();
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        expect((await browser.post('/api/auth/login', { email, password })).body).to.equal({ mfaRequired: true });
        expect((await browser.get('/api/setup/status')).status).to.equal(200);
        const again = await browser.post('/api/auth/login', { email, password });
        expect(again.status, again.text).to.equal(200);
        expect(again.body).to.equal({ mfaRequired: true });
        expect((await browser.get('/api/dashboard')).status).to.equal(401);
    });

    it('takes a recovery code once', async () => {
        const { email, password, recoveryCodes } = await withTwoFactors();
        const code = recoveryCodes[0] ?? '';
        const first = new Browser(baseUrl);
        await first.get('/api/auth/me');
        await first.post('/api/auth/login', { email, password });
        expect((await first.post('/api/auth/mfa', { code })).status).to.equal(200);
        const second = new Browser(baseUrl);
        await second.get('/api/auth/me');
        await second.post('/api/auth/login', { email, password });
        expect((await second.post('/api/auth/mfa', { code })).status).to.equal(401);
    });

    it('turns two factors off with the password', async () => {
        const { email, password, recoveryCodes } = await withTwoFactors();
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        await browser.post('/api/auth/login', { email, password });
        expect((await browser.post('/api/auth/mfa', { code: recoveryCodes[1] })).status).to.equal(200);
        expect((await browser.post('/api/account/totp/disable', {})).status).to.equal(422);
        expect((await browser.post('/api/account/totp/disable', { password: 'wrong-password' })).status).to.equal(403);
        expect((await browser.post('/api/account/totp/disable', { password })).status).to.equal(200);
        const again = await signIn(baseUrl, email, password);
        expect(((await again.get('/api/auth/me')).body as UserBody).user.totpEnabled).to.be.false();
    });
});

describe('deploy manager: roles, users and the audit log', () => {
    let context: TestServer;
    let baseUrl: string;
    let admin: Browser;

    before(async () => {
        ({ context, baseUrl } = await startServer());
        admin = await completeSetup(context, baseUrl);
        await admin.post('/api/auth/login', { email: ADMIN.email, password: ADMIN.password });
    });

    after(async () => {
        await context.cleanup();
    });

    const createUser = async (email: string, role: string) => {
        const response = await admin.post('/api/admin/users', { email, name: email.split('@')[0], password: 'user-password-1', role });
        expect(response.status, response.text).to.equal(201);
        return (response.body as UserBody).user;
    };

    it("gates each group by role: 401 without a session, 403 below the route's role", async () => {
        await createUser('viewer@example.com', 'viewer');
        await createUser('editor@example.com', 'editor');
        const anonymous = new Browser(baseUrl);
        expect((await anonymous.get('/api/dashboard')).status).to.equal(401);
        expect((await anonymous.get('/api/admin/users')).status).to.equal(401);
        const viewer = await signIn(baseUrl, 'viewer@example.com', 'user-password-1');
        expect((await viewer.get('/api/dashboard')).status).to.equal(200);
        expect((await viewer.get('/api/system')).status).to.equal(200);
        expect((await viewer.get('/api/admin/users')).status).to.equal(403);
        expect((await viewer.get('/api/admin/audit')).status).to.equal(403);
        const editor = await signIn(baseUrl, 'editor@example.com', 'user-password-1');
        expect((await editor.get('/api/admin/users')).status).to.equal(403);
        expect((await admin.get('/api/admin/users')).status).to.equal(200);
    });

    it('refuses a duplicate e-mail (409), a bad role or e-mail (422)', async () => {
        await createUser('twice@example.com', 'viewer');
        expect(
            (await admin.post('/api/admin/users', { email: 'twice@example.com', name: 'v', password: 'user-password-1', role: 'viewer' }))
                .status,
        ).to.equal(409);
        expect(
            (await admin.post('/api/admin/users', { email: 'x@example.com', name: 'x', password: 'user-password-1', role: 'root' })).status,
        ).to.equal(422);
        expect(
            (await admin.post('/api/admin/users', { email: 'not-an-email', name: 'x', password: 'user-password-1', role: 'viewer' }))
                .status,
        ).to.equal(422);
    });

    it("ends a user's sessions when they are disabled or their password is reset", async () => {
        const user = await createUser('temp@example.com', 'editor');
        const browser = await signIn(baseUrl, 'temp@example.com', 'user-password-1');
        expect((await browser.get('/api/auth/me')).status).to.equal(200);
        expect((await admin.put(`/api/admin/users/${user.id}`, { disabled: true })).status).to.equal(200);
        expect((await browser.get('/api/auth/me')).status).to.equal(401);
        const refused = await new Browser(baseUrl).post('/api/auth/login', { email: 'temp@example.com', password: 'user-password-1' });
        expect([401, 403]).to.include(refused.status);
        await admin.put(`/api/admin/users/${user.id}`, { disabled: false });
        const again = await signIn(baseUrl, 'temp@example.com', 'user-password-1');
        await admin.put(`/api/admin/users/${user.id}`, { password: 'reset-password-1' });
        expect((await again.get('/api/auth/me')).status).to.equal(401);
        await signIn(baseUrl, 'temp@example.com', 'reset-password-1');
    });

    it('ends the other sessions when users change their own password', async () => {
        await createUser('changer@example.com', 'viewer');
        const first = await signIn(baseUrl, 'changer@example.com', 'user-password-1');
        const second = await signIn(baseUrl, 'changer@example.com', 'user-password-1');
        expect((await first.post('/api/account/password', { currentPassword: 'wrong', newPassword: 'new-password-12' })).status).to.equal(
            403,
        );
        expect(
            (await first.post('/api/account/password', { currentPassword: 'user-password-1', newPassword: 'new-password-12' })).status,
        ).to.equal(200);
        expect((await first.get('/api/auth/me')).status).to.equal(200);
        expect((await second.get('/api/auth/me')).status).to.equal(401);
    });

    it('never lets the last active administrator be demoted, disabled or deleted', async () => {
        const me = ((await admin.get('/api/auth/me')).body as UserBody).user;
        expect((await admin.put(`/api/admin/users/${me.id}`, { role: 'editor' })).status).to.equal(422);
        expect((await admin.put(`/api/admin/users/${me.id}`, { disabled: true })).status).to.equal(422);
        expect((await admin.delete(`/api/admin/users/${me.id}`)).status).to.equal(422);
        const other = await createUser('second-admin@example.com', 'admin');
        expect((await admin.put(`/api/admin/users/${other.id}`, { role: 'viewer' })).status).to.equal(200);
        expect((await admin.delete(`/api/admin/users/${other.id}`)).status).to.equal(204);
        expect((await admin.delete(`/api/admin/users/${other.id}`)).status).to.equal(404);
    });

    it('records sign-ins, failures and user changes in the audit log, without secrets', async () => {
        // What the entries are of: a sign-in, a user made, promoted, demoted and deleted, a wrong current password.
        const clerk = await createUser('clerk@example.com', 'admin');
        expect((await admin.put(`/api/admin/users/${clerk.id}`, { role: 'viewer' })).status).to.equal(200);
        const own = await signIn(baseUrl, 'clerk@example.com', 'user-password-1');
        expect((await own.post('/api/account/password', { currentPassword: 'wrong', newPassword: 'new-password-12' })).status).to.equal(
            403,
        );
        expect((await admin.delete(`/api/admin/users/${clerk.id}`)).status).to.equal(204);

        const all = await admin.get('/api/admin/audit?limit=50');
        expect(all.status).to.equal(200);
        const { entries, total } = all.body as {
            entries: Array<{ action: string; outcome: string; target: string; details: object }>;
            total: number;
        };
        expect(total).to.be.above(5);
        const actions = new Set(entries.map((entry) => `${entry.action}:${entry.outcome}`));
        for (const expected of [
            'setup.complete:success',
            'auth.login:success',
            'users.create:success',
            'users.update:success',
            'users.delete:success',
            'account.password:failure',
        ]) {
            expect(actions.has(expected), expected).to.be.true();
        }

        const roleChange = entries.find((entry) => entry.action === 'users.update' && JSON.stringify(entry.details).includes('roleTo'));
        expect(roleChange?.details).to.equal({ roleFrom: 'admin', roleTo: 'viewer' });
        const filtered = await admin.get('/api/admin/audit?action=users.create');
        const created = (filtered.body as { entries: Array<{ action: string; target: string }> }).entries;
        expect(created.every((entry) => entry.action === 'users.create')).to.be.true();
        expect(created.map((entry) => entry.target)).to.include('clerk@example.com');
        expect(filtered.headers.get('x-total-count')).to.equal(String(created.length));
        const dump = JSON.stringify(await context.database.knex('dp_audit').select('*'));
        for (const secret of ['user-password-1', 'new-password-12', 'reset-password-1', ADMIN.password]) {
            expect(dump).to.not.contain(secret);
        }
    });
});

describe('deploy manager: failed sign-ins counted once for every Gatehouse on one database', () => {
    let first: { context: TestServer; baseUrl: string };
    let second: TestServer;
    let secondUrl: string;

    before(async () => {
        first = await startServer();
        await completeSetup(first.context, first.baseUrl);
        // A second process on the same database and data folder, as behind a load balancer.
        second = await createTestServer({}, { dataDir: first.context.dataDir, database: first.context.database });
        await second.server.start();
        secondUrl = `http://127.0.0.1:${second.server.info.port}`;
    });

    after(async () => {
        await second?.server.stop();
        await first?.context.cleanup();
    });

    const guess = async (baseUrl: string, password = 'wrong-password') => {
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        return (await browser.post('/api/auth/login', { email: ADMIN.email, password }, { headers: { 'x-forwarded-for': '198.51.100.7' } }))
            .status;
    };

    it('refuses the sixth guess whichever instance answers, and keeps neither the e-mail nor the address in the clear', async () => {
        const statuses: number[] = [];
        for (let attempt = 0; attempt < 6; attempt += 1) {
            statuses.push(await guess(attempt % 2 === 0 ? first.baseUrl : secondUrl));
        }

        expect(statuses).to.equal([401, 401, 401, 401, 401, 429]);
        expect(await guess(first.baseUrl, ADMIN.password)).to.equal(429);
        expect(await guess(secondUrl, ADMIN.password)).to.equal(429);

        const rows = await first.context.database.knex('auth_failures').select('key_hash');
        expect(rows.length).to.be.above(0);
        for (const row of rows) {
            expect(String(row.key_hash)).to.match(/^[0-9a-f]{64}$/);
        }
    });
});
