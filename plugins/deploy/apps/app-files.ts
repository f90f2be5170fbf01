import Fs from 'node:fs';
import Path from 'node:path';

import type { Server } from '@hapi/hapi';

import { type AppRecord, apps, maskSecret } from './app-service.ts';

export interface AppFile {
    /** Where the file lives (or will live) on the host. */
    path: string;
    kind: 'compose' | 'secrets' | 'nginx' | 'other';
    content: string;
    masked: boolean;
}

export const COMPOSE_FILE = 'compose.yaml';
export const SECRETS_FILE = 'secrets.env';

/** An env file: `NAME=value` lines, values quoted when they need it. */
export function renderSecretsFile(secrets: Record<string, string>): string {
    return Object.entries(secrets)
        .map(([key, value]) => `${key}=${/^[\w@%+=:,./-]*$/.test(value) ? value : JSON.stringify(value)}`)
        .join('\n')
        .concat(Object.keys(secrets).length > 0 ? '\n' : '');
}

function maskSecretsFile(text: string): string {
    return text.replace(/^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/gm, (_line, key: string, value: string) => `${key}=${maskSecret(value)}`);
}

/** The files the app's draft would write: compose file, secrets file (0600), nginx site. */
export async function draftFiles(server: Server, app: AppRecord, revealSecrets: boolean): Promise<AppFile[]> {
    const service = apps(server);
    const secrets = renderSecretsFile(await service.secretsOf(app.name));
    return [
        { path: Path.join(service.appDir(app.name), COMPOSE_FILE), kind: 'compose', content: app.draft.compose, masked: false },
        {
            path: Path.join(service.appDir(app.name), SECRETS_FILE),
            kind: 'secrets',
            content: revealSecrets ? secrets : maskSecretsFile(secrets),
            masked: !revealSecrets,
        },
        { path: service.sitePath(app.name), kind: 'nginx', content: app.draft.nginx, masked: false },
    ];
}

function filesUnder(directory: string): string[] {
    if (!Fs.existsSync(directory)) {
        return [];
    }

    return Fs.readdirSync(directory, { withFileTypes: true, recursive: true })
        .filter((entry) => entry.isFile())
        .map((entry) => Path.join(entry.parentPath, entry.name))
        .sort();
}

/** The app's files as they are on disk now; secret values masked unless the caller may see them. */
export function filesOnDisk(server: Server, name: string, revealSecrets: boolean): AppFile[] {
    const service = apps(server);
    const paths = [...filesUnder(service.appDir(name)), service.sitePath(name)].filter((path) => Fs.existsSync(path));
    return paths.map((path) => {
        const content = Fs.readFileSync(path, 'utf8');
        const isSecrets = Path.basename(path) === SECRETS_FILE || Path.basename(path).endsWith('.env');
        const kind: AppFile['kind'] = isSecrets
            ? 'secrets'
            : Path.basename(path) === COMPOSE_FILE
              ? 'compose'
              : path.endsWith('.conf')
                ? 'nginx'
                : 'other';
        const masked = isSecrets && !revealSecrets;
        return { path, kind, content: masked ? maskSecretsFile(content) : content, masked };
    });
}
