/** What the deploy manager drives on this host, and whether each answers. Secrets are reported as set or not, never shown. */
import Fs from 'node:fs';
import Path from 'node:path';

import type { HostConfig } from '../../../../lib/config.ts';
import { dockerClient } from '../host/docker-client.ts';
import { dumpNginxConfiguration, type NginxOutcome, nginxPidFile, testNginxConfiguration } from '../host/nginx-control.ts';
import { DEFAULT_NGINX_CONF_DIR } from '../nginx/site-access.ts';
import { nginxBinary } from '../host/nginx-binary.ts';
import { checkHttp } from '../host/http-check.ts';
import { withTimeout } from '../../../../lib/timeout.ts';

const ENGINE_TIMEOUT_MS = 3000;
const NGINX_TEST_CACHE_MS = 60_000;

export interface DockerEngineIntegration {
    reachable: boolean;
    version: string | null;
    apiVersion: string | null;
    error: string | null;
}

export interface NginxIntegration {
    binary: string;
    /** Null: nginx's compiled-in default configuration. */
    confPath: string | null;
    configTest: NginxOutcome & { checkedAt: string };
    /** The folder Gatehouse writes the apps' sites to (NGINX_SITES_DIR). */
    sitesDir: string;
    /** Whether that configuration includes the sites folder: without it, nginx serves none of the apps. */
    includesSites: boolean;
    /** Whether an nginx runs with that configuration: its pid file names a live process. */
    running: boolean;
}

export interface AcmeIntegration {
    configured: boolean;
    directoryUrl: string | null;
    caFile: string | null;
    email: string | null;
    renewDays: number;
    /** Null when no directory is configured. */
    reachable: boolean | null;
    statusCode: number | null;
    error: string | null;
}

export interface RegistryIntegration {
    configured: boolean;
    url: string | null;
    username: string | null;
    passwordSet: boolean;
    reachable: boolean | null;
    statusCode: number | null;
    error: string | null;
}

export interface DnsIntegration {
    configured: boolean;
    provider: string | null;
    server: string | null;
    zone: string | null;
    tsigKeyName: string | null;
    tsigAlgorithm: string;
    tsigSecretSet: boolean;
    address: string | null;
    ttl: number;
}

export async function dockerEngineIntegration(): Promise<DockerEngineIntegration> {
    try {
        const version = await withTimeout(dockerClient().version(), ENGINE_TIMEOUT_MS, 'the Docker engine');
        return { reachable: true, version: version.Version, apiVersion: version.ApiVersion, error: null };
    } catch (error) {
        const { code, message } = error as NodeJS.ErrnoException;
        return { reachable: false, version: null, apiVersion: null, error: code ? `${code}: ${message}` : message };
    }
}

interface NginxLook {
    at: number;
    outcome: NginxOutcome;
    includesSites: boolean;
    pidFile: string | undefined;
}

const nginxLooks = new Map<string, NginxLook>();

