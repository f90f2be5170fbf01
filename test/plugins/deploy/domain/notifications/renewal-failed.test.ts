import Http from 'node:http';
import type { AddressInfo } from 'node:net';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { RENEWAL_JOB } from '../../../../../plugins/deploy/domain/acme/renewal-events.ts';
import { notifications } from '../../../../../plugins/deploy/domain/notifications/notification-service.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { type SmtpServer, startSmtpServer } from '../../../../support/smtp.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('deploy manager: a certificate that fails to renew is notified', { timeout: 150_000 }, () => {
    let server: DeployTestServer;
    let smtp: SmtpServer;
    let refusingCa: Http.Server;

    before(async () => {
        smtp = await startSmtpServer();
        // A CA whose directory is not there: every renewal fails at once (one nobody answers at fails too, but only
        // after the ACME client's five tries, 75 s).
        refusingCa = Http.createServer((_request, response) => response.writeHead(404).end());
        await new Promise<void>((resolve) => refusingCa.listen(0, '127.0.0.1', resolve));
        server = await deployTestServer({
            ACME_DIRECTORY_URL: `http://127.0.0.1:${(refusingCa.address() as AddressInfo).port}/dir`,
            SMTP_HOST: '127.0.0.1',
            SMTP_PORT: String(smtp.port),
        });
    });

    after(async () => {
        await server?.context.cleanup();
        await smtp?.close();
        refusingCa?.close();
    });

    it('tells the users who chose certificate-renewal-failed, naming the app and the domain', async () => {
        const user = await server.signInAs('viewer');
        const email = String(((await user.get('/api/auth/me')).body as { user: { email: string } }).user.email);
        await user.put('/api/account/notifications', { email: { enabled: true, kinds: ['certificate-renewal-failed'] } });
        expect((await server.admin.post('/api/apps', { name: 'renewing', image: 'nginx', tag: '1.27' })).status).to.equal(201);
        const knex = server.context.server.app.knex;
        await knex('dp_apps').where({ name: 'renewing' }).update({ state: 'running' });
        const { domain } = (await knex('dp_apps').where({ name: 'renewing' }).first('domain')) as { domain: string };

        await server.context.server.app.jobs.bree.run(RENEWAL_JOB);
        await waitUntil(
            'the failed renewal is recorded',
            () => knex('dp_notification_deliveries').where({ event_kind: 'certificate-renewal-failed' }).first('id'),
            { timeoutMs: 120_000 },
        );
        await notifications(server.context.server).settled();
        const row = await knex('dp_notification_deliveries').where({ event_kind: 'certificate-renewal-failed' }).first();
        expect(row).to.include({ app_name: 'renewing', user_email: email, channel: 'email', status: 'delivered' });
        const mail = smtp.received.find((message) => message.to.includes(email));
        expect(mail?.data).to.include(`Subject: [Gatehouse] the certificate of ${domain} could not be renewed`);
    });
});
