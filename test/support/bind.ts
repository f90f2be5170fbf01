/**
 * A real BIND (Debian's `bind9`, installed with apt-get when missing) for the DNS tests: one primary zone
 * that takes TSIG-signed dynamic updates, listening on a free port on 127.0.0.1 only, with its
 * configuration, zone and journal in a temporary directory. Under CI=true a failure to install or start fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import Crypto from 'node:crypto';
import Dns from 'node:dns';
import Fs from 'node:fs';
import Path from 'node:path';

import type { TsigAlgorithm } from '../../plugins/deploy/domain/dns/wire/tsig.ts';
import { freePort, temporaryDirectory } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { ensureDebianPackage } from './debian-packages.ts';

export interface BindKey {
    name: string;
    /** Base64, as DNS_TSIG_SECRET takes it. */
    secret: string;
    algorithm: TsigAlgorithm;
}

export interface RunningBind extends BindKey {
    /** 127.0.0.1:<port>, as DNS_SERVER takes it. */
    server: string;
    port: number;
    zone: string;
    /** Every key allowed to update the zone: `name`/`secret`/`algorithm` above is the hmac-sha256 one. */
    keys: BindKey[];
    stop(): Promise<void>;
}

const NAMED = '/usr/sbin/named';
const ZONE = 'apps.test';
const START_TIMEOUT_MS = 20_000;
const KEY_BYTES: Record<TsigAlgorithm, number> = { 'hmac-sha256': 32, 'hmac-sha512': 64, 'hmac-sha1': 20 };

/** True when named is there (installed now if it was missing and we are root). */
export function ensureBind(): boolean {
    return ensureDebianPackage({ name: 'bind9', file: NAMED, services: ['named', 'bind9'] }, 'the DNS tests');
}

function newKey(algorithm: TsigAlgorithm): BindKey {
    const name = `gatehouse-${algorithm}-${Crypto.randomBytes(3).toString('hex')}.key`;
    return { name, secret: Crypto.randomBytes(KEY_BYTES[algorithm]).toString('base64'), algorithm };
}

function namedConf(directory: string, port: number, keys: BindKey[]): string {
    const keyBlocks = keys.map((key) => `key "${key.name}" {\n    algorithm ${key.algorithm};\n    secret "${key.secret}";\n};\n`);
    const allowed = keys.map((key) => `key "${key.name}";`).join(' ');
    return `${keyBlocks.join('')}
options {
    directory "${directory}";
    pid-file "${Path.join(directory, 'named.pid')}";
    // Not the shared /run/named/named.lock: several test files run a named of their own at once.
    lock-file none;
    session-keyfile "${Path.join(directory, 'session.key')}";
    managed-keys-directory "${directory}";
    listen-on port ${port} { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    dnssec-validation no;
    notify no;
};
controls { };
zone "${ZONE}." {
    type primary;
    file "${Path.join(directory, `${ZONE}.zone`)}";
    allow-update { ${allowed} };
};
`;
}

const ZONE_FILE = `$TTL 300
@   IN SOA ns.${ZONE}. hostmaster.${ZONE}. ( 1 3600 600 86400 300 )
@   IN NS  ns.${ZONE}.
ns  IN A   127.0.0.1
`;

async function waitUntilAnswering(port: number, named: ChildProcess, output: () => string): Promise<void> {
    const resolver = new Dns.promises.Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    const answers = async () => {
        if (named.exitCode !== null) {
            throw new Error(`named exited with ${named.exitCode}`);
        }

        return await resolver.resolveSoa(ZONE).then(
            () => true,
            () => false,
        );
    };
    await waitUntil(`named answers on 127.0.0.1:${port}`, answers, { timeoutMs: START_TIMEOUT_MS, intervalMs: 200 }).catch(
        (error: Error) => {
            throw new Error(`${error.message}:\n${output()}`);
        },
    );
}

function stopProcess(named: ChildProcess): Promise<void> {
    if (named.exitCode !== null || named.signalCode !== null) {
        return Promise.resolve();
    }
    return new Promise((resolve) => {
        const force = setTimeout(() => named.kill('SIGKILL'), 5_000);
        named.once('exit', () => {
            clearTimeout(force);
            resolve();
        });
        named.kill('SIGTERM');
    });
}

/** A running named with zone apps.test; undefined when BIND is not there (outside CI). */
export async function startBind(): Promise<RunningBind | undefined> {
    if (!ensureBind()) {
        return undefined;
    }

    const directory = temporaryDirectory('gatehouse-bind-');
    const port = await freePort();
    const mainKey = newKey('hmac-sha256');
    const keys = [mainKey, newKey('hmac-sha512'), newKey('hmac-sha1')];
    const confFile = Path.join(directory, 'named.conf');
    Fs.writeFileSync(confFile, namedConf(directory, port, keys));
    Fs.writeFileSync(Path.join(directory, `${ZONE}.zone`), ZONE_FILE);

    const asRoot = process.getuid?.() === 0;
    const named = spawn(NAMED, ['-g', '-c', confFile, ...(asRoot ? ['-u', 'root'] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keepOutput = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-8_000);
    };
    named.stdout?.on('data', keepOutput);
    named.stderr?.on('data', keepOutput);
    let stopping = false;
    named.once('exit', (code, signal) => {
        if (!stopping) {
            // Said where the test's output shows it: a DNS step that fails later is explained here.
            console.error(
                `named on 127.0.0.1:${port} exited before the test stopped it (code ${code}, signal ${signal}):\n${output.slice(-3_000)}`,
            );
        }
    });

    const stop = async () => {
        stopping = true;
        await stopProcess(named);
        Fs.rmSync(directory, { recursive: true, force: true });
    };

    try {
        await waitUntilAnswering(port, named, () => output);
    } catch (error) {
        await stop();
        throw error;
    }

    return { ...mainKey, server: `127.0.0.1:${port}`, port, zone: ZONE, keys, stop };
}

/** The environment that points Gatehouse's rfc2136 provider at this BIND, records pointing at 127.0.0.1. */
export function dnsEnvironment(bind: RunningBind): Record<string, string> {
    return {
        DNS_PROVIDER: 'rfc2136',
        DNS_SERVER: bind.server,
        DNS_ZONE: bind.zone,
        DNS_TSIG_KEY_NAME: bind.name,
        DNS_TSIG_SECRET: bind.secret,
        DNS_TSIG_ALGORITHM: bind.algorithm,
        DNS_ADDRESS: '127.0.0.1',
    };
}
