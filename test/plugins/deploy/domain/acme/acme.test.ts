// needs: docker
import Crypto, { X509Certificate } from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import Https from 'node:https';
import Path from 'node:path';
import type { TLSSocket } from 'node:tls';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { needsRenewal, obtainCertificate, removeCertificate } from '../../../../../plugins/deploy/domain/acme/acme-service.ts';
import type { RenewalSummary } from '../../../../../plugins/deploy/domain/acme/renewal-events.ts';
import { certificatePaths } from '../../../../../plugins/deploy/domain/host/certificate-info.ts';
import { reloadNginx } from '../../../../../plugins/deploy/domain/host/nginx-control.ts';
import { ROOT_DIR } from '../../../../../server.ts';
import { createTestServer, type TestServer, temporaryDirectory } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { type RunningServices, type ServiceExports, startServices } from '../../../../support/services.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const RENEW_WORKER = Path.join(ROOT_DIR, 'jobs', 'renew-certificates.ts');
const SUFFIX = Crypto.randomBytes(4).toString('hex');
const DOMAIN = `acme-${SUFFIX}.apps.test`;
const REFUSED = `refused-${SUFFIX}.apps.test`;
const UNSERVED = `unserved-${SUFFIX}.apps.test`;
const UNCONFIGURED = `unconfigured-${SUFFIX}.apps.test`;
const REMOVED = `removed-${SUFFIX}.apps.test`;

interface HttpsAnswer {
    status: number;
    body: string;
    serial: string;
}

/** GET over TLS to 127.0.0.1 trusting only `ca`, presenting `servername` (SNI, Host and the name checked) if given. */
function httpsGet(port: number, path: string, ca: string | Buffer, servername?: string): Promise<HttpsAnswer> {
    const named = servername ? { servername, headers: { host: servername } } : {};
    return new Promise((resolve, reject) => {
        const request = Https.get({ host: '127.0.0.1', port, path, ca, agent: false, ...named }, (response) => {
            const serial = (response.socket as TLSSocket).getPeerCertificate().serialNumber;
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), serial }));
        });
        request.on('error', reject);
        request.setTimeout(10_000, () => request.destroy(new Error(`GET ${path} timed out`)));
    });
}

/** Plain HTTP to nginx on 127.0.0.1, as a client asking for `domain` (fetch will not send a Host header of ours). */
function httpGet(port: string, path: string, domain: string): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
        const request = Http.get({ host: '127.0.0.1', port, path, headers: { host: domain }, agent: false }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        });
        request.on('error', reject);
        request.setTimeout(5_000, () => request.destroy(new Error(`GET ${path} timed out`)));
    });
}

