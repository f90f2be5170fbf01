/** Self-signed certificates (EC P-256) made with openssl: stand-ins where nginx needs a certificate file to exist. */
import { execFile } from 'node:child_process';
import Fs from 'node:fs';

export interface SelfSignedRequest {
    certificate: string;
    key: string;
    /** openssl's form: `/O=.../CN=...`. */
    subject: string;
    days: number;
    /** A DNS name for subjectAltName. */
    dnsName?: string;
}

/** Writes the pair (the key 0600); throws with openssl's own words when it fails. */
export async function makeSelfSignedCertificate(request: SelfSignedRequest): Promise<void> {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', String(request.days)];
    args.push('-subj', request.subject, '-keyout', request.key, '-out', request.certificate);
    if (request.dnsName) {
        args.push('-addext', `subjectAltName=DNS:${request.dnsName}`);
    }

    await new Promise<void>((resolve, reject) => {
        execFile('openssl', args, { timeout: 30_000 }, (error, _stdout, stderr) =>
            error ? reject(new Error(`openssl could not make a self-signed certificate: ${stderr.trim()}`)) : resolve(),
        );
    });
    Fs.chmodSync(request.key, 0o600);
}
