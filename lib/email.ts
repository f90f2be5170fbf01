import Crypto from 'node:crypto';
import Net from 'node:net';
import Tls from 'node:tls';

import type { SmtpConfig } from './config.ts';

const EMAIL_PATTERN =
    /^[\w.!#$%&'*+/=?^`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** An e-mail address as Gitea accepts one: at most 254 characters, a dot-atom local part, a host name, no leading dash. */
export function isValidEmail(email: string): boolean {
    return email.length <= 254 && EMAIL_PATTERN.test(email) && !email.startsWith('-');
}

export interface MailMessage {
    to: string;
    subject: string;
    text: string;
}

/** The SMTP server's answer to a command: its code and its lines. */
interface Reply {
    code: number;
    lines: string[];
}

/** Reads an SMTP conversation's replies (multi-line ones whole) off a socket, in order. */
class ReplyReader {
    #buffer = '';
    #lines: string[] = [];
    readonly #replies: Reply[] = [];
    readonly #waiting: Array<{ resolve: (reply: Reply) => void; reject: (error: Error) => void }> = [];
    #failure: Error | undefined;

    attach(socket: Net.Socket): void {
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => this.#take(chunk));
        socket.on('error', (error) => this.#fail(error));
        socket.on('close', () => this.#fail(new Error('the SMTP server closed the connection')));
    }

    /** Gives the reader to a new socket (after STARTTLS), keeping what is waiting. */
    detach(socket: Net.Socket): void {
        socket.removeAllListeners('data');
        socket.removeAllListeners('error');
        socket.removeAllListeners('close');
    }

    #take(chunk: string): void {
        this.#buffer += chunk;
        let end = this.#buffer.indexOf('\n');
        while (end >= 0) {
            const line = this.#buffer.slice(0, end).replace(/\r$/, '');
            this.#buffer = this.#buffer.slice(end + 1);
            this.#lines.push(line.slice(4));
            if (line[3] !== '-') {
                const reply = { code: Number(line.slice(0, 3)), lines: this.#lines };
                this.#lines = [];
                const waiter = this.#waiting.shift();
                if (waiter) {
                    waiter.resolve(reply);
                } else {
                    this.#replies.push(reply);
                }
            }

            end = this.#buffer.indexOf('\n');
        }
    }

    #fail(error: Error): void {
        this.#failure ??= error;
        for (const waiter of this.#waiting.splice(0)) {
            waiter.reject(this.#failure);
        }
    }

    next(): Promise<Reply> {
        const ready = this.#replies.shift();
        if (ready) {
            return Promise.resolve(ready);
        }

        if (this.#failure) {
            return Promise.reject(this.#failure);
        }

        return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
    }
}

/** A header's value on one line: no line breaks, non-ASCII as an RFC 2047 encoded word. */
function headerValue(value: string): string {
    const flat = value.replace(/[\r\n]+/g, ' ');
    return /^[\x20-\x7e]*$/.test(flat) ? flat : `=?UTF-8?B?${Buffer.from(flat, 'utf8').toString('base64')}?=`;
}

/** The message as DATA sends it: headers, a blank line, the text with CRLF endings and leading dots doubled. */
function messageData(config: SmtpConfig, message: MailMessage): string {
    const headers = [
        `From: ${config.from}`,
        `To: ${message.to}`,
        `Subject: ${headerValue(message.subject)}`,
        `Date: ${new Date().toUTCString()}`,
        `Message-ID: <${Crypto.randomUUID()}@${config.from.split('@')[1] ?? 'gatehouse'}>`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: 8bit',
    ];
    const body = message.text
        .split(/\r?\n/)
        .map((line) => (line.startsWith('.') ? `.${line}` : line))
        .join('\r\n');
    return `${headers.join('\r\n')}\r\n\r\n${body}\r\n.\r\n`;
}

/**
 * Sends one plain-text message through the SMTP server of the settings (SMTP_*): TLS from the start when `secure`,
 * otherwise STARTTLS when the server offers it; AUTH PLAIN when a user name is set. Throws with the server's answer
 * when it refuses a step; the password is never part of an error.
 */
export async function sendMail(config: SmtpConfig, message: MailMessage): Promise<void> {
    if (!config.host) {
        throw new Error('no SMTP server is set (SMTP_HOST)');
    }

    if (!isValidEmail(message.to)) {
        throw new Error('not an e-mail address');
    }

    const host = config.host;
    const reader = new ReplyReader();
    let socket: Net.Socket = await new Promise<Net.Socket>((resolve, reject) => {
        const opened = config.secure
            ? Tls.connect({ host, port: config.port, servername: host }, () => resolve(opened))
            : Net.connect({ host, port: config.port }, () => resolve(opened));
        opened.once('error', reject);
    });
    socket.setTimeout(config.timeoutMs, () => socket.destroy(new Error(`the SMTP server did not answer within ${config.timeoutMs} ms`)));
    reader.attach(socket);
    const expect = async (codes: number[], step: string): Promise<Reply> => {
        const reply = await reader.next();
        if (!codes.includes(reply.code)) {
            throw new Error(`the SMTP server refused ${step}: ${reply.code} ${reply.lines.join(' ').slice(0, 200)}`);
        }

        return reply;
    };
    const command = async (line: string, codes: number[], step: string): Promise<Reply> => {
        socket.write(`${line}\r\n`);
        return await expect(codes, step);
    };

    try {
        await expect([220], 'the connection');
        const name = 'gatehouse.localdomain';
        let hello = await command(`EHLO ${name}`, [250], 'EHLO');
        if (!config.secure && hello.lines.some((line) => /^STARTTLS\b/i.test(line))) {
            await command('STARTTLS', [220], 'STARTTLS');
            reader.detach(socket);
            const plain = socket;
            socket = await new Promise<Net.Socket>((resolve, reject) => {
                const upgraded = Tls.connect({ socket: plain, servername: host }, () => resolve(upgraded));
                upgraded.once('error', reject);
            });
            reader.attach(socket);
            hello = await command(`EHLO ${name}`, [250], 'EHLO');
        }

        if (config.username !== undefined) {
            const credentials = Buffer.from(`\0${config.username}\0${config.password ?? ''}`, 'utf8').toString('base64');
            await command(`AUTH PLAIN ${credentials}`, [235], 'the sign-in (AUTH PLAIN)');
        }

        await command(`MAIL FROM:<${config.from}>`, [250], 'the sender');
        await command(`RCPT TO:<${message.to}>`, [250, 251], 'the recipient');
        await command('DATA', [354], 'DATA');
        socket.write(messageData(config, message));
        await expect([250], 'the message');
        socket.write('QUIT\r\n');
    } finally {
        socket.end();
        socket.destroy();
    }
}
