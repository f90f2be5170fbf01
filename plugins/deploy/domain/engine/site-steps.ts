/** The nginx side of a run: the site file, a certificate for nginx to start with, test and reload, and the probe. */
import Fs from 'node:fs';

import { sendsToSignIn } from '../../../idp/forward-auth.ts';
import { PLACEHOLDER_ORGANISATION, certificatePaths } from '../host/certificate-info.ts';
import { siteAddress } from '../access/sign-in-check.ts';
import { loopbackUpstreams } from '../nginx/site-model.ts';
import { checkHttp, silentUpstream } from '../host/http-check.ts';
import { reloadNginx, testNginxConfiguration } from '../host/nginx-control.ts';
import { makeSelfSignedCertificate } from '../host/self-signed.ts';
import { type FileSnapshot, type RunContext, snapshotFile, writeFileAtomically } from './run-context.ts';

/**
 * nginx will not load a site whose certificate file is missing: until ACME gives the real one, the domain
 * gets a self-signed stand-in (which the certificate step then replaces).
 */
export async function ensureCertificateFiles(context: RunContext, changed: FileSnapshot[]): Promise<void> {
    const paths = certificatePaths(context.config.apps.certificatesDir, context.data.domain);
    if (Fs.existsSync(paths.certificate) && Fs.existsSync(paths.key)) {
        return;
    }

    // The stand-in (and a certificate obtained in its place later in the run) goes with the run when it is undone.
    for (const path of [paths.certificate, paths.key]) {
        const snapshot = snapshotFile(path);
        await context.journal({ type: 'file', path, backup: null, mode: snapshot.mode });
        changed.push(snapshot);
    }

    Fs.mkdirSync(paths.dir, { recursive: true, mode: 0o755 });
    await makeSelfSignedCertificate({
        certificate: paths.certificate,
        key: paths.key,
        subject: `/O=${PLACEHOLDER_ORGANISATION}/CN=${context.data.domain}`,
        days: 30,
        dnsName: context.data.domain,
    });
    context.log(`No certificate yet for ${context.data.domain}: a self-signed stand-in lets nginx load the site until ACME answers`);
}

const MAINTENANCE_LINES = [
    '# Gatehouse: the app is being updated; visitors see this until its new version is healthy.',
    'default_type text/html;',
    'add_header Retry-After 15 always;',
    "return 503 '<!doctype html><meta charset=utf-8><title>Updating</title><p>This app is being updated and will be back in a moment.</p>\\n';",
];

/** The site with each server block answering 503 before any of its locations; the rest of its text unchanged. */
export function maintenanceSite(site: string): string {
    return site.replace(/^([ \t]*)server\s*\{[ \t]*$/gm, (line, indent: string) =>
        [line, ...MAINTENANCE_LINES.map((text) => `${indent}    ${text}`)].join('\n'),
    );
}

/**
 * Keeps visitors off the app while its containers are replaced: the site answers a maintenance page until the run
 * writes the new site (or puts this one back). A site nginx will not take this way keeps serving as it was.
 */
export async function holdVisitors(context: RunContext, changed: FileSnapshot[]): Promise<void> {
    const { siteFile } = context.paths;
    if (!Fs.existsSync(siteFile)) {
        return;
    }

    const current = snapshotFile(siteFile);
    const held = maintenanceSite(current.content ?? '');
    if (held === current.content) {
        return;
    }

    await context.writeFile(changed, siteFile, held, current.mode);
    try {
        await testAndReload(context);
    } catch (error) {
        writeFileAtomically(siteFile, current.content ?? '', current.mode);
        context.log(
            `Visitors reach the app while it is replaced: nginx refused the maintenance page (${(error as Error).message})`,
            'warning',
        );
        return;
    }

    context.log("Visitors see a maintenance page (503) while the app's containers are replaced");
}

/** `nginx -t` on the whole configuration, then a reload; a failed test throws with nginx's own words. */
export async function testAndReload(context: RunContext): Promise<void> {
    const tested = await testNginxConfiguration(context.config.host);
    if (!tested.ok) {
        throw new Error(`nginx -t failed: ${tested.output}`);
    }

    context.log('nginx -t: the configuration is valid');
    const reloaded = await reloadNginx(context.config.host);
    if (!reloaded.ok) {
        throw new Error(`nginx could not reload: ${reloaded.output}`);
    }

    context.log('nginx reloaded');
}

interface Attempt {
    ok: boolean;
    text: string;
}

async function attemptThroughNginx(context: RunContext, https: boolean, site: string | undefined): Promise<Attempt> {
    const host = context.config.host;
    const port = https ? host.nginxHttpsPort : host.nginxHttpPort;
    // A browser sends the port in Host when it is not the scheme's default; the identity provider's outpost matches it.
    const hostHeader = siteAddress({ host, domain: context.data.domain, https }).hostHeader;
    // As a visitor's request arrives: at nginx on loopback, with the app's name as Host and SNI. The chain is not
    // verified: the certificate is checked on its own, and a stand-in must not stop the check of the proxying.
    const url = new URL(`${https ? 'https' : 'http'}://127.0.0.1:${port}/`);
    const result = await checkHttp({ url, host: hostHeader, timeoutMs: 5000, skipVerification: true });
    if (result.statusCode === null || result.statusCode >= 500) {
        return { ok: false, text: `did not answer through nginx: ${result.error ?? `status ${result.statusCode}`}` };
    }

    const answered = `answered ${result.statusCode} through nginx in ${result.ms} ms`;
    if (!sendsToSignIn(result.location)) {
        return { ok: true, text: answered };
    }

    // Behind forward auth nginx answers for the app without asking it: the app's upstreams are asked directly.
    const silent = await silentUpstream(loopbackUpstreams(site), hostHeader);
    if (silent) {
        return { ok: false, text: `sends visitors to sign in, but ${silent}` };
    }

    return { ok: true, text: `${answered} (to the sign-in; the app's upstream answers)` };
}

/**
 * The app answers through nginx: any status below 500 (a login page or a redirect is an answer; 502 is not). Behind
 * forward auth, nginx's redirect to the sign-in is its answer, and the app's upstreams must answer too.
 */
export async function checkThroughNginx(context: RunContext, https: boolean): Promise<void> {
    const port = https ? context.config.host.nginxHttpsPort : context.config.host.nginxHttpPort;
    const shown = `${https ? 'https' : 'http'}://${context.data.domain}:${port}/`;
    const site = context.data.files?.site;
    const deadline = Date.now() + 15_000;
    for (;;) {
        const attempt = await attemptThroughNginx(context, https, site);
        if (attempt.ok) {
            context.log(`${shown} ${attempt.text}`);
            return;
        }

        if (Date.now() > deadline) {
            throw new Error(`${shown} ${attempt.text}`);
        }

        await new Promise((resolve) => setTimeout(resolve, 500));
    }
}
