import { execFile } from 'node:child_process';

import type { HostConfig } from '../../../../lib/config.ts';
import { nginxBinary } from '../host/nginx-binary.ts';

export interface ToolVersion {
    found: boolean;
    version: string | null;
}

interface ToolProbe {
    command: string;
    args: string[];
    pattern: RegExp;
}

function toolProbes(host: HostConfig): Record<string, ToolProbe> {
    return {
        docker: { command: 'docker', args: ['--version'], pattern: /version ([\w.+-]+)/i },
        // Debian's docker-compose (v1, Python) and the Compose v2 plugin of the docker CLI, which may be absent.
        dockerCompose: { command: 'docker-compose', args: ['--version'], pattern: /version v?([\w.+-]+)/i },
        dockerComposePlugin: { command: 'docker', args: ['compose', 'version'], pattern: /Docker Compose version v?([\w.+-]+)/i },
        nginx: { command: nginxBinary(host.nginxBin), args: ['-v'], pattern: /nginx\/([\w.+-]+)/i },
        git: { command: 'git', args: ['--version'], pattern: /version ([\w.+-]+)/i },
        openssl: { command: 'openssl', args: ['version'], pattern: /OpenSSL ([\w.+-]+)/i },
    };
}

function versionOf({ command, args, pattern }: ToolProbe): Promise<ToolVersion> {
    return new Promise((resolve) => {
        // Debian's docker-compose (Python) takes most of a second to start, several on a busy host.
        execFile(command, args, { timeout: 10_000 }, (error, stdout, stderr) => {
            if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
                resolve({ found: false, version: null });
                return;
            }

            // nginx -v writes to standard error.
            const match = `${stdout}\n${stderr}`.match(pattern);
            resolve({ found: !error || Boolean(match), version: match?.[1] ?? null });
        });
    });
}

const CACHE_MS = 60_000;
const cached = new Map<string, { at: number; tools: Record<string, ToolVersion> }>();

/** The versions of the tools the deploy manager drives, looked up at most once a minute. */
export async function hostToolVersions(host: HostConfig): Promise<Record<string, ToolVersion>> {
    const probes = toolProbes(host);
    // Only the nginx binary comes from the configuration; the other tools are looked up on PATH.
    const key = probes.nginx?.command ?? '';
    const hit = cached.get(key);
    if (hit && Date.now() - hit.at < CACHE_MS) {
        return hit.tools;
    }

    const entries = await Promise.all(Object.entries(probes).map(async ([name, probe]) => [name, await versionOf(probe)] as const));
    const tools = Object.fromEntries(entries);
    cached.set(key, { at: Date.now(), tools });
    return tools;
}
