/** What ACME leaves on disk: the account key, the HTTP-01 challenge files, and certificates written atomically. */
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

/** Lowercase DNS labels joined by dots: no slashes, no leading dot, so a domain is always one plain folder name. */
const DOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** RFC 8555 tokens are base64url; anything else from a CA must not become a path. */
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/;

export function assertDomain(domain: string): void {
    if (!DOMAIN.test(domain)) {
        throw new Error(`"${domain}" is not a domain name a certificate can be obtained for`);
    }
}

export function accountKeyPath(certificatesDir: string): string {
    return Path.join(certificatesDir, '.acme', 'account.pem');
}

/** Writes a file next to its final name, then renames it over, so readers (nginx) never see half of it. */
export function writeAtomically(path: string, content: string | Buffer, mode: number): void {
    const temporary = Path.join(Path.dirname(path), `.${Path.basename(path)}.${Crypto.randomBytes(6).toString('hex')}.tmp`);
    try {
        Fs.writeFileSync(temporary, content, { mode, flag: 'wx' });
        // The umask may have narrowed the mode; the final mode is the one asked for.
        Fs.chmodSync(temporary, mode);
        Fs.renameSync(temporary, path);
    } catch (error) {
        Fs.rmSync(temporary, { force: true });
        throw error;
    }
}

/** The account key kept for this certificates folder, created (0600, in a 0700 folder) on first use. */
export async function loadOrCreateAccountKey(
    certificatesDir: string,
    create: () => Promise<Buffer>,
): Promise<{ key: Buffer; created: boolean }> {
    const path = accountKeyPath(certificatesDir);
    if (Fs.existsSync(path)) {
        return { key: Fs.readFileSync(path), created: false };
    }

    const key = await create();
    Fs.mkdirSync(Path.dirname(path), { recursive: true, mode: 0o700 });
    writeAtomically(path, key, 0o600);
    return { key, created: true };
}

function challengeDir(webroot: string): string {
    return Path.join(webroot, '.well-known', 'acme-challenge');
}

/** nginx's workers run unprivileged, so the challenge folders and file must be readable by everyone. */
export function writeChallengeFile(webroot: string, token: string, keyAuthorization: string): string {
    if (!TOKEN.test(token)) {
        throw new Error(`the CA sent an HTTP-01 token that is not base64url: "${token}"`);
    }

    const dir = challengeDir(webroot);
    Fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    Fs.chmodSync(Path.dirname(dir), 0o755);
    Fs.chmodSync(dir, 0o755);
    const path = Path.join(dir, token);
    writeAtomically(path, keyAuthorization, 0o644);
    return path;
}

export function removeChallengeFile(path: string): void {
    Fs.rmSync(path, { force: true });
}
