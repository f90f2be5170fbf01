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

/** `NAME=` with what env-file readers allow around it (`export`, blanks); the rest of the line is the value. */
const SECRET_LINE = /^([\t ]*(?:export[\t ]+)?[A-Za-z_][A-Za-z0-9_]*[\t ]*=)(.*)$/s;

/** Whether `text` holds an unescaped `quote` (in double quotes a backslash escapes the next character). */
function closesQuote(text: string, quote: string): boolean {
    for (let index = 0; index < text.length; index += 1) {
        if (quote === '"' && text[index] === '\\') {
            index += 1;
        } else if (text[index] === quote) {
            return true;
        }
    }

    return false;
}

/** The quote a value opens and leaves open, to go on over the next lines (Compose reads such values). */
function openQuote(value: string): string | undefined {
    const trimmed = value.trimStart();
    const quote = trimmed[0];
    return (quote === '"' || quote === "'") && !closesQuote(trimmed.slice(1), quote) ? quote : undefined;
}

function maskLine(line: string, match: RegExpExecArray | null): string {
    if (match) {
        return `${match[1]}${maskSecret(match[2] ?? '')}`;
    }

    return /^[\t ]*$/.test(line) ? line : maskSecret(line);
}

/**
 * Every value masked whole. Lines are split at \n only, as the env-file readers split them, so whatever else a
 * value holds (\r, U+2028, U+2029, U+0085, \v, \f: line ends to other readers) is masked with it to the end of
 * its line; the lines of a multi-line quoted value, comments and anything that is not `NAME=value` are masked
 * whole. Only names, blank lines and the line endings are left.
 */
function maskSecretsFile(text: string): string {
    let quote: string | undefined;
    return text
        .split('\n')
        .map((rawLine) => {
            const ending = rawLine.endsWith('\r') ? '\r' : '';
            const line = rawLine.slice(0, rawLine.length - ending.length);
            if (quote !== undefined) {
                quote = closesQuote(line, quote) ? undefined : quote;
                return `${maskSecret(line)}${ending}`;
            }

            const match = SECRET_LINE.exec(line);
            quote = match ? openQuote(match[2] ?? '') : undefined;
            return `${maskLine(line, match)}${ending}`;
        })
        .join('\n');
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
        if (kind === 'nginx') {
            const shown = maskSiteCredentials(content);
            return { path, kind, content: shown, masked: shown !== content };
        }

        const masked = isSecrets && !revealSecrets;
        return { path, kind, content: masked ? maskSecretsFile(content) : content, masked };
    });
}

/**
 * A site written by a run may carry a shared account's credentials (HTTP Basic) or the app's auto-login token:
 * never shown, to anyone.
 */
export function maskSiteCredentials(site: string): string {
    return site.replace(
        /(proxy_set_header\s+(?:Authorization|X-Gatehouse-Autologin-Token)\s+)("[^"]*"|'[^']*'|\S+);/gi,
        `$1"${maskSecret('x')}";`,
    );
}
