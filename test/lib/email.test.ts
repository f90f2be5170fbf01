import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { SmtpConfig } from '../../lib/config.ts';
import { sendMail } from '../../lib/email.ts';
import { type SmtpServer, startSmtpServer } from '../support/smtp.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('lib/email: sending through SMTP', () => {
    let smtp: SmtpServer;
    let config: SmtpConfig;

    before(async () => {
        smtp = await startSmtpServer();
        config = {
            host: '127.0.0.1',
            port: smtp.port,
            secure: false,
            username: undefined,
            password: undefined,
            from: 'gatehouse@example.com',
            timeoutMs: 5_000,
        };
    });

    after(async () => {
        await smtp.close();
    });

    it('sends a plain-text message: sender, recipient, headers, a subject in UTF-8 and lines starting with a dot kept', async () => {
        await sendMail(config, { to: 'ann@example.com', subject: 'Déploiement échoué', text: 'first line\n.a dotted line\nlast' });
        const [mail] = smtp.received;
        expect(mail?.from).to.equal('gatehouse@example.com');
        expect(mail?.to).to.equal(['ann@example.com']);
        expect(mail?.data).to.include('From: gatehouse@example.com\r\nTo: ann@example.com\r\n');
        expect(mail?.data).to.include(`Subject: =?UTF-8?B?${Buffer.from('Déploiement échoué').toString('base64')}?=`);
        expect(mail?.data).to.include('\r\n\r\nfirst line\r\n.a dotted line\r\nlast\r\n');
    });

    it('refuses an address that is not one, and says when no SMTP server is set or none answers', async () => {
        await expect(sendMail(config, { to: 'ann@example.com>\r\nRCPT TO:<x@y', subject: 's', text: 't' })).to.reject(
            'not an e-mail address',
        );
        await expect(sendMail({ ...config, host: undefined }, { to: 'ann@example.com', subject: 's', text: 't' })).to.reject(
            'no SMTP server is set (SMTP_HOST)',
        );
        await expect(sendMail({ ...config, port: 9 }, { to: 'ann@example.com', subject: 's', text: 't' })).to.reject(/ECONNREFUSED/);
    });
});
