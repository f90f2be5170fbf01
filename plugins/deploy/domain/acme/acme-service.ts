/** Certificates for deployed apps from an ACME CA (HTTP-01 through the managed nginx), and when to renew them. */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import Fs from 'node:fs';
import Path from 'node:path';

import type * as Acme from 'acme-client';

import type { HostConfig } from '../../../../lib/config.ts';
import { type CertificateInfo, certificateInfo, certificatePaths } from '../host/certificate-info.ts';
import { assertDomain, loadOrCreateAccountKey, removeChallengeFile, writeAtomically, writeChallengeFile } from './acme-files.ts';
import { acmeClient, withTrustedCa } from './acme-transport.ts';

export interface CertificateRequest {
    domain: string;
    /** config.apps.certificatesDir; the files go to certificatePaths(certificatesDir, domain). */
    certificatesDir: string;
    host: HostConfig;
    /** One line per step, shown in the run's live log. */
    log: (text: string) => void;
}

const DAY_MS = 86_400_000;

/** Polling the CA for a challenge or order: 1 s, 2 s, 4 s, ... up to 10 s between tries, about 90 s in all. */
const BACKOFF = { backoffAttempts: 12, backoffMin: 1_000, backoffMax: 10_000 };

/**
 * Obtains a certificate for the domain with HTTP-01: the challenge file goes under host.acmeWebroot, which the app's
 * nginx site serves, and is removed afterwards; fullchain.pem (0644) and privkey.pem (0600) replace the domain's files
 * only once the CA has issued a certificate that matches the new key, so a refusal leaves an existing certificate as
 * it was. The ACME account key is kept in <certificatesDir>/.acme/account.pem (0600) and reused.
 */
export async function obtainCertificate(request: CertificateRequest): Promise<CertificateInfo> {
    const { domain, certificatesDir, host, log } = request;
    assertDomain(domain);
    const directoryUrl = host.acmeDirectoryUrl;
    if (!directoryUrl) {
        throw new Error(`cannot obtain a certificate for ${domain}: no ACME CA is configured (ACME_DIRECTORY_URL)`);
    }

    try {
        const issued = await withTrustedCa(directoryUrl, host.acmeCaFile, () => issue(directoryUrl, request));
        storeCertificate(certificatesDir, domain, issued);
    } catch (error) {
        throw new Error(`ACME (${directoryUrl}) did not issue a certificate for ${domain}: ${(error as Error).message}`, { cause: error });
    }

    const info = certificateInfo(certificatesDir, domain) as CertificateInfo;
    log(`Certificate for ${domain} saved, issued by ${info.issuer}, valid until ${info.notAfter}`);
    return info;
}

interface IssuedCertificate {
    chain: string;
    key: Buffer;
}

async function issue(directoryUrl: string, request: CertificateRequest): Promise<IssuedCertificate> {
    const { domain, certificatesDir, host, log } = request;
    const client = await accountClient(directoryUrl, certificatesDir, host, log);
    log(`Ordering a certificate for ${domain} from ${directoryUrl}`);
    const order = await client.createOrder({ identifiers: [{ type: 'dns', value: domain }] });
    for (const authorization of await client.getAuthorizations(order)) {
        await authorize(client, authorization, host.acmeWebroot, log);
    }

    log(`Finalizing the order for ${domain}`);
    const [key, csr] = await acmeClient().crypto.createCsr({ commonName: domain, altNames: [domain] });
    const finalized = await client.finalizeOrder(order, csr);
    return { chain: await client.getCertificate(finalized), key };
}

async function accountClient(directoryUrl: string, certificatesDir: string, host: HostConfig, log: (text: string) => void) {
    const account = await loadOrCreateAccountKey(certificatesDir, () => acmeClient().crypto.createPrivateKey());
    const client = new (acmeClient().Client)({ directoryUrl, accountKey: account.key, ...BACKOFF });
    await register(client, account.created, host.acmeEmail);
    log(`ACME account ready at ${directoryUrl}`);
    return client;
}

/** Looks the kept key's account up first: asking to create it again would send an empty update, which CAs refuse. */
async function register(client: Acme.Client, keyIsNew: boolean, email: string | undefined): Promise<void> {
    const contact = email ? { contact: [`mailto:${email}`] } : {};
    if (!keyIsNew) {
        try {
            await client.createAccount({ onlyReturnExisting: true, ...contact });
            return;
        } catch {
            // This CA does not know the key yet (another directory URL): register it below.
        }
    }

    // Whoever sets ACME_DIRECTORY_URL has chosen the CA and accepts its terms of service.
    await client.createAccount({ termsOfServiceAgreed: true, ...contact });
}

async function authorize(client: Acme.Client, authorization: Acme.Authorization, webroot: string, log: (text: string) => void) {
    const domain = authorization.identifier.value;
    if (authorization.status === 'valid') {
        log(`The CA already holds a valid authorization for ${domain}`);
        return;
    }

    const challenge = authorization.challenges.find((candidate) => candidate.type === 'http-01');
    if (!challenge) {
        throw new Error(`the CA offers no HTTP-01 challenge for ${domain}`);
    }

    const file = writeChallengeFile(webroot, challenge.token, await client.getChallengeKeyAuthorization(challenge));
    try {
        log(`Challenge file written to ${Path.relative(webroot, file)}; waiting for the CA to fetch it`);
        await client.completeChallenge(challenge);
        await client.waitForValidStatus(challenge);
        log(`The CA validated ${domain}`);
    } catch (error) {
        throw new Error(`the HTTP-01 challenge failed: ${(error as Error).message}`, { cause: error });
    } finally {
        removeChallengeFile(file);
    }
}

/** Checks the issued pair before it replaces anything: the leaf names the domain and matches the new key. */
function storeCertificate(certificatesDir: string, domain: string, issued: IssuedCertificate): void {
    const leaf = new X509Certificate(issued.chain);
    if (!leaf.checkPrivateKey(createPrivateKey(issued.key))) {
        throw new Error('the issued certificate does not match the key it was requested with');
    }

    if (!leaf.checkHost(domain)) {
        throw new Error(`the issued certificate does not name ${domain} (${leaf.subjectAltName ?? leaf.subject})`);
    }

    const paths = certificatePaths(certificatesDir, domain);
    Fs.mkdirSync(paths.dir, { recursive: true, mode: 0o755 });
    writeAtomically(paths.key, issued.key, 0o600);
    writeAtomically(paths.certificate, issued.chain, 0o644);
}

/** Whether the domain's certificate is missing, unreadable, for other names, or expires within host.acmeRenewDays. */
export function needsRenewal(certificatesDir: string, domain: string, host: HostConfig, at = Date.now()): boolean {
    let info: CertificateInfo | null;
    try {
        info = certificateInfo(certificatesDir, domain, at);
    } catch {
        return true;
    }

    if (!info || !info.names.includes(domain)) {
        return true;
    }

    return Date.parse(info.notAfter) - at < host.acmeRenewDays * DAY_MS;
}

/** Deletes the domain's certificate folder (an app deleted with removeCert); true when there was one. */
export function removeCertificate(certificatesDir: string, domain: string): boolean {
    assertDomain(domain);
    const { dir } = certificatePaths(certificatesDir, domain);
    if (!Fs.existsSync(dir)) {
        return false;
    }

    Fs.rmSync(dir, { recursive: true, force: true });
    return true;
}
