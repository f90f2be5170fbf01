/**
 * Certificate-key pairs: the self-signed one authentik makes at install, and `/crypto/certificatekeypairs/`. A pair
 * with a private key gets a real RSA key, made the first time something signs with it.
 */
import ChildProcess from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import type { ApiOperations } from './api.ts';
import { notFound } from './errors.ts';
import type { Json } from './http.ts';
import { paginated, searched } from './pagination.ts';
import { type KeypairRecord, type Store, timestamp, uuid } from './store.ts';

export const SELF_SIGNED_KEYPAIR = 'authentik Self-signed Certificate';
const YEAR_MS = 365 * 24 * 60 * 60 * 1000;
const privateKeys = new WeakMap<KeypairRecord, Crypto.KeyObject>();

/** The pair's RSA private key, or undefined for a pair without one. */
export function privateKeyOf(keypair: KeypairRecord): Crypto.KeyObject | undefined {
    if (!keypair.private_key_available) {
        return undefined;
    }

    let key = privateKeys.get(keypair);
    if (!key) {
        key = Crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
        privateKeys.set(keypair, key);
    }

    return key;
}

function fingerprint(algorithm: string): string {
    return Crypto.createHash(algorithm).update(Crypto.randomBytes(32)).digest('hex').match(/../g)?.join(':') ?? '';
}

export function seedKeypairs(store: Store): void {
    store.keypairs.push({
        pk: uuid(),
        name: SELF_SIGNED_KEYPAIR,
        private_key_available: true,
        managed: null,
        fingerprint_sha256: fingerprint('sha256'),
        fingerprint_sha1: fingerprint('sha1'),
        cert_expiry: timestamp(YEAR_MS),
        cert_subject: `CN=${SELF_SIGNED_KEYPAIR}`,
    });
}

export function showKeypair(keypair: KeypairRecord): Json {
    return {
        ...keypair,
        key_type: keypair.private_key_available ? 'rsa' : null,
        certificate_download_url: `/api/v3/crypto/certificatekeypairs/${keypair.pk}/view_certificate/?download`,
        private_key_download_url: `/api/v3/crypto/certificatekeypairs/${keypair.pk}/view_private_key/?download`,
    };
}

const certificates = new WeakMap<KeypairRecord, string>();

/** The keypair's self-signed certificate (PEM) over its RSA key, made with openssl the first time it is asked for. */
export function certificateOf(keypair: KeypairRecord): string | undefined {
    const key = privateKeyOf(keypair);
    if (!key) return undefined;
    let certificate = certificates.get(keypair);
    if (!certificate) {
        // openssl reads the key from a file: a pipe (/dev/stdin, "-") is not readable here.
        const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), 'authentik-stand-in-key-'));
        try {
            const keyFile = Path.join(folder, 'key.pem');
            Fs.writeFileSync(keyFile, key.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
            const subject = `/${keypair.cert_subject.replace(/,\s*/g, '/')}`;
            const args = ['req', '-x509', '-new', '-sha256', '-days', '365', '-key', keyFile, '-subj', subject];
            certificate = ChildProcess.execFileSync('openssl', args, { encoding: 'utf8' });
        } finally {
            Fs.rmSync(folder, { recursive: true, force: true });
        }

        certificates.set(keypair, certificate);
    }

    return certificate;
}

export const cryptoOperations: ApiOperations = {
    crypto_certificatekeypairs_view_certificate_retrieve: {
        access: 'objects',
        run({ store, params }) {
            const keypair = store.keypairs.find((candidate) => candidate.pk === params.kp_uuid);
            const certificate = keypair && certificateOf(keypair);
            if (!certificate) throw notFound();
            return { status: 200, body: { data: certificate } };
        },
    },

    crypto_certificatekeypairs_list: {
        access: 'objects',
        run({ store, query }) {
            let keypairs = store.keypairs.filter(
                (keypair) =>
                    (query.has_key === undefined || keypair.private_key_available === query.has_key) &&
                    (query.name === undefined || keypair.name === query.name) &&
                    (query.managed === undefined || keypair.managed === query.managed),
            );
            keypairs = searched(keypairs, query.search, (keypair) => [keypair.name]);
            return { status: 200, body: paginated(keypairs.map(showKeypair), query, 'name') };
        },
    },
};