/** `nginx -s reload` returns once nginx has the signal, before its new workers answer: wait for the change to show. */
async function eventually<T>(what: string, attempt: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
    let last: unknown;
    const accepted = async () => {
        try {
            last = await attempt();
            return accept(last as T) && { value: last as T };
        } catch (error) {
            last = error;
            return false;
        }
    };
    const { value } = await waitUntil(what, accepted, { timeoutMs: 15_000, intervalMs: 100 }).catch((error: Error) => {
        throw new Error(`${error.message}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    });
    return value;
}

/** scripts/services.sh writes pebble's configuration next to the certificate of its API (ACME_CA_FILE). */
function pebbleManagementPort(exports: ServiceExports): number {
    const config = JSON.parse(Fs.readFileSync(Path.join(Path.dirname(exports.ACME_CA_FILE), 'config.json'), 'utf8')) as {
        pebble: { managementListenAddress: string };
    };
    return Number(config.pebble.managementListenAddress.split(':').pop());
}

function leafOf(certificatesDir: string, domain: string): X509Certificate {
    return new X509Certificate(Fs.readFileSync(certificatePaths(certificatesDir, domain).certificate));
}

function modeOf(path: string): number {
    return Fs.statSync(path).mode & 0o777;
}

describe('deploy manager: certificates from an ACME CA (pebble) through nginx', { timeout: 300_000 }, () => {
    let services: RunningServices;
    let context: TestServer;
    let certificatesDir: string;
    let pebbleRoot: string;
    let pebbleIntermediate: X509Certificate;
    const sites: string[] = [];
    const scratch: string[] = [];

    const writeSite = async (name: string, text: string) => {
        const file = Path.join(services.exports.NGINX_SITES_DIR, `${name}.conf`);
        Fs.writeFileSync(file, text);
        if (!sites.includes(file)) {
            sites.push(file);
        }

        const reload = await reloadNginx(context.config.host);
        expect(reload.ok, reload.output).to.be.true();
    };

    /**
     * An app site as the deploy manager writes it, with the challenge location rooted at ACME_WEBROOT (or `challenge`
     * instead), plus a version that tells when nginx serves this very text.
     */
    const challengeSite = async (domain: string, challenge = `root ${services.exports.ACME_WEBROOT};`) => {
        const version = Crypto.randomBytes(6).toString('hex');
        await writeSite(
            domain,
            `server {\n    listen 127.0.0.1:${services.exports.NGINX_HTTP_PORT};\n    server_name ${domain};\n` +
                `    location ^~ /.well-known/acme-challenge/ { ${challenge} }\n` +
                `    location = /site-version { return 200 '${version}'; }\n    location / { return 404; }\n}\n`,
        );
        await eventually(
            `nginx serving the new site of ${domain}`,
            () => httpGet(services.exports.NGINX_HTTP_PORT, '/site-version', domain),
            (answer) => answer.body === version,
        );
    };

    /** A site that answers every challenge with 404, so the CA cannot validate the domain. */
    const unservedSite = (domain: string) => challengeSite(domain, 'return 404;');

    const httpsSite = async (domain: string) => {
        const paths = certificatePaths(certificatesDir, domain);
        await writeSite(
            `${domain}-https`,
            `server {\n    listen 127.0.0.1:${services.exports.NGINX_HTTPS_PORT} ssl;\n    server_name ${domain};\n` +
                `    ssl_certificate ${paths.certificate};\n    ssl_certificate_key ${paths.key};\n` +
                `    location / { default_type text/plain; return 200 'hello from ${domain}\\n'; }\n}\n`,
        );
        await eventually(
            `nginx serving ${domain} over HTTPS`,
            () => fetchApp(domain),
            (answer) => answer.status === 200,
        );
    };

    /** What obtaining DOMAIN's certificate gave and logged, and whether it was due before: the first test that asks obtains it. */
    let obtained: Promise<{ dueBefore: boolean; info: Awaited<ReturnType<typeof obtainCertificate>>; lines: string[] }> | undefined;
    const haveCertificate = () =>
        (obtained ??= (async () => {
            await challengeSite(DOMAIN);
            const dueBefore = needsRenewal(certificatesDir, DOMAIN, context.config.host);
            const lines: string[] = [];
            const info = await obtainCertificate({
                domain: DOMAIN,
                certificatesDir,
                host: context.config.host,
                log: (text) => lines.push(text),
            });
            return { dueBefore, info, lines };
        })());

    /** DOMAIN's certificate served over HTTPS by nginx, set up by the first test that asks. */
    let servedOverHttps: Promise<void> | undefined;
    const haveHttpsSite = () =>
        (servedOverHttps ??= (async () => {
            await haveCertificate();
            await httpsSite(DOMAIN);
        })());

    const fetchApp = (domain: string) => httpsGet(Number(services.exports.NGINX_HTTPS_PORT), '/', pebbleRoot, domain);

    const runRenewal = async (): Promise<RenewalSummary[]> => {
        const messages: RenewalSummary[] = [];
        await context.server.app.jobs.runOnce(RENEW_WORKER, {}, (message) => messages.push(message as RenewalSummary));
        return messages;
    };

    const challengeFiles = () => {
        const dir = Path.join(services.exports.ACME_WEBROOT, '.well-known', 'acme-challenge');
        return Fs.existsSync(dir) ? Fs.readdirSync(dir) : [];
    };

    const cleanUp = async () => {
        for (const file of sites) {
            Fs.rmSync(file, { force: true });
        }

        if (context) {
            await reloadNginx(context.config.host);
            await context.cleanup();
        }

        services?.stop();
        for (const dir of scratch) {
            Fs.rmSync(dir, { recursive: true, force: true });
        }
    };

    before(async () => {
        services = await startServices();
        // lab skips the after hooks when a before hook fails, so a failure here cleans up itself.
        try {
            const { exports } = services;
            const management = pebbleManagementPort(exports);
            const apiCa = Fs.readFileSync(exports.ACME_CA_FILE);
            pebbleRoot = (await httpsGet(management, '/roots/0', apiCa)).body;
            pebbleIntermediate = new X509Certificate((await httpsGet(management, '/intermediates/0', apiCa)).body);
            context = await createTestServer({
                NGINX_BIN: exports.NGINX_BIN,
                NGINX_CONF: exports.NGINX_CONF,
                NGINX_SITES_DIR: exports.NGINX_SITES_DIR,
                NGINX_HTTP_PORT: exports.NGINX_HTTP_PORT,
                NGINX_HTTPS_PORT: exports.NGINX_HTTPS_PORT,
                ACME_DIRECTORY_URL: exports.ACME_DIRECTORY_URL,
                ACME_CA_FILE: exports.ACME_CA_FILE,
                ACME_WEBROOT: exports.ACME_WEBROOT,
                ACME_EMAIL: 'admin@apps.test',
            });
            certificatesDir = context.config.apps.certificatesDir;
        } catch (error) {
            await cleanUp();
            throw error;
        }
    });

    after(cleanUp);

    it('says clearly that no CA is configured when ACME_DIRECTORY_URL is unset', async () => {
        const host = { ...context.config.host, acmeDirectoryUrl: undefined };
        await expect(obtainCertificate({ domain: UNCONFIGURED, certificatesDir, host, log: () => {} })).to.reject(/ACME_DIRECTORY_URL/);
        expect(Fs.existsSync(certificatePaths(certificatesDir, UNCONFIGURED).dir)).to.be.false();
    });

    it('obtains a certificate with HTTP-01 through the app site and saves the pair with tight modes', async () => {
        const { dueBefore, info, lines } = await haveCertificate();
        expect(dueBefore).to.be.true();
        expect(info.names).to.equal([DOMAIN]);
        expect(lines.length).to.be.above(3);
        expect(lines.some((line) => line.includes('validated'))).to.be.true();
        const paths = certificatePaths(certificatesDir, DOMAIN);
        expect(modeOf(paths.certificate)).to.equal(0o644);
        expect(modeOf(paths.key)).to.equal(0o600);
        expect(modeOf(Path.join(certificatesDir, '.acme', 'account.pem'))).to.equal(0o600);
        expect(Fs.readdirSync(paths.dir).sort()).to.equal(['fullchain.pem', 'privkey.pem']);

        const leaf = leafOf(certificatesDir, DOMAIN);
        expect(leaf.checkPrivateKey(Crypto.createPrivateKey(Fs.readFileSync(paths.key)))).to.be.true();
        expect(leaf.subjectAltName).to.equal(`DNS:${DOMAIN}`);
        expect(leaf.issuer).to.equal(pebbleIntermediate.subject);
        expect(leaf.checkIssued(pebbleIntermediate)).to.be.true();
        expect(leaf.verify(pebbleIntermediate.publicKey)).to.be.true();
        expect(challengeFiles()).to.equal([]);
        expect(needsRenewal(certificatesDir, DOMAIN, context.config.host)).to.be.false();
        // pebble's API certificate was trusted for the ACME requests only, not by the process.
        await expect(fetch(services.exports.ACME_DIRECTORY_URL)).to.reject();
    });

    it('serves the certificate over HTTPS through nginx to a client trusting only pebble', async () => {
        await haveHttpsSite();
        const answer = await fetchApp(DOMAIN);
        expect(answer.status).to.equal(200);
        expect(answer.body).to.equal(`hello from ${DOMAIN}\n`);
        expect(answer.serial).to.equal(leafOf(certificatesDir, DOMAIN).serialNumber);
    });

    it('throws a clear error when the CA cannot fetch the challenge, and writes nothing', async () => {
        await unservedSite(UNSERVED);
        const attempt = obtainCertificate({ domain: UNSERVED, certificatesDir, host: context.config.host, log: () => {} });
        const error = (await expect(attempt).to.reject()) as Error;
        expect(error.message).to.contain(`did not issue a certificate for ${UNSERVED}`);
        expect(error.message).to.contain('HTTP-01 challenge failed');
        expect(error.message).to.contain('404');
        expect(Fs.existsSync(certificatePaths(certificatesDir, UNSERVED).dir)).to.be.false();
        expect(challengeFiles()).to.equal([]);
    });

    it('renews through the scheduled worker only what is due, keeps a refused domain as it was, and reloads nginx', async () => {
        // The refused domain's certificate comes from another ACME account, so that pebble cannot reuse a valid
        // authorization of ours for it: renewing it needs a challenge, which its site answers with 404.
        await haveHttpsSite();
        const elsewhere = temporaryDirectory('gatehouse-acme-');
        scratch.push(elsewhere);
        await challengeSite(REFUSED);
        await obtainCertificate({ domain: REFUSED, certificatesDir: elsewhere, host: context.config.host, log: () => {} });
        Fs.cpSync(certificatePaths(elsewhere, REFUSED).dir, certificatePaths(certificatesDir, REFUSED).dir, { recursive: true });
        await unservedSite(REFUSED);

        const now = Date.now();
        const app = (name: string, domain: string, state: string, port: number) => ({
            name,
            domain,
            state,
            host_port: port,
            draft: '{}',
            created_at: now,
            updated_at: now,
        });
        await context.database.knex('dp_apps').insert([
            app('served', DOMAIN, 'running', 31001),
            app('refused', REFUSED, 'running', 31002),
            // Neither a draft nor an app that never got as far as a certificate is renewed.
            app('drafted', `drafted-${SUFFIX}.apps.test`, 'draft', 31003),
            app('broken', `broken-${SUFFIX}.apps.test`, 'failed', 31004),
        ]);

        const accountKey = Fs.readFileSync(Path.join(certificatesDir, '.acme', 'account.pem'));
        const served = leafOf(certificatesDir, DOMAIN).serialNumber;
        const refusedFiles = Fs.readdirSync(certificatePaths(certificatesDir, REFUSED).dir).map((file) =>
            Fs.readFileSync(Path.join(certificatePaths(certificatesDir, REFUSED).dir, file)),
        );

        expect(await runRenewal()).to.equal([{ renewed: [], failed: [] }]);
        expect(leafOf(certificatesDir, DOMAIN).serialNumber).to.equal(served);

        // pebble's certificates last years; a renewal window longer than that makes them all due.
        const renewDays = context.server.app.config.host.acmeRenewDays;
        context.server.app.config.host.acmeRenewDays = 20 * 365;
        let summaries: RenewalSummary[];
        try {
            summaries = await runRenewal();
        } finally {
            context.server.app.config.host.acmeRenewDays = renewDays;
        }

        expect(summaries.length).to.equal(1);
        const [summary] = summaries as [RenewalSummary];
        expect(summary.renewed).to.equal([DOMAIN]);
        expect(summary.reloadError).to.not.exist();
        expect(summary.failed.length).to.equal(1);
        expect(summary.failed[0]?.domain).to.equal(REFUSED);
        expect(summary.failed[0]?.error).to.contain(`did not issue a certificate for ${REFUSED}`);
        expect(summary.failed[0]?.error).to.contain('404');

        const renewed = leafOf(certificatesDir, DOMAIN);
        expect(renewed.serialNumber).to.not.equal(served);
        // The worker reloaded nginx, which then serves the new certificate.
        await eventually(
            'nginx serving the renewed certificate',
            () => fetchApp(DOMAIN),
            (answer) => answer.serial === renewed.serialNumber,
        );
        expect(Fs.readFileSync(Path.join(certificatesDir, '.acme', 'account.pem'))).to.equal(accountKey);
        const refusedNow = Fs.readdirSync(certificatePaths(certificatesDir, REFUSED).dir).map((file) =>
            Fs.readFileSync(Path.join(certificatePaths(certificatesDir, REFUSED).dir, file)),
        );
        expect(refusedNow).to.equal(refusedFiles);
        expect(challengeFiles()).to.equal([]);
    });

    it('removes a certificate folder, and says whether there was one', async () => {
        // A folder of its own (a copy of DOMAIN's pair), which no other test reads.
        await haveCertificate();
        Fs.cpSync(certificatePaths(certificatesDir, DOMAIN).dir, certificatePaths(certificatesDir, REMOVED).dir, { recursive: true });
        expect(removeCertificate(certificatesDir, REMOVED)).to.be.true();
        expect(Fs.existsSync(certificatePaths(certificatesDir, REMOVED).dir)).to.be.false();
        expect(removeCertificate(certificatesDir, REMOVED)).to.be.false();
        expect(() => removeCertificate(certificatesDir, '../escape')).to.throw(/not a domain name/);
    });
});
