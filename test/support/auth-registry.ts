/**
 * A second local registry that asks for credentials: Debian's docker-registry with htpasswd (bcrypt, from
 * apache2-utils' htpasswd) behind TLS, since the engine sends credentials only over TLS. Its self-signed
 * certificate is trusted by the engine through /etc/docker/certs.d/<host:port>/ca.crt, which the engine reads
 * on every connection; stop() removes that folder, the registry and its state.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import { freePort, temporaryDirectory } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { ensureDebianPackage } from './debian-packages.ts';

export interface AuthRegistry {
    /** 127.0.0.1:<port>, as REGISTRY_URL takes it. */
    url: string;
    username: string;
    password: string;
    stop(): Promise<void>;
}

function run(command: string, args: string[], input?: string): string {
    const result = spawnSync(command, args, {
        encoding: 'utf8',
        input,
        timeout: 300_000,
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) {
        throw new Error(`${command} ${args.join(' ')}: ${result.stderr}`);
    }

    return result.stdout;
}

function ensureHtpasswd(): void {
    ensureDebianPackage({ name: 'apache2-utils', file: '/usr/bin/htpasswd' }, 'the registry credential tests');
}

async function waitUntilAnswering(url: string, ca: string): Promise<void> {
    const asksForCredentials = () =>
        spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--cacert', ca, `https://${url}/v2/`], { encoding: 'utf8' })
            .stdout === '401';
    await waitUntil(`the authenticating registry at ${url} answers 401`, asksForCredentials, { timeoutMs: 20_000, intervalMs: 200 });
}

export async function startAuthRegistry(): Promise<AuthRegistry> {
    ensureHtpasswd();
    const state = temporaryDirectory('gatehouse-auth-registry-');
    const port = await freePort();
    const url = `127.0.0.1:${port}`;
    const username = 'deployer';
    const password = Crypto.randomBytes(12).toString('base64url');
    const certificate = Path.join(state, 'registry.crt');
    const key = Path.join(state, 'registry.key');
    run(
        'openssl',
        ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'].concat([
            '-subj',
            '/CN=127.0.0.1',
            '-addext',
            'subjectAltName=IP:127.0.0.1',
            '-keyout',
            key,
            '-out',
            certificate,
        ]),
    );
    run('htpasswd', ['-Bbc', Path.join(state, 'htpasswd'), username, password]);
    Fs.writeFileSync(
        Path.join(state, 'config.yml'),
        [
            'version: 0.1',
            'storage:',
            `  filesystem: { rootdirectory: ${Path.join(state, 'data')} }`,
            '  delete: { enabled: true }',
            'http:',
            `  addr: ${url}`,
            `  tls: { certificate: ${certificate}, key: ${key} }`,
            'auth:',
            `  htpasswd: { realm: gatehouse-test, path: ${Path.join(state, 'htpasswd')} }`,
            '',
        ].join('\n'),
    );
    const trustDir = Path.join('/etc/docker/certs.d', url);
    Fs.mkdirSync(trustDir, { recursive: true });
    Fs.copyFileSync(certificate, Path.join(trustDir, 'ca.crt'));
    const registry: ChildProcess = spawn('docker-registry', ['serve', Path.join(state, 'config.yml')], { stdio: 'ignore' });
    const stop = async () => {
        registry.kill('SIGTERM');
        await new Promise((resolve) => (registry.exitCode !== null ? resolve(undefined) : registry.once('exit', resolve)));
        Fs.rmSync(trustDir, { recursive: true, force: true });
        Fs.rmSync(state, { recursive: true, force: true });
    };
    try {
        await waitUntilAnswering(url, certificate);
    } catch (error) {
        await stop();
        throw error;
    }

    return { url, username, password, stop };
}

/** Pushes a local image to the registry with a login kept in a throw-away docker config (not ~/.docker). */
export function pushWithLogin(registry: AuthRegistry, image: string): void {
    const config = temporaryDirectory('gatehouse-docker-config-');
    try {
        const env = { ...process.env, DOCKER_CONFIG: config };
        const login = spawnSync('docker', ['login', '-u', registry.username, '--password-stdin', registry.url], {
            input: registry.password,
            env,
            encoding: 'utf8',
        });
        if (login.status !== 0) {
            throw new Error(`docker login ${registry.url}: ${login.stderr}`);
        }

        const push = spawnSync('docker', ['push', '-q', image], { env, encoding: 'utf8', timeout: 300_000 });
        if (push.status !== 0) {
            throw new Error(`docker push ${image}: ${push.stderr}`);
        }
    } finally {
        Fs.rmSync(config, { recursive: true, force: true });
    }
}
