import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_PREFIX = 'v1:';

/** Seals and opens secrets with authenticated encryption (AES-256-GCM) under the master key. */
export class Sealer {
    readonly #key: Buffer;

    constructor(key: Buffer) {
        if (key.length !== 32) {
            throw new Error('The master key must be 32 bytes');
        }

        this.#key = key;
    }

    /** A key for another purpose (a cookie's, say), derived from the master key, never stored. */
    derive(purpose: string): Buffer {
        return Buffer.from(Crypto.hkdfSync('sha256', this.#key, Buffer.alloc(0), purpose, 32));
    }

    seal(plaintext: string, associatedData = ''): string {
        const iv = Crypto.randomBytes(IV_BYTES);
        const cipher = Crypto.createCipheriv(ALGORITHM, this.#key, iv);
        cipher.setAAD(Buffer.from(associatedData));
        const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
        return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
    }

    open(sealed: string, associatedData = ''): string {
        if (!sealed.startsWith(SEALED_PREFIX)) {
            throw new Error('Not a sealed value');
        }

        const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
        const iv = raw.subarray(0, IV_BYTES);
        const tag = raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
        const decipher = Crypto.createDecipheriv(ALGORITHM, this.#key, iv);
        decipher.setAAD(Buffer.from(associatedData));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    }
}

/**
 * The master key comes from MASTER_KEY when set; otherwise from DATA_DIR/master.key, which is
 * generated (mode 0600) on first start. DATA_DIR is made here (0700) when missing, before anything
 * else puts files in it; an existing folder keeps its mode.
 */
export function loadMasterKey(dataDir: string, configured: string | undefined): Buffer {
    Fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (configured) {
        return Buffer.from(configured, 'hex');
    }

    const file = Path.join(dataDir, 'master.key');
    if (Fs.existsSync(file)) {
        const stored = Fs.readFileSync(file, 'utf8').trim();
        if (!/^[0-9a-f]{64}$/i.test(stored)) {
            throw new Error(`${file} does not hold a 64-character hexadecimal key`);
        }

        return Buffer.from(stored, 'hex');
    }

    const key = Crypto.randomBytes(32);
    Fs.writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
}

export function randomToken(bytes = 20): string {
    return Crypto.randomBytes(bytes).toString('hex');
}

/** One-shot: about a third of createHash's cost, which every token-authenticated request pays. */
export function sha256Hex(value: string): string {
    return Crypto.hash('sha256', value, 'hex');
}
