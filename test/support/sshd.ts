/**
 * Debian's OpenSSH server on 127.0.0.1, started by a test with a configuration, host key and authorized key of its own
 * in a temporary folder (the machine's own sshd settings are never read or changed); stopped by its pid.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import Fs from 'node:fs';
import Net from 'node:net';
import Path from 'node:path';

import { freePort, temporaryDirectory } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';

export interface RunningSshd {
    port: number;
    dir: string;
    /** The ssh command that reaches this server as root with the test's key and known host key (restic's sftp.command). */
    sftpCommand: string;
    stop(): void;
}

function keygen(file: string): void {
    const made = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file], { encoding: 'utf8' });
    if (made.status !== 0) {
        throw new Error(`ssh-keygen: ${made.stderr}`);
    }
}

async function accepts(port: number): Promise<boolean> {
    return await new Promise((resolve) => {
        const socket = Net.connect(port, '127.0.0.1');
        socket.once('connect', () => {
            socket.destroy();
            resolve(true);
        });
        socket.once('error', () => resolve(false));
    });
}

export async function startSshd(): Promise<RunningSshd> {
    const dir = temporaryDirectory('gatehouse-sshd-');
    const port = await freePort();
    const hostKey = Path.join(dir, 'host_ed25519');
    const clientKey = Path.join(dir, 'client_ed25519');
    keygen(hostKey);
    keygen(clientKey);
    Fs.copyFileSync(`${clientKey}.pub`, Path.join(dir, 'authorized_keys'));
    Fs.writeFileSync(Path.join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${Fs.readFileSync(`${hostKey}.pub`, 'utf8')}`);
    const config = Path.join(dir, 'sshd_config');
    Fs.writeFileSync(
        config,
        [
            `Port ${port}`,
            'ListenAddress 127.0.0.1',
            `HostKey ${hostKey}`,
            `AuthorizedKeysFile ${Path.join(dir, 'authorized_keys')}`,
            `PidFile ${Path.join(dir, 'sshd.pid')}`,
            'UsePAM no',
            'StrictModes no',
            'PasswordAuthentication no',
            'KbdInteractiveAuthentication no',
            'PermitRootLogin prohibit-password',
            'Subsystem sftp internal-sftp',
            '',
        ].join('\n'),
    );
    // sshd's privilege separation folder, which Debian's service makes at boot.
    Fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    const child: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    child.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
    await waitUntil(`sshd listens on 127.0.0.1:${port} (${said})`, async () => child.exitCode === null && (await accepts(port)), {
        timeoutMs: 10_000,
    });
    const user = process.getuid?.() === 0 ? 'root' : (process.env.USER ?? 'root');
    const sftpCommand = [
        'ssh',
        '-i',
        clientKey,
        '-p',
        String(port),
        '-o',
        `UserKnownHostsFile=${Path.join(dir, 'known_hosts')}`,
        '-o',
        'StrictHostKeyChecking=yes',
        '-o',
        'BatchMode=yes',
        `${user}@127.0.0.1`,
        '-s',
        'sftp',
    ].join(' ');
    return {
        port,
        dir,
        sftpCommand,
        stop() {
            if (child.pid !== undefined && child.exitCode === null) {
                process.kill(child.pid);
            }

            Fs.rmSync(dir, { recursive: true, force: true });
        },
    };
}