/** The paths an `include` directive names in nginx's dumped configuration, resolved from the configuration's folder. */
function includedPaths(dump: string, configDir: string): string[] {
    const paths: string[] = [];
    for (const match of dump.matchAll(/^\s*include\s+["']?([^"';\s]+)["']?\s*;/gm)) {
        paths.push(Path.resolve(configDir, match[1] ?? ''));
    }

    for (const match of dump.matchAll(/^# configuration file (.+):$/gm)) {
        paths.push(Path.resolve(match[1] ?? ''));
    }

    return paths;
}

/** `nginx -t` and `-T` fork nginx and read every site: done at most once a minute per configuration. */
async function lookAtNginx(host: HostConfig, sitesDir: string): Promise<NginxLook> {
    const key = `${nginxBinary(host.nginxBin)}\n${host.nginxConf ?? ''}\n${sitesDir}`;
    const hit = nginxLooks.get(key);
    if (hit && Date.now() - hit.at < NGINX_TEST_CACHE_MS) {
        return hit;
    }

    const configDir = host.nginxConf ? Path.dirname(host.nginxConf) : DEFAULT_NGINX_CONF_DIR;
    const [outcome, dump] = await Promise.all([testNginxConfiguration(host), dumpNginxConfiguration(host)]);
    const fresh = {
        at: Date.now(),
        outcome,
        includesSites: includedPaths(dump.output, configDir).some((path) => path.startsWith(`${Path.resolve(sitesDir)}${Path.sep}`)),
        pidFile: await nginxPidFile(host),
    };
    nginxLooks.set(key, fresh);
    return fresh;
}

/** Whether the process the pid file names is alive (one of another user's answers EPERM, and is alive too). */
function pidFileNamesLiveProcess(pidFile: string | undefined): boolean {
    const pid = pidFile && Fs.existsSync(pidFile) ? Number(Fs.readFileSync(pidFile, 'utf8').trim()) : NaN;
    if (!Number.isInteger(pid) || pid <= 0) {
        return false;
    }

    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
}

export async function nginxIntegration(host: HostConfig, sitesDir: string): Promise<NginxIntegration> {
    const { at, outcome, includesSites, pidFile } = await lookAtNginx(host, sitesDir);
    return {
        binary: nginxBinary(host.nginxBin),
        confPath: host.nginxConf ?? null,
        configTest: { ...outcome, checkedAt: new Date(at).toISOString() },
        sitesDir,
        includesSites,
        running: pidFileNamesLiveProcess(pidFile),
    };
}

export async function acmeIntegration(host: HostConfig): Promise<AcmeIntegration> {
    const described = {
        configured: host.acmeDirectoryUrl !== undefined,
        directoryUrl: host.acmeDirectoryUrl ?? null,
        caFile: host.acmeCaFile ?? null,
        email: host.acmeEmail ?? null,
        renewDays: host.acmeRenewDays,
    };
    if (!host.acmeDirectoryUrl) {
        return { ...described, reachable: null, statusCode: null, error: null };
    }

    let ca: string[] | undefined;
    try {
        ca = host.acmeCaFile ? [Fs.readFileSync(host.acmeCaFile, 'utf8')] : undefined;
    } catch (error) {
        return { ...described, reachable: false, statusCode: null, error: `the CA file cannot be read: ${(error as Error).message}` };
    }

    const check = await checkHttp({ url: new URL(host.acmeDirectoryUrl), ca });
    const reachable = check.statusCode === 200;
    const error = check.error ?? (reachable ? null : `the directory answered ${check.statusCode}`);
    return { ...described, reachable, statusCode: check.statusCode, error };
}

/**
 * The registry's API root answers 200, or 401 when it wants credentials: either way it is there. Like the Docker
 * engine, HTTPS is tried first and plain HTTP only when no TLS answer came (a registry on loopback).
 */
export async function registryIntegration(host: HostConfig): Promise<RegistryIntegration> {
    const { url, username, password } = host.registry;
    const described = { configured: url !== undefined, url: url ?? null, username: username ?? null, passwordSet: password !== undefined };
    if (!url) {
        return { ...described, reachable: null, statusCode: null, error: null };
    }

    const base = url.replace(/\/+$/, '');
    const secure = await checkHttp({ url: new URL(`https://${base}/v2/`) });
    let check = secure;
    if (secure.statusCode === null) {
        const plain = await checkHttp({ url: new URL(`http://${base}/v2/`) });
        check = plain.statusCode === null ? { ...plain, error: `https: ${secure.error}; http: ${plain.error}` } : plain;
    }

    const reachable = check.statusCode === 200 || check.statusCode === 401;
    const error = check.error ?? (reachable ? null : `/v2/ answered ${check.statusCode}`);
    return { ...described, reachable, statusCode: check.statusCode, error };
}

export function dnsIntegration(host: HostConfig): DnsIntegration {
    const { dns } = host;
    return {
        configured: dns.provider !== undefined,
        provider: dns.provider ?? null,
        server: dns.server ?? null,
        zone: dns.zone ?? null,
        tsigKeyName: dns.tsigKeyName ?? null,
        tsigAlgorithm: dns.tsigAlgorithm,
        tsigSecretSet: dns.tsigSecret !== undefined,
        address: dns.address ?? null,
        ttl: dns.ttl,
    };
}
