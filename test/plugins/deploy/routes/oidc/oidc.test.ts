import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import Provider, { type Account, type Configuration, type JWK, type KoaContextWithOIDC } from 'oidc-provider';
import { generate } from 'otplib';

import { Browser, type BrowserResponse } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer, freePort, type TestServer } from '../../../../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const ADMIN = { email: 'admin@example.com', name: 'Ada Admin', password: 'admin-password-1' };
const USER_PASSWORD = 'user-password-1';
const CLIENT_ID = 'gatehouse-manager';
const CLIENT_SECRET = 'provider-client-secret-5f1c9a';

interface ProviderAccount {
    email: string;
    emailVerified: boolean;
    name: string;
}

/** The identity provider's accounts, by id; the deploy users below share some of their e-mails. */
const PROVIDER_ACCOUNTS: Record<string, ProviderAccount> = {
    viewer: { email: 'Viewer@Example.com', emailVerified: true, name: 'Vera Viewer' },
    unverified: { email: 'editor@example.com', emailVerified: false, name: 'Ed Editor' },
    stranger: { email: 'stranger@example.com', emailVerified: true, name: 'Stan Stranger' },
    disabled: { email: 'disabled@example.com', emailVerified: true, name: 'Dee Disabled' },
    totp: { email: 'totp@example.com', emailVerified: true, name: 'Tom Totp' },
};

interface IdentityProvider {
    issuer: string;
    close(): Promise<void>;
}

interface SettingsBody {
    enabled: boolean;
    issuer: string;
    clientId: string;
    hasClientSecret: boolean;
    redirectUri: string;
}

function findAccount(_context: KoaContextWithOIDC, id: string): Account | undefined {
    const account = PROVIDER_ACCOUNTS[id];
    if (!account) {
        return undefined;
    }

    return {
        accountId: id,
        claims: () => ({ sub: id, email: account.email, email_verified: account.emailVerified, name: account.name }),
    };
}

/** First-party client: consent is granted without asking. */
async function grantEverything(context: KoaContextWithOIDC) {
    const clientId = context.oidc.client?.clientId;
    const accountId = context.oidc.session?.accountId;
    if (!clientId || !accountId) {
        return undefined;
    }

    const grant = new context.oidc.provider.Grant({ clientId, accountId });
    grant.addOIDCScope('openid email profile');
    await grant.save();
    return grant;
}

/** The provider's login page stand-in: signs in the account named in `?account=`. */
async function signInAs(provider: Provider, request: Http.IncomingMessage, response: Http.ServerResponse): Promise<void> {
    const accountId = new URL(request.url ?? '/', 'http://provider').searchParams.get('account') ?? '';
    await provider.interactionDetails(request, response);
    await provider.interactionFinished(request, response, { login: { accountId } }, { mergeWithLastSubmission: false });
}

function providerConfiguration(redirectUri: string): Configuration {
    const signingKey = Crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    return {
        clients: [
            {
                client_id: CLIENT_ID,
                client_secret: CLIENT_SECRET,
                redirect_uris: [redirectUri],
                grant_types: ['authorization_code'],
                response_types: ['code'],
                token_endpoint_auth_method: 'client_secret_basic',
            },
        ],
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        findAccount,
        loadExistingGrant: grantEverything,
        features: { devInteractions: { enabled: false } },
        interactions: { url: (_context, interaction) => `/interaction/${interaction.uid}` },
        jwks: { keys: [{ ...signingKey, kid: 'test', alg: 'RS256', use: 'sig' } as JWK] },
        cookies: { keys: [Crypto.randomBytes(16).toString('hex')] },
        ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    };
}

