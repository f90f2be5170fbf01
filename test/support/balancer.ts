/** An nginx on loopback in front of several Gatehouse instances, as a load balancer would be. */
import { type ChildProcess, spawn } from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import { ROOT_DIR } from '../../server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { ensureNginx, ownNginxConfiguration } from './nginx.ts';

/** The response header naming the instance that answered: nginx's `$upstream_addr` (`127.0.0.1:<port>`). */
export const UPSTREAM_HEADER = 'x-upstream';

export interface Balancer {
    stop: () => Promise<void>;
}

/**
 * An nginx on loopback that hands requests round robin to the instances (one worker, so they alternate), and says
 * in X-Upstream which one answered. An instance that refuses connections is skipped, as a balancer does.
 */
export async function startBalancer(port: number, upstreams: number[]): Promise<Balancer> {
    // test-output/ does not exist on a clean checkout (it is ignored), and mkdtemp makes only the last part.
    Fs.mkdirSync(Path.join(ROOT_DIR, 'test-output'), { recursive: true });
    const dir = Fs.mkdtempSync(Path.join(ROOT_DIR, 'test-output', 'balancer-'));
    const conf = ownNginxConfiguration(dir, [
        `upstream gatehouse { ${upstreams.map((upstream) => `server 127.0.0.1:${upstream};`).join(' ')} }`,
        'server {',
        `    listen 127.0.0.1:${port};`,
        '    location / {',
        '        proxy_pass http://gatehouse; proxy_http_version 1.1; proxy_buffering off;',
        '        proxy_set_header Host $http_host; proxy_set_header X-Forwarded-For $remote_addr;',
        `        add_header ${UPSTREAM_HEADER} $upstream_addr always;`,
        '    }',
        '}',
    ]);
    Fs.writeFileSync(Path.join(dir, 'nginx.conf'), conf);
    const binary = ensureNginx();
    if (!binary) throw new Error("the balancer needs nginx: install Debian's nginx package");
    const nginx: ChildProcess = spawn(binary, ['-p', dir, '-c', Path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'inherit' });
    await waitUntil(
        'the balancer answers',
        async () =>
            await fetch(`http://127.0.0.1:${port}/api/health`).then(
                (response) => response.ok,
                () => false,
            ),
        { timeoutMs: 30_000, intervalMs: 100 },
    );
    return {
        stop: async () => {
            nginx.kill('SIGTERM');
            await new Promise((resolve) => nginx.once('exit', resolve));
            Fs.rmSync(dir, { recursive: true, force: true });
        },
    };
}
