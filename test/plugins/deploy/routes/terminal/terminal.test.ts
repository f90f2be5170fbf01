// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import WebSocket from 'ws';

import { type Browser, signIn } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { createTestServer } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { backupTestServer, deployWithVolume, inApp, removeVolumes } from '../../../../support/backup-app.ts';
import { buildWebImage, removeProjects } from '../../../../support/images.ts';
import { type RunningServices, startServices } from '../../../../support/services.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SUFFIX = Math.random().toString(36).slice(2, 8);
const APP = `shell-${SUFFIX}`;
const IDLE_SECONDS = 4;

interface OpenTerminal {
    socket: WebSocket;
    /** Everything the shell wrote so far. */
    output(): string;
    /** When the last output arrived (ms since the epoch). */
    lastOutputAt(): number;
    closed: Promise<{ code: number; reason: string; at: number }>;
    /** Sends typed text as the web UI does, in a binary frame. */
    type(text: string): void;
}

type Attempt = { open: OpenTerminal } | { refused: { status: number; error: string } };

interface AuditEntry {
    at: string;
    actor: { id: number; email: string } | null;
    action: string;
    target: string;
    clientAddress: string;
    details: Record<string, unknown>;
}

/** Waits until the shell's output matches `pattern`; a timeout tells what the shell wrote. */
async function waitForOutput(terminal: OpenTerminal, what: string, pattern: RegExp, timeoutMs = 15_000): Promise<void> {
    try {
        await waitUntil(what, () => pattern.test(terminal.output()), { timeoutMs });
    } catch (error) {
        throw new Error(`${(error as Error).message}; the shell wrote ${JSON.stringify(terminal.output().slice(-500))}`);
    }
}

/** How the socket closed, once it has (within `timeoutMs`). */
async function closedWithin(terminal: OpenTerminal, timeoutMs = 15_000) {
    let closed: Awaited<OpenTerminal['closed']> | undefined;
    void terminal.closed.then((how) => (closed = how));
    return await waitUntil('the socket closes', () => closed, { timeoutMs });
}

