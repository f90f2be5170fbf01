/** What the status page and the renewal task read of an app's certificate on disk. */
import { X509Certificate } from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

export interface CertificateInfo {
    issuer: string;
    subject: string;
    names: string[];
    notBefore: string;
    notAfter: string;
    daysLeft: number;
}

const DAY_MS = 86_400_000;

export function certificatePaths(certificatesDir: string, domain: string) {
    const dir = Path.join(certificatesDir, domain);
    return { dir, certificate: Path.join(dir, 'fullchain.pem'), key: Path.join(dir, 'privkey.pem') };
}

/** The leaf certificate of `<certificatesDir>/<domain>/fullchain.pem`, or null when there is none. */
export function certificateInfo(certificatesDir: string, domain: string, at = Date.now()): CertificateInfo | null {
    const { certificate } = certificatePaths(certificatesDir, domain);
    if (!Fs.existsSync(certificate)) {
        return null;
    }

    const leaf = new X509Certificate(Fs.readFileSync(certificate));
    const notAfter = new Date(leaf.validTo);
    return {
        issuer: leaf.issuer.replace(/\n/g, ', '),
        subject: leaf.subject.replace(/\n/g, ', '),
        names: (leaf.subjectAltName ?? '')
            .split(',')
            .map((name) => name.trim().replace(/^DNS:/, ''))
            .filter((name) => name !== ''),
        notBefore: new Date(leaf.validFrom).toISOString(),
        notAfter: notAfter.toISOString(),
        daysLeft: Math.floor((notAfter.getTime() - at) / DAY_MS),
    };
}

/** The organisation a stand-in certificate names, so that it is never taken for the real one. */
export const PLACEHOLDER_ORGANISATION = 'Gatehouse placeholder';

/** A self-signed stand-in made so that nginx could load the site before ACME answered. */
export function hasPlaceholderCertificate(certificatesDir: string, domain: string): boolean {
    return certificateInfo(certificatesDir, domain)?.issuer.includes(PLACEHOLDER_ORGANISATION) === true;
}
