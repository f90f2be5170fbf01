import { execFileSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import type Net from 'node:net';
import Path from 'node:path';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { deployUsers } from '../../../../../plugins/deploy/domain/accounts/user-service.ts';
import { CERTIFICATE_CHECK_JOB, expiringCertificates } from '../../../../../plugins/deploy/domain/notifications/certificate-expiry.ts';
import { notifications } from '../../../../../plugins/deploy/domain/notifications/notification-service.ts';
import { runs } from '../../../../../plugins/deploy/domain/runs/run-service.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import type { Browser } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { type SmtpServer, startSmtpServer } from '../../../../support/smtp.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const STEPS = Path.join(ROOT_DIR, 'test', 'fixtures', 'jobs', 'run-steps.ts');
const SECRET = 'a-webhook-secret-1';

interface Received {
    path: string;
    headers: Http.IncomingHttpHeaders;
    body: string;
}

interface Delivery {
    user: { email: string };
    channel: string;
    target: string;
    status: string;
    attempts: number;
    error: string | null;
    kind: string;
    app: string | null;
}

describe('deploy manager: notifications', () => {
    let server: DeployTestServer;
    let smtp: SmtpServer;
    let hooks: Http.Server;
    let hookUrl: string;
    const received: Received[] = [];
    const answered = new Map<string, number>();

    before(async () => {
        smtp = await startSmtpServer();
        hooks = Http.createServer((request, response) => {
            const chunks: Buffer[] = [];
            request.on('data', (chunk: Buffer) => chunks.push(chunk));
            request.on('end', () => {
                const path = request.url ?? '/';
                received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
                const count = (answered.get(path) ?? 0) + 1;
                answered.set(path, count);
                // /flaky fails twice and then succeeds; /redirect sends the client on to /ok.
                if (path === '/redirect') {
                    response.writeHead(307, { location: '/after-redirect' }).end();
                } else {
                    response.writeHead(path === '/flaky' && count <= 2 ? 500 : 200).end('ok');
                }
            });
        });
        await new Promise<void>((resolve) => hooks.listen(0, '127.0.0.1', resolve));
        hookUrl = `http://127.0.0.1:${(hooks.address() as Net.AddressInfo).port}`;
        server = await deployTestServer({
            SMTP_HOST: '127.0.0.1',
            SMTP_PORT: String(smtp.port),
            SMTP_FROM: 'gatehouse@example.com',
            WEBHOOK_ALLOWED_HOST_LIST: 'loopback',
            WEBHOOK_RETRY_BACKOFF_MS: '20',
            WEBHOOK_MAX_ATTEMPTS: '4',
        });
    });

    after(async () => {
        await server?.context.cleanup();
        await smtp?.close();
        await new Promise((resolve) => hooks?.close(resolve));
    });

    /** Starts a run of the steps fixture that fails, and waits for its deliveries to be sent. */
    const failRun = async (app: string, kind = 'deploy'): Promise<number> => {
        const [actor] = await deployUsers(server.context.server).list();
        if (!actor) {
            throw new Error('no user');
        }

        const runId = await runs(server.context.server).start({
            app,
            kind,
            actor,
            script: STEPS,
            data: { steps: 1, delayMs: 1, outcome: 'failed' },
        });
        const run = await waitUntil('the run ended', async () => {
            const current = await runs(server.context.server).get(runId);
            return current.state === 'running' ? undefined : current;
        });
        expect(run.state).to.equal('failed');
        // The run's end is heard just after it is stored: wait for its deliveries to be recorded, then sent.
        await waitUntil('the deliveries are recorded', async () =>
            Boolean(await server.context.server.app.knex('dp_notification_deliveries').where({ app_name: app }).first('id')),
        );
        await notifications(server.context.server).settled();
        return runId;
    };

    const deliveriesFor = async (email: string): Promise<Delivery[]> => {
        const listed = await server.admin.get('/api/admin/notifications/deliveries?limit=50');
        expect(listed.status).to.equal(200);
        return (listed.body as { deliveries: Delivery[] }).deliveries.filter((delivery) => delivery.user.email === email);
    };

    const emailOf = async (browser: Browser): Promise<string> =>
        ((await browser.get('/api/auth/me')).body as { user: { email: string } }).user.email;

    it('keeps the account settings, validates them (422) and never shows the webhook secret', async () => {
        const user = await server.signInAs('viewer');
        const initial = await user.get('/api/account/notifications');
        expect(initial.status).to.equal(200);
        expect(initial.body).to.include({ webhook: { url: null, secretSet: false, kinds: [] } });

        const noSecret = await user.put('/api/account/notifications', { webhook: { url: `${hookUrl}/ok` } });
        expect(noSecret.status).to.equal(422);
        expect((await user.put('/api/account/notifications', { webhook: { url: 'ftp://example.com/' } })).status).to.equal(422);
        expect((await user.put('/api/account/notifications', { email: { kinds: ['no-such-event'] } })).status).to.equal(422);
        expect((await user.put('/api/account/notifications', { webhook: { url: `${hookUrl}/ok`, secret: 'short' } })).status).to.equal(422);
        expect((await user.put('/api/account/notifications', { other: true })).status).to.equal(422);

        const saved = await user.put('/api/account/notifications', {
            email: { enabled: true, kinds: ['run-failed', 'backup-failed'] },
            webhook: { url: `${hookUrl}/ok`, secret: SECRET, kinds: ['run-failed'] },
        });
        expect(saved.status).to.equal(200);
        expect(saved.text).to.not.include(SECRET);
        const shown = await user.get('/api/account/notifications');
        expect(shown.text).to.not.include(SECRET);
        expect(shown.body).to.equal({
            email: { enabled: true, address: await emailOf(user), kinds: ['run-failed', 'backup-failed'] },
            webhook: { url: `${hookUrl}/ok`, secretSet: true, kinds: ['run-failed'] },
        });
        const row = await server.context.server.app.knex('dp_notification_settings').first();
        expect(JSON.stringify(row)).to.not.include(SECRET);

        const removed = await user.put('/api/account/notifications', { webhook: { url: '' } });
        expect(removed.body).to.include({ webhook: { url: null, secretSet: false, kinds: ['run-failed'] } });
        expect((await user.get('/api/admin/notifications/deliveries')).status).to.equal(403);
    });

    it('tells a failed run to the user who chose it, by e-mail and by a signed webhook, and nothing to one who did not', async () => {
        const chooser = await server.signInAs('editor');
        const other = await server.signInAs('viewer');
        const chooserEmail = await emailOf(chooser);
        const otherEmail = await emailOf(other);
        await chooser.put('/api/account/notifications', {
            email: { enabled: true, kinds: ['run-failed'] },
            webhook: { url: `${hookUrl}/chooser`, secret: SECRET, kinds: ['run-failed'] },
        });
        await other.put('/api/account/notifications', {
            email: { enabled: true, kinds: ['backup-failed'] },
            webhook: { url: `${hookUrl}/other`, secret: SECRET, kinds: ['certificate-expiring'] },
        });

        const runId = await failRun('notified');
        const mail = smtp.received.find((message) => message.to.includes(chooserEmail));
        expect(mail).to.exist();
        expect(mail?.from).to.equal('gatehouse@example.com');
        expect(mail?.data).to.include('Subject: [Gatehouse] deploy of notified failed');
        expect(mail?.data).to.include('failed on purpose');
        expect(smtp.received.some((message) => message.to.includes(otherEmail))).to.be.false();

        const hook = received.find((request) => request.path === '/chooser');
        expect(hook).to.exist();
        const expected = Crypto.createHmac('sha256', SECRET)
            .update(hook?.body ?? '')
            .digest('hex');
        expect(hook?.headers['x-gatehouse-signature']).to.equal(expected);
        expect(hook?.headers['x-gatehouse-event']).to.equal('run-failed');
        expect(JSON.parse(hook?.body ?? '{}')).to.include({ kind: 'run-failed', app: 'notified' });
        expect(JSON.parse(hook?.body ?? '{}').details).to.include({ run: runId, state: 'failed', error: 'failed on purpose' });
        expect(received.some((request) => request.path === '/other')).to.be.false();

        const recorded = await deliveriesFor(chooserEmail);
        expect(recorded.map((delivery) => [delivery.channel, delivery.status, delivery.attempts]).sort()).to.equal([
            ['email', 'delivered', 1],
            ['webhook', 'delivered', 1],
        ]);
        expect(await deliveriesFor(otherEmail)).to.equal([]);
    });

    it('refuses a webhook to a host the allow-list does not let through, and records it without retrying', async () => {
        const user = await server.signInAs('viewer');
        await user.put('/api/account/notifications', { webhook: { url: 'http://10.0.0.1:9/hook', secret: SECRET, kinds: ['run-failed'] } });
        await failRun('refused');
        const [delivery] = (await deliveriesFor(await emailOf(user))).filter((entry) => entry.app === 'refused');
        expect(delivery).to.include({ channel: 'webhook', status: 'refused', attempts: 1, target: 'http://10.0.0.1:9/hook' });
        expect(delivery?.error).to.include('WEBHOOK_ALLOWED_HOST_LIST');
    });

    it('retries a failing webhook until it answers 2xx, and follows a redirect to an allowed host', async () => {
        const flaky = await server.signInAs('viewer');
        const moved = await server.signInAs('viewer');
        await flaky.put('/api/account/notifications', { webhook: { url: `${hookUrl}/flaky`, secret: SECRET, kinds: ['run-failed'] } });
        await moved.put('/api/account/notifications', { webhook: { url: `${hookUrl}/redirect`, secret: SECRET, kinds: ['run-failed'] } });
        await failRun('retried');
        const [delivery] = (await deliveriesFor(await emailOf(flaky))).filter((entry) => entry.app === 'retried');
        expect(delivery).to.include({ channel: 'webhook', status: 'delivered', attempts: 3, error: null });
        expect(received.filter((request) => request.path === '/flaky')).to.have.length(3);

        const [redirected] = (await deliveriesFor(await emailOf(moved))).filter((entry) => entry.app === 'retried');
        expect(redirected).to.include({ status: 'delivered', attempts: 1 });
        const after = received.find((request) => request.path === '/after-redirect');
        expect(after?.headers['x-gatehouse-signature']).to.equal(
            Crypto.createHmac('sha256', SECRET)
                .update(after?.body ?? '')
                .digest('hex'),
        );
    });

    it('records a webhook that never succeeds as failed after the last attempt, with its error', async () => {
        const user = await server.signInAs('viewer');
        // A closed port on loopback: allowed, but nothing answers.
        await user.put('/api/account/notifications', { webhook: { url: 'http://127.0.0.1:9/', secret: SECRET, kinds: ['run-failed'] } });
        await failRun('unanswered');
        const [delivery] = (await deliveriesFor(await emailOf(user))).filter((entry) => entry.app === 'unanswered');
        expect(delivery).to.include({ status: 'failed', attempts: 4 });
        expect(delivery?.error).to.include('ECONNREFUSED');
    });

    it('tells a failed backup run as backup-failed, to those who chose that and not to those who chose run-failed alone', async () => {
        const chooser = await server.signInAs('viewer');
        const runsOnly = await server.signInAs('viewer');
        await chooser.put('/api/account/notifications', {
            webhook: { url: `${hookUrl}/backups`, secret: SECRET, kinds: ['backup-failed'] },
        });
        await runsOnly.put('/api/account/notifications', {
            webhook: { url: `${hookUrl}/runs-only`, secret: SECRET, kinds: ['run-failed'] },
        });
        await failRun('backed-up', 'backup');
        const [delivery] = await deliveriesFor(await emailOf(chooser));
        expect(delivery).to.include({ kind: 'backup-failed', app: 'backed-up', status: 'delivered' });
        const hook = received.find((request) => request.path === '/backups');
        expect(JSON.parse(hook?.body ?? '{}')).to.include({ kind: 'backup-failed', summary: 'the backup of backed-up failed' });
        expect(await deliveriesFor(await emailOf(runsOnly))).to.equal([]);
    });

    /** A self-signed certificate for the domain, valid for `days`, where the deploy manager keeps certificates. */
    const makeCertificate = (domain: string, days: number): void => {
        const dir = Path.join(server.context.config.apps.certificatesDir, domain);
        Fs.mkdirSync(dir, { recursive: true });
        execFileSync(
            'openssl',
            [
                'req',
                '-x509',
                '-newkey',
                'ec',
                '-pkeyopt',
                'ec_paramgen_curve:prime256v1',
                '-nodes',
                '-keyout',
                Path.join(dir, 'privkey.pem'),
                '-out',
                Path.join(dir, 'fullchain.pem'),
                '-days',
                String(days),
                '-subj',
                `/CN=${domain}`,
                '-addext',
                `subjectAltName=DNS:${domain}`,
            ],
            { stdio: 'ignore' },
        );
    };

    /** Runs the daily certificate check now, and waits for its worker to end and its warnings to be sent. */
    const runCertificateCheck = async (): Promise<void> => {
        const bree = server.context.server.app.jobs.bree;
        const ended = new Promise<void>((resolve) => {
            const listener = (name: string) => {
                if (name === CERTIFICATE_CHECK_JOB) {
                    bree.off('worker deleted', listener);
                    resolve();
                }
            };
            bree.on('worker deleted', listener);
        });
        await bree.run(CERTIFICATE_CHECK_JOB);
        await ended;
        await notifications(server.context.server).settled();
    };

    it('warns once a day of a certificate that expires within 14 days, from the scheduled job, and not of one that does not', async () => {
        const user = await server.signInAs('viewer');
        const email = await emailOf(user);
        await user.put('/api/account/notifications', {
            email: { enabled: true, kinds: ['certificate-expiring'] },
            webhook: { url: `${hookUrl}/certificates`, secret: SECRET, kinds: ['certificate-expiring'] },
        });
        makeCertificate('soon.notify.test', 5);
        makeCertificate('later.notify.test', 60);
        expect(server.context.server.app.jobs.scheduled(CERTIFICATE_CHECK_JOB)?.cron).to.match(/^\d{1,2} 6 \* \* \*$/);

        await runCertificateCheck();
        const warnings = (await deliveriesFor(email)).filter((delivery) => delivery.kind === 'certificate-expiring');
        expect(warnings.map((delivery) => [delivery.channel, delivery.status]).sort()).to.equal([
            ['email', 'delivered'],
            ['webhook', 'delivered'],
        ]);
        const mail = smtp.received.find((message) => message.to.includes(email));
        expect(mail?.data).to.match(/Subject: \[Gatehouse\] the certificate of soon\.notify\.test expires in [45] days/);
        const hook = received.find((request) => request.path === '/certificates');
        expect(JSON.parse(hook?.body ?? '{}').details).to.include({ domain: 'soon.notify.test' });
        expect(received.some((request) => request.body.includes('later.notify.test'))).to.be.false();

        // The same day again: the job finds the certificate, and no second warning goes out.
        await runCertificateCheck();
        expect((await deliveriesFor(email)).filter((delivery) => delivery.kind === 'certificate-expiring')).to.have.length(2);
        const certificatesDir = server.context.config.apps.certificatesDir;
        expect(await notifications(server.context.server).certificatesExpiring(expiringCertificates(certificatesDir))).to.equal([]);
        // The next day it is warned of again.
        const tomorrow = Date.now() + 86_400_000;
        expect(
            await notifications(server.context.server).certificatesExpiring(expiringCertificates(certificatesDir, tomorrow), tomorrow),
        ).to.equal(['soon.notify.test']);
    });
});
