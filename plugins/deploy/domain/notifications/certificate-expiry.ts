/** The daily look at the certificates folder (jobs/check-certificates.ts): which certificates expire soon. */
import Fs from 'node:fs';

import { certificateInfo, hasPlaceholderCertificate } from '../host/certificate-info.ts';

export const CERTIFICATE_CHECK_JOB = 'check-certificates';
/** A certificate is warned of this many days before it expires, and every day after until it is renewed. */
export const EXPIRY_WARNING_DAYS = 14;

export interface ExpiringCertificate {
    domain: string;
    notAfter: string;
    daysLeft: number;
}

/** The certificates of `<certificatesDir>/<domain>/` that expire within the warning days (stand-ins left out). */
export function expiringCertificates(certificatesDir: string, at = Date.now()): ExpiringCertificate[] {
    if (!Fs.existsSync(certificatesDir)) {
        return [];
    }

    const expiring: ExpiringCertificate[] = [];
    for (const entry of Fs.readdirSync(certificatesDir, { withFileTypes: true })) {
        if (!entry.isDirectory() || entry.name.startsWith('.')) {
            continue;
        }

        try {
            const info = certificateInfo(certificatesDir, entry.name, at);
            if (
                info &&
                !hasPlaceholderCertificate(certificatesDir, entry.name) &&
                Date.parse(info.notAfter) - at < EXPIRY_WARNING_DAYS * 86_400_000
            ) {
                expiring.push({ domain: entry.name, notAfter: info.notAfter, daysLeft: info.daysLeft });
            }
        } catch {
            // A file that is not a certificate is the renewal's and the status page's to report.
        }
    }

    return expiring.sort((left, right) => left.domain.localeCompare(right.domain));
}