describe('deploy manager: the terminal', { timeout: 600_000 }, () => {
    let services: RunningServices;
    let server: DeployTestServer;
    let image: string;
    const logged: string[] = [];

    const origin = () => server.baseUrl;

    /**
     * Opens the socket at `path` (with `?ticket=`) of the server at `baseUrl`, as a browser on `from` would (null: no
     * Origin header).
     */
    const attempt = (path: string, from: string | null = origin(), baseUrl = server.baseUrl): Promise<Attempt> =>
        new Promise((resolve) => {
            const socket = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}${path}`, from === null ? {} : { origin: from });
            const chunks: Buffer[] = [];
            let lastOutputAt = Date.now();
            const closed = new Promise<{ code: number; reason: string; at: number }>((done) =>
                socket.once('close', (code, reason) => done({ code, reason: reason.toString(), at: Date.now() })),
            );
            socket.on('message', (data: Buffer) => {
                chunks.push(data);
                lastOutputAt = Date.now();
            });
            socket.on('error', () => undefined);
            socket.once('open', () =>
                resolve({
                    open: {
                        socket,
                        output: () => Buffer.concat(chunks).toString('utf8'),
                        lastOutputAt: () => lastOutputAt,
                        closed,
                        type: (text) => socket.send(Buffer.from(text)),
                    },
                }),
            );
            socket.once('unexpected-response', (request, response) => {
                let body = '';
                response.on('data', (chunk: Buffer) => (body += chunk.toString()));
                response.on('end', () => {
                    resolve({ refused: { status: response.statusCode ?? 0, error: (JSON.parse(body) as { error: string }).error } });
                    request.destroy();
                });
            });
        });

    const ticketFor = async (browser: Browser = server.admin, payload: Record<string, string> = {}) => {
        const answer = await browser.post(`/api/apps/${APP}/terminal`, payload);
        expect(answer.status, answer.text).to.equal(200);
        return answer.body as { ticket: string; path: string; service: string; container: string; expiresAt: string };
    };

    const socketUrl = (given: { path: string; ticket: string }) => `${given.path}?ticket=${encodeURIComponent(given.ticket)}`;

    const openTerminal = async (admin: Browser = server.admin, baseUrl = server.baseUrl): Promise<OpenTerminal> => {
        const tried = await attempt(socketUrl(await ticketFor(admin)), baseUrl, baseUrl);
        if ('refused' in tried) {
            throw new Error(`the terminal was refused: ${tried.refused.status} ${tried.refused.error}`);
        }

        // The shell's prompt: it is ready for input.
        await waitForOutput(tried.open, 'the shell writes its prompt', /[#$] /);
        return tried.open;
    };

    const refusal = async (path: string, from: string | null = origin()) => {
        const tried = await attempt(path, from);
        expect('refused' in tried, `${path} was opened`).to.be.true();
        if ('open' in tried) tried.open.socket.close();
        return 'refused' in tried ? tried.refused : { status: 0, error: '' };
    };

    const sessions = async (): Promise<AuditEntry[]> => {
        const listed = await server.admin.get('/api/admin/audit?action=terminal.session');
        expect(listed.status, listed.text).to.equal(200);
        return (listed.body as { entries: AuditEntry[] }).entries;
    };

    /** Waits for the audit entry of the session that ended `ended`, one more than `before` entries. */
    const auditedSession = async (before: number, ended: string) =>
        await waitUntil(`a terminal session ended ${ended} is audited`, async () => {
            const entries = await sessions();
            return entries.length > before && entries[0]?.details.ended === ended ? entries[0] : undefined;
        });

    before({ timeout: 600_000 }, async () => {
        services = await startServices();
        image = buildWebImage(`${services.exports.REGISTRY_URL}/gatehouse-test/shell-web:${SUFFIX}`, '<h1>shell</h1>\n', true);
        server = await backupTestServer(services, { TERMINAL_ENABLED: '1', TERMINAL_IDLE_SECONDS: String(IDLE_SECONDS) });
        server.context.server.events.on('log', (event) => logged.push(`${event.tags.join(',')} ${JSON.stringify(event.data)}`));
        server.context.server.events.on('request', (_request, event) =>
            logged.push(`${event.tags.join(',')} ${JSON.stringify(event.data)}`),
        );
        await deployWithVolume(server, APP, image);
    });

    after(async () => {
        await removeProjects([APP], [image]);
        removeVolumes([APP]);
        await server?.context.cleanup();
        services?.stop();
    });

    it('runs a shell in the container: typed commands run, the size follows resizes, and its end is audited without what was typed', async () => {
        const state = await server.admin.get(`/api/apps/${APP}/terminal`);
        expect(state.status, state.text).to.equal(200);
        expect(state.body).to.equal({ enabled: true, idleSeconds: IDLE_SECONDS, services: ['web'] });
        const before = (await sessions()).length;

        const terminal = await openTerminal();
        terminal.type('echo "$((6*7))"\r');
        await waitForOutput(terminal, '42 comes back', /\n42\r?\n/);
        // A text frame that is not a resize is input too.
        terminal.socket.send('echo "text-$((1+1))"\r');
        await waitForOutput(terminal, 'text-2 comes back', /\ntext-2\r?\n/);

        terminal.socket.send(JSON.stringify({ resize: { cols: 123, rows: 45 } }));
        terminal.type('stty size\r');
        await waitForOutput(terminal, 'stty says 45 rows of 123 columns', /\n45 123\r?\n/);
        // Out of bounds: ignored, neither a resize nor input.
        terminal.socket.send(JSON.stringify({ resize: { cols: 501, rows: 45 } }));
        terminal.type('stty size; echo "size-$((2*3))"\r');
        await waitForOutput(terminal, 'the second stty ends', /\nsize-6\r?\n/);
        expect(terminal.output().match(/\n45 123\r?\n/g)?.length).to.equal(2);
        expect(terminal.output()).to.not.contain('resize');

        // A command still running when the browser goes is hung up with its shell.
        terminal.type('sleep 4321\r');
        await waitUntil('sleep runs', () => inApp(APP, 'ps').includes('sleep 4321'));
        terminal.socket.close();
        const entry = await auditedSession(before, 'closed');
        expect(inApp(APP, 'ps')).to.not.contain('sleep 4321');

        expect(entry.actor?.email).to.equal('admin@example.com');
        expect(entry.target).to.equal(APP);
        expect(entry.clientAddress).to.equal('127.0.0.1');
        expect(entry.details).to.equal({
            service: 'web',
            container: `${APP}-web-1`,
            startedAt: entry.details.startedAt,
            seconds: entry.details.seconds,
            ended: 'closed',
        });
        expect(Date.parse(String(entry.details.startedAt))).to.be.within(Date.now() - 120_000, Date.now());
        expect(entry.details.seconds).to.be.a.number();
        expect(entry.details.seconds as number).to.be.within(0, 120);
        // Nothing typed or written is kept or logged.
        for (const typed of ['6*7', 'text-', 'stty', 'sleep 4321', '4321', 'size-']) {
            expect(JSON.stringify(entry)).to.not.contain(typed);
            expect(logged.join('\n')).to.not.contain(typed);
        }
    });

    it('closes the session when the shell exits', async () => {
        const before = (await sessions()).length;
        const terminal = await openTerminal();
        terminal.type('exit 3\r');
        expect(await closedWithin(terminal)).to.include({ code: 1000, reason: 'the shell exited' });
        expect((await auditedSession(before, 'exited')).details.service).to.equal('web');
    });

    it('closes a socket that sends a frame over 64 KiB (the web UI sends a long paste in smaller ones)', async () => {
        const before = (await sessions()).length;
        const terminal = await openTerminal();
        terminal.socket.send(Buffer.alloc(64 * 1024 + 1, 'x'));
        expect((await closedWithin(terminal)).code).to.equal(1009);
        await auditedSession(before, 'closed');
    });

    it(`closes a session after ${IDLE_SECONDS} seconds without input or output, saying why`, async () => {
        const before = (await sessions()).length;
        const terminal = await openTerminal();
        const closed = await closedWithin(terminal, (IDLE_SECONDS + 10) * 1000);
        expect(closed).to.include({ code: 4000, reason: `closed after ${IDLE_SECONDS} seconds without input or output` });
        // It stayed open that long after the shell's last output (less the time the output took to arrive).
        expect(closed.at - terminal.lastOutputAt()).to.be.at.least(IDLE_SECONDS * 1000 - 250);
        const entry = await auditedSession(before, 'idle');
        expect(entry.details.seconds as number).to.be.at.least(IDLE_SECONDS - 1);
    });

    it('keeps a session open past the idle time while the shell writes', async () => {
        const terminal = await openTerminal();
        terminal.type(`for i in 1 2 3 4 5 6 7 8; do echo "beat-$((i*11))"; sleep 1; done\r`);
        await waitForOutput(terminal, 'the eighth beat comes back', /beat-88\r\n/, (IDLE_SECONDS + 15) * 1000);
        expect(terminal.socket.readyState).to.equal(WebSocket.OPEN);
        terminal.socket.close();
        await closedWithin(terminal);
    });

    it('uses a ticket once, refuses one unknown, lapsed or for another app, and one without a ticket', async () => {
        const given = await ticketFor(server.admin, { service: 'web' });
        expect(given.path).to.equal(`/api/apps/${APP}/terminal/socket`);
        expect(given.service).to.equal('web');
        expect(given.container).to.equal(`${APP}-web-1`);
        expect(Date.parse(given.expiresAt) - Date.now()).to.be.within(20_000, 30_000);

        const first = await attempt(socketUrl(given));
        expect('open' in first).to.be.true();
        if ('open' in first) {
            first.open.socket.close();
            await closedWithin(first.open);
        }

        const again = await refusal(socketUrl(given));
        expect(again).to.equal({ status: 401, error: 'the ticket is unknown, used or expired: ask for a new one' });
        expect((await refusal(`${given.path}?ticket=${'A'.repeat(43)}`)).status).to.equal(401);
        expect((await refusal(`${given.path}?ticket=abc`)).status).to.equal(401);
        expect((await refusal(given.path)).status).to.equal(401);

        const other = await ticketFor();
        expect(await refusal(socketUrl({ ...other, path: `/api/apps/other-${SUFFIX}/terminal/socket` }))).to.equal({
            status: 403,
            error: 'the ticket is for another app',
        });
        // The refused attempt used it up.
        expect((await refusal(socketUrl(other))).status).to.equal(401);
    });

    it('refuses a socket from another origin, or with none, and leaves its ticket for the right one', async () => {
        const given = await ticketFor();
        expect(await refusal(socketUrl(given), 'https://evil.example')).to.equal({ status: 403, error: 'origin not allowed' });
        expect((await refusal(socketUrl(given), null)).status).to.equal(403);
        const port = new URL(server.baseUrl).port;
        expect((await refusal(socketUrl(given), `http://localhost:${port}`)).status).to.equal(403);

        const opened = await attempt(socketUrl(given));
        expect('open' in opened).to.be.true();
        if ('open' in opened) {
            opened.open.socket.close();
            await closedWithin(opened.open);
        }
    });

    it('lets only administrators have a ticket or see whether the terminal is on', async () => {
        for (const role of ['editor', 'viewer'] as const) {
            const browser = await server.signInAs(role);
            expect((await browser.get(`/api/apps/${APP}/terminal`)).status).to.equal(403);
            const refused = await browser.post(`/api/apps/${APP}/terminal`, {});
            expect(refused.status).to.equal(403);
            expect((refused.body as { error: string }).error).to.equal('your role does not allow this');
        }
    });

    it('answers a service without a running container, a draft, an unknown app and a bad payload with a clear 4xx', async () => {
        const noService = await server.admin.post(`/api/apps/${APP}/terminal`, { service: 'db' });
        expect(noService.status).to.equal(422);
        expect((noService.body as { error: string }).error).to.equal(`${APP} has no running container of the service db`);

        const draft = `draft-${SUFFIX}`;
        expect((await server.admin.post('/api/apps', { name: draft, image: 'busybox', tag: 'latest' })).status).to.equal(201);
        const drafted = await server.admin.post(`/api/apps/${draft}/terminal`, {});
        expect(drafted.status).to.equal(422);
        expect((drafted.body as { error: string }).error).to.equal(`${draft} has no running container`);
        expect((await server.admin.get(`/api/apps/${draft}/terminal`)).body).to.equal({
            enabled: true,
            idleSeconds: IDLE_SECONDS,
            services: [],
        });

        expect((await server.admin.post(`/api/apps/nothing-${SUFFIX}/terminal`, {})).status).to.equal(404);
        const extra = await server.admin.post(`/api/apps/${APP}/terminal`, { service: 'web', command: 'id' });
        expect(extra.status).to.equal(422);
        expect((extra.body as { error: string }).error).to.contain('command');
    });

    it('refuses WebSocket upgrades on any other path', async () => {
        for (const path of ['/api/health', `/api/apps/${APP}/terminal`, `/api/apps/${APP}/terminal/socket/more`, '/']) {
            expect((await refusal(path)).status, path).to.equal(404);
        }

        // The server still answers plain requests.
        expect((await server.admin.get('/api/health')).status).to.equal(200);
    });

    it('refuses everything while TERMINAL_ENABLED is off', async () => {
        const off = await deployTestServer({});
        try {
            expect((await off.admin.post('/api/apps', { name: 'plain', image: 'busybox', tag: 'latest' })).status).to.equal(201);
            expect((await off.admin.get('/api/apps/plain/terminal')).body).to.equal({ enabled: false, idleSeconds: 900, services: [] });
            const refused = await off.admin.post('/api/apps/plain/terminal', {});
            expect(refused.status).to.equal(404);
            expect(refused.body).to.equal({ error: 'the terminal is off: set TERMINAL_ENABLED=true to turn it on' });

            const tried = await new Promise<number>((resolve) => {
                const socket = new WebSocket(
                    `${off.baseUrl.replace(/^http/, 'ws')}/api/apps/plain/terminal/socket?ticket=${'A'.repeat(43)}`,
                    {
                        origin: off.baseUrl,
                    },
                );
                socket.on('error', () => undefined);
                socket.once('unexpected-response', (request, response) => {
                    resolve(response.statusCode ?? 0);
                    request.destroy();
                });
            });
            expect(tried).to.equal(404);
        } finally {
            await off.context.cleanup();
        }
    });

    it('closes open sessions when the server stops, and audits them', async () => {
        // A second server on the same database and data directory is the one stopped: the other tests keep theirs.
        const { ACME_DIRECTORY_URL: _acme, ...exports } = services.exports;
        const stopping = await createTestServer(
            { ...exports, BASE_DOMAIN: 'apps.test', TERMINAL_ENABLED: '1', TERMINAL_IDLE_SECONDS: String(IDLE_SECONDS) },
            { dataDir: server.context.dataDir, database: server.context.database },
        );
        await stopping.server.start();
        const stoppingUrl = `http://127.0.0.1:${stopping.server.info.port}`;
        let terminal: OpenTerminal;
        try {
            terminal = await openTerminal(await signIn(stoppingUrl, 'admin@example.com', 'admin-password-1'), stoppingUrl);
            terminal.type('sleep 4322\r');
            await waitUntil('sleep runs', () => inApp(APP, 'ps').includes('sleep 4322'));
        } finally {
            await stopping.server.stop();
        }

        expect(await closedWithin(terminal)).to.include({ code: 1001, reason: 'Gatehouse is stopping' });
        expect(inApp(APP, 'ps')).to.not.contain('sleep 4322');
        const rows = (await server.context.database.knex('dp_audit').where({ action: 'terminal.session' }).orderBy('id', 'desc')) as Array<{
            details: string;
        }>;
        expect(JSON.parse(rows[0]?.details ?? '{}')).to.include({ ended: 'stopped', service: 'web' });
    });
});
