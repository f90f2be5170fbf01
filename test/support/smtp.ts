import Net from 'node:net';

export interface ReceivedMail {
    from: string;
    to: string[];
    /** The message as DATA sent it (headers and text), dots unstuffed, CRLF as sent. */
    data: string;
}

export interface SmtpServer {
    port: number;
    received: ReceivedMail[];
    close(): Promise<void>;
}

/**
 * A minimal SMTP server on 127.0.0.1 for tests: EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT; no TLS, no
 * authentication. It keeps each message it accepts.
 */
export async function startSmtpServer(): Promise<SmtpServer> {
    const received: ReceivedMail[] = [];
    const sockets = new Set<Net.Socket>();
    const server = Net.createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
        socket.setEncoding('utf8');
        let buffer = '';
        let mail: ReceivedMail = { from: '', to: [], data: '' };
        let inData = false;
        const reply = (line: string) => socket.write(`${line}\r\n`);
        reply('220 localhost test SMTP');
        socket.on('data', (chunk: string) => {
            buffer += chunk;
            for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
                const line = buffer.slice(0, end);
                buffer = buffer.slice(end + 2);
                if (inData) {
                    if (line === '.') {
                        inData = false;
                        received.push(mail);
                        mail = { from: '', to: [], data: '' };
                        reply('250 accepted');
                    } else {
                        mail.data += `${line.startsWith('..') ? line.slice(1) : line}\r\n`;
                    }

                    continue;
                }

                const verb = line.slice(0, 4).toUpperCase();
                if (verb === 'EHLO' || verb === 'HELO') {
                    socket.write('250-localhost\r\n250 8BITMIME\r\n');
                } else if (verb === 'MAIL') {
                    mail.from = /<(.*)>/.exec(line)?.[1] ?? '';
                    reply('250 ok');
                } else if (verb === 'RCPT') {
                    mail.to.push(/<(.*)>/.exec(line)?.[1] ?? '');
                    reply('250 ok');
                } else if (verb === 'DATA') {
                    inData = true;
                    reply('354 go on');
                } else if (verb === 'QUIT') {
                    reply('221 bye');
                    socket.end();
                } else if (verb === 'RSET' || verb === 'NOOP') {
                    reply('250 ok');
                } else {
                    reply('502 not implemented');
                }
            }
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as Net.AddressInfo;
    return {
        port: address.port,
        received,
        close: async () => {
            for (const socket of sockets) socket.destroy();
            await new Promise<void>((resolve) => server.close(() => resolve()));
        },
    };
}