/** A real OpenID Connect provider (oidc-provider) on 127.0.0.1, with one static confidential client. */
async function startIdentityProvider(redirectUri: string): Promise<IdentityProvider> {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const provider = new Provider(issuer, providerConfiguration(redirectUri));
    const handle = provider.callback();
    const server = Http.createServer((request, response) => {
        if (request.url?.startsWith('/interaction/')) {
            signInAs(provider, request, response).catch((error: unknown) => {
                response.statusCode = 500;
                response.end(String(error));
            });
            return;
        }

        void handle(request, response);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return { issuer, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

interface SignInRun {
    /** Where the manager sent the browser at the end: its start page, or the start page with ?signin=failed. */
    finalUrl: string;
    responses: BrowserResponse[];
}

function locationOf(response: BrowserResponse, base: URL): URL {
    const location = response.headers.get('location');
    expect(location, `${response.status} ${response.text}`).to.exist();
    return new URL(location ?? '', base);
}

/**
 * Drives a sign-in as a browser would: start, the provider's pages (as `account`), the callback; every hop
 * with the cookies of its own site. `editCallback` lets a test tamper with the provider's answer.
 */
async function signInThroughProvider(app: Browser, idp: Browser, account: string, editCallback?: (url: URL) => void): Promise<SignInRun> {
    const start = await app.get('/api/auth/oidc/start');
    const responses = [start];
    let url = locationOf(start, new URL(app.baseUrl));
    for (let hop = 0; hop < 10; hop++) {
        const onProvider = url.origin === new URL(idp.baseUrl).origin;
        if (!onProvider && !url.pathname.startsWith('/api/')) {
            return { finalUrl: url.href, responses };
        }

        if (onProvider && url.pathname.startsWith('/interaction/')) {
            url.searchParams.set('account', account);
        }

        if (!onProvider && url.pathname === '/api/auth/oidc/callback') {
            editCallback?.(url);
        }

        const response = await (onProvider ? idp : app).get(`${url.pathname}${url.search}`);
        responses.push(response);
        url = locationOf(response, url);
    }

    throw new Error('too many redirects');
}

describe('deploy manager: sign-in through an OpenID Connect provider', () => {
    let context: TestServer;
    let baseUrl: string;
    let provider: IdentityProvider;
    let admin: Browser;
    const seen: BrowserResponse[] = [];
    const userIds = new Map<string, number>();

    async function createUser(email: string, role: string): Promise<number> {
        const response = await admin.post('/api/admin/users', { email, name: email.split('@')[0], password: USER_PASSWORD, role });
        expect(response.status, response.text).to.equal(201);
        return (response.body as { user: { id: number } }).user.id;
    }

    async function signInWithPassword(email: string, password: string): Promise<Browser> {
        const browser = new Browser(baseUrl);
        await browser.get('/api/auth/me');
        const response = await browser.post('/api/auth/login', { email, password });
        expect(response.status, response.text).to.equal(200);
        return browser;
    }

    async function enableTotp(email: string): Promise<void> {
        const browser = await signInWithPassword(email, USER_PASSWORD);
        const { secret } = (await browser.post('/api/account/totp/setup')).body as { secret: string };
        expect((await browser.post('/api/account/totp/enable', { code: await generate({ secret }) })).status).to.equal(200);
    }

    async function configure(change: Record<string, unknown>): Promise<BrowserResponse> {
        const response = await admin.put('/api/admin/oidc', change);
        seen.push(response);
        return response;
    }

    /** OIDC sign-in as a server that was never told of a provider has it: off, no issuer, no client, no secret. */
    async function haveOidcUnset(): Promise<void> {
        await context.database.knex('instance_settings').where('name', 'like', 'deploy.oidc%').delete();
        expect((await admin.get('/api/admin/oidc')).body).to.include({ enabled: false, issuer: '', clientId: '', hasClientSecret: false });
    }

    /** OIDC sign-in on, through this file's provider, with its client secret: whatever an earlier test changed. */
    async function haveOidcOn(): Promise<void> {
        const saved = await configure({ enabled: true, issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
        expect(saved.status, saved.text).to.equal(200);
    }

    async function signIn(account: string, editCallback?: (url: URL) => void): Promise<SignInRun & { browser: Browser }> {
        const browser = new Browser(baseUrl);
        const run = await signInThroughProvider(browser, new Browser(provider.issuer), account, editCallback);
        seen.push(...run.responses);
        return { browser, ...run };
    }

    async function auditEntries(action: string): Promise<Array<{ target: string; outcome: string; details: string | null }>> {
        return await context.database.knex('dp_audit').where({ action }).orderBy('id').select('target', 'outcome', 'details');
    }

    before(async () => {
        const port = await freePort();
        baseUrl = `http://127.0.0.1:${port}`;
        context = await createTestServer({ PORT: String(port), PUBLIC_URL: `${baseUrl}/` });
        await context.server.start();
        provider = await startIdentityProvider(`${baseUrl}/api/auth/oidc/callback`);

        const token = Fs.readFileSync(Path.join(context.dataDir, 'setup-token'), 'utf8').trim();
        admin = new Browser(baseUrl);
        await admin.get('/api/setup/status');
        expect((await admin.post('/api/setup', { token, ...ADMIN })).status).to.equal(201);
        await admin.post('/api/auth/login', { email: ADMIN.email, password: ADMIN.password });
        for (const [name, role] of [
            ['viewer', 'viewer'],
            ['editor', 'editor'],
            ['disabled', 'editor'],
            ['totp', 'editor'],
        ] as const) {
            userIds.set(name, await createUser(`${name}@example.com`, role));
        }

        await admin.put(`/api/admin/users/${userIds.get('disabled')}`, { disabled: true });
        await enableTotp('totp@example.com');
    });

    after(async () => {
        await provider.close();
        await context.cleanup();
    });

    it('refuses to start while OIDC sign-in is off, and says so in the setup status', async () => {
        await haveOidcUnset();
        expect(((await admin.get('/api/setup/status')).body as { oidcEnabled: boolean }).oidcEnabled).to.be.false();
        const browser = new Browser(baseUrl);
        const start = await browser.get('/api/auth/oidc/start');
        expect(start.status).to.equal(302);
        expect(start.headers.get('location')).to.equal(`${baseUrl}/?signin=failed`);
        const refusal = (await auditEntries('auth.oidc')).at(-1);
        expect(refusal).to.include({ outcome: 'failure' });
        expect(refusal?.details).to.contain('not enabled');
    });

    it('gates the settings by role: 401 without a session, 403 below admin', async () => {
        const anonymous = new Browser(baseUrl);
        await anonymous.get('/api/auth/me');
        expect((await anonymous.get('/api/admin/oidc')).status).to.equal(401);
        expect((await anonymous.put('/api/admin/oidc', { enabled: false })).status).to.equal(401);
        expect((await anonymous.post('/api/admin/oidc/test', {})).status).to.equal(401);
        const viewer = await signInWithPassword('viewer@example.com', USER_PASSWORD);
        expect((await viewer.get('/api/admin/oidc')).status).to.equal(403);
        expect((await viewer.put('/api/admin/oidc', { enabled: false })).status).to.equal(403);
        expect((await viewer.post('/api/admin/oidc/test', {})).status).to.equal(403);
        const editor = await signInWithPassword('editor@example.com', USER_PASSWORD);
        expect((await editor.get('/api/admin/oidc')).status).to.equal(403);
    });

    it('tests an issuer without storing anything, and reports an unreachable one', async () => {
        await haveOidcUnset();
        const tested = await admin.post('/api/admin/oidc/test', { issuer: provider.issuer });
        seen.push(tested);
        expect(tested.status).to.equal(200);
        expect(tested.body).to.equal({ ok: true, issuer: provider.issuer, authorizationEndpoint: `${provider.issuer}/auth` });
        const unreachable = await admin.post('/api/admin/oidc/test', { issuer: `http://127.0.0.1:${await freePort()}` });
        expect(unreachable.status).to.equal(200);
        expect((unreachable.body as { ok: boolean; error: string }).ok).to.be.false();
        expect((unreachable.body as { error: string }).error).to.be.a.string();
        const insecure = await admin.post('/api/admin/oidc/test', { issuer: 'http://idp.example.com' });
        expect(insecure.body).to.include({ ok: false, error: 'issuer: must use https (http only on loopback)' });
        expect(((await admin.get('/api/admin/oidc')).body as SettingsBody).issuer).to.equal('');
    });

    it('stores the settings with the client secret sealed, and never shows or audits it', async () => {
        // Nothing stored yet: enabling without an issuer is refused only while none is saved.
        await haveOidcUnset();
        expect((await configure({ enabled: true, issuer: 'http://idp.example.com', clientId: CLIENT_ID })).status).to.equal(422);
        expect((await configure({ enabled: true, clientId: CLIENT_ID })).status).to.equal(422);
        const saved = await configure({ enabled: true, issuer: provider.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
        expect(saved.status, saved.text).to.equal(200);
        const expected = {
            enabled: true,
            issuer: provider.issuer,
            clientId: CLIENT_ID,
            hasClientSecret: true,
            redirectUri: `${baseUrl}/api/auth/oidc/callback`,
        };
        expect(saved.body).to.equal(expected);
        const read = await admin.get('/api/admin/oidc');
        seen.push(read);
        expect(read.body).to.equal(expected);
        expect(((await admin.get('/api/setup/status')).body as { oidcEnabled: boolean }).oidcEnabled).to.be.true();

        const stored = JSON.stringify(await context.database.knex('instance_settings').select('*'));
        expect(stored).to.not.contain(CLIENT_SECRET);
        const changes = await auditEntries('settings.oidc');
        expect(JSON.parse(changes.at(-1)?.details ?? '{}')).to.equal({
            enabled: true,
            issuer: provider.issuer,
            clientId: CLIENT_ID,
            clientCredential: 'replaced',
        });
    });

    it('signs a user in whose verified e-mail matches, with a complete session', async () => {
        await haveOidcOn();
        const { browser, finalUrl, responses } = await signIn('viewer');
        expect(finalUrl).to.equal(`${baseUrl}/`);
        const [start] = responses;
        const authorization = new URL(start?.headers.get('location') ?? '');
        expect(authorization.origin + authorization.pathname).to.equal(`${provider.issuer}/auth`);
        expect(Object.fromEntries(authorization.searchParams)).to.include({
            response_type: 'code',
            client_id: CLIENT_ID,
            scope: 'openid email profile',
            redirect_uri: `${baseUrl}/api/auth/oidc/callback`,
            code_challenge_method: 'S256',
        });
        for (const parameter of ['state', 'nonce', 'code_challenge']) {
            expect(authorization.searchParams.get(parameter), parameter).to.have.length(43);
        }

        const pendingCookie = start?.setCookies.find((header) => header.startsWith('dp_oidc=')) ?? '';
        expect(pendingCookie).to.contain('HttpOnly');
        expect(pendingCookie).to.contain('SameSite=Lax');
        expect(pendingCookie).to.contain('Path=/api/auth/oidc');
        expect(pendingCookie).to.not.contain(authorization.searchParams.get('state') ?? 'state');
        expect(browser.cookies.has('dp_oidc')).to.be.false();
        const me = await browser.get('/api/auth/me');
        expect(me.status).to.equal(200);
        expect((me.body as { user: { email: string; role: string } }).user).to.include({ email: 'viewer@example.com', role: 'viewer' });
        expect((await browser.get('/api/dashboard')).status).to.not.equal(401);
        const logins = await auditEntries('auth.login');
        expect(logins.at(-1)).to.include({ target: 'viewer@example.com', outcome: 'success' });
        expect(JSON.parse(logins.at(-1)?.details ?? '{}')).to.equal({ method: 'oidc' });
    });

    it("counts the provider's sign-in as complete for a user with TOTP on", async () => {
        await haveOidcOn();
        const { browser, finalUrl } = await signIn('totp');
        expect(finalUrl).to.equal(`${baseUrl}/`);
        const me = await browser.get('/api/auth/me');
        expect((me.body as { user: { email: string; totpEnabled: boolean } }).user).to.include({
            email: 'totp@example.com',
            totpEnabled: true,
        });
    });

    it('refuses an unknown e-mail, an unverified one and a disabled user, and audits each', async () => {
        await haveOidcOn();
        for (const [account, reason] of [
            ['stranger', 'no user has this e-mail'],
            ['unverified', 'the e-mail is not verified by the identity provider'],
            ['disabled', 'the user is disabled'],
        ] as const) {
            const { browser, finalUrl } = await signIn(account);
            expect(finalUrl, account).to.equal(`${baseUrl}/?signin=failed`);
            expect((await browser.get('/api/auth/me')).status, account).to.equal(401);
            const refusal = (await auditEntries('auth.oidc')).at(-1);
            expect(refusal, account).to.include({ target: PROVIDER_ACCOUNTS[account]?.email.toLowerCase(), outcome: 'failure' });
            expect(JSON.parse(refusal?.details ?? '{}'), account).to.equal({ reason });
        }
    });

    it('refuses a tampered state, a callback without a sign-in in progress, and a replayed callback', async () => {
        await haveOidcOn();
        const tampered = await signIn('viewer', (url) => url.searchParams.set('state', 'forged-state'));
        expect(tampered.finalUrl).to.equal(`${baseUrl}/?signin=failed`);
        expect((await tampered.browser.get('/api/auth/me')).status).to.equal(401);
        expect((await auditEntries('auth.oidc')).at(-1)?.details).to.contain('state');

        let callback = '';
        const genuine = await signIn('viewer', (url) => {
            callback = `${url.pathname}${url.search}`;
        });
        expect(genuine.finalUrl).to.equal(`${baseUrl}/`);
        const stranger = new Browser(baseUrl);
        const replay = await stranger.get(callback);
        seen.push(replay);
        expect(replay.headers.get('location')).to.equal(`${baseUrl}/?signin=failed`);
        expect((await stranger.get('/api/auth/me')).status).to.equal(401);
        expect((await auditEntries('auth.oidc')).at(-1)?.details).to.contain('no sign-in in progress');
    });

    it('keeps the secret when left out, removes it when empty, and can be turned off', async () => {
        await haveOidcOn();
        const kept = await configure({ clientId: CLIENT_ID });
        expect((kept.body as SettingsBody).hasClientSecret).to.be.true();
        const removed = await configure({ clientSecret: '' });
        expect((removed.body as SettingsBody).hasClientSecret).to.be.false();
        expect(JSON.parse((await auditEntries('settings.oidc')).at(-1)?.details ?? '{}')).to.include({ clientCredential: 'removed' });
        const off = await configure({ enabled: false });
        expect(off.body).to.include({ enabled: false, issuer: provider.issuer });
        expect((await signIn('viewer')).finalUrl).to.equal(`${baseUrl}/?signin=failed`);
    });

    it('never shows the client secret in a response or the audit log', async () => {
        // Settings saved, read and tested, a sign-in let in and one refused, of its own; and whatever earlier tests saw.
        const earlier = seen.length;
        await haveOidcOn();
        seen.push(await admin.get('/api/admin/oidc'), await admin.post('/api/admin/oidc/test', {}));
        expect((await signIn('viewer')).finalUrl).to.equal(`${baseUrl}/`);
        expect((await signIn('stranger')).finalUrl).to.equal(`${baseUrl}/?signin=failed`);
        expect((await configure({ clientId: CLIENT_ID })).status).to.equal(200);
        expect(seen.length - earlier).to.be.above(10);
        for (const response of seen) {
            expect(response.text).to.not.contain(CLIENT_SECRET);
            expect(JSON.stringify(Object.fromEntries(response.headers))).to.not.contain(CLIENT_SECRET);
        }

        const dump = JSON.stringify(await context.database.knex('dp_audit').select('*'));
        expect(dump).to.not.contain(CLIENT_SECRET);
    });
});

/** A stand-in provider on loopback that counts the requests it gets and answers a valid discovery document. */
async function startCountingProvider(): Promise<{ port: number; requests: string[]; close(): Promise<void> }> {
    const requests: string[] = [];
    const server = Http.createServer((request, response) => {
        requests.push(request.url ?? '');
        const issuer = `http://${request.headers.host}`;
        response.setHeader('content-type', 'application/json');
        response.end(
            JSON.stringify({
                issuer,
                authorization_endpoint: `${issuer}/auth`,
                token_endpoint: `${issuer}/token`,
                jwks_uri: `${issuer}/jwks`,
            }),
        );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return { port, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('deploy manager: the identity provider requests of a manager served on a public address', () => {
    let manager: DeployTestServer;
    let listener: Awaited<ReturnType<typeof startCountingProvider>>;

    before(async () => {
        manager = await deployTestServer({ PUBLIC_URL: 'https://203.0.113.10/' });
        listener = await startCountingProvider();
    });

    after(async () => {
        await listener.close();
        await manager.context.cleanup();
    });

    it('tests no loopback or unroutable issuer, and answers open and closed ports with the same neutral error', async () => {
        const closed = await freePort();
        const issuers = [
            `http://127.0.0.1:${listener.port}`,
            `http://localhost:${listener.port}`,
            `https://[::ffff:127.0.0.1]:${listener.port}`,
            `http://127.0.0.1:${closed}`,
            `https://127.0.0.1:${closed}`,
            'https://169.254.169.254',
        ];
        const errors = new Set<string>();
        for (const issuer of issuers) {
            const tested = await manager.admin.post('/api/admin/oidc/test', { issuer });
            expect(tested.status, tested.text).to.equal(200);
            expect(tested.body, issuer).to.include({ ok: false, issuer });
            errors.add((tested.body as { error: string }).error);
        }

        expect([...errors]).to.equal(["the issuer's discovery document could not be read (the server log has the details)"]);
        expect(listener.requests).to.equal([]);
    });

    it('signs nobody in through a loopback issuer, and never reaches it', async () => {
        const saved = await manager.admin.put('/api/admin/oidc', {
            enabled: true,
            issuer: `http://127.0.0.1:${listener.port}`,
            clientId: CLIENT_ID,
        });
        expect(saved.status, saved.text).to.equal(200);
        const start = await new Browser(manager.baseUrl).get('/api/auth/oidc/start');
        expect(start.status).to.equal(302);
        expect(start.headers.get('location')).to.equal('https://203.0.113.10/?signin=failed');
        expect(listener.requests).to.equal([]);
    });
});
