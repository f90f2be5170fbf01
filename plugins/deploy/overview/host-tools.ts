import { execFile } from 'node:child_process';

export interface ToolVersion {
    found: boolean;
    version: string | null;
}

const TOOLS: Record<string, { command: string; args: string[]; pattern: RegExp }> = {
    docker: { command: 'docker', args: ['--version'], pattern: /version ([\w.+-]+)/i },
    dockerCompose: { command: 'docker-compose', args: ['--version'], pattern: /version v?([\w.+-]+)/i },
    nginx: { command: process.env.NGINX_BIN ?? 'nginx', args: ['-v'], pattern: /nginx\/([\w.+-]+)/i },
    git: { command: 'git', args: ['--version'], pattern: /version ([\w.+-]+)/i },
};

function versionOf(command: string, args: string[], pattern: RegExp): Promise<ToolVersion> {
    return new Promise((resolve) => {
        execFile(command, args, { timeout: 3000 }, (error, stdout, stderr) => {
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

let cached: { at: number; tools: Record<string, ToolVersion> } | undefined;

/** The versions of the tools the deploy manager drives, looked up at most once a minute. */
export async function hostToolVersions(): Promise<Record<string, ToolVersion>> {
    if (cached && Date.now() - cached.at < 60_000) {
        return cached.tools;
    }

    const entries = await Promise.all(
        Object.entries(TOOLS).map(async ([name, tool]) => [name, await versionOf(tool.command, tool.args, tool.pattern)] as const),
    );
    cached = { at: Date.now(), tools: Object.fromEntries(entries) };
    return cached.tools;
}
