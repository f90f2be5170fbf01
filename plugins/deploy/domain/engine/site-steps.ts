/** The nginx side of a run: the site file, a certificate for nginx to start with, test and reload, and the probe. */
import Fs from 'node:fs';

import { PLACEHOLDER_ORGANISATION, certificatePaths } from '../host/certificate-info.ts';
import { siteAddress } from '../access/sign-in-check.ts';
import { siteUpstreams } from '../nginx/site-model.ts';
import { OUTPOST_PATH } from '../nginx/site-types.ts';
import { checkHttp } from '../host/http-check.ts';
import { reloadNginx, testNginxConfiguration } from '../host/nginx-control.ts';
import { makeSelfSignedCertificate } from '../host/self-signed.ts';
import type { RunContext } from './run-context.ts';

/**
 * nginx will not load a site whose certificate file is missing: until ACME gives the real one, the domain
 * gets a self-signed stand-in (which the certificate step then replaces).
 */
export async function ensureCertificateFiles(context: RunContext): Promise<void> {
    const paths = certificatePaths(context.config.apps.certificatesDir, context.data.domain);
    if (Fs.existsSync(paths.certificate) && Fs.existsSync(paths.key)) {
        return;
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

    // The master answers at once; its new workers take over a moment later.
    await new Promise((resolve) => setTimeout(resolve, 300));
    context.log('nginx reloaded');
}

interface Attempt {
    ok: boolean;
    text: string;
}

/** The loopback upstreams the site's modelled locations proxy to. */
function upstreamsOf(site: string | undefined): string[] {
    if (site === undefined) {
        return [];
    }

    try {
        return siteUpstreams(site);
    } catch {
        return [];
    }
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
    if (!result.location?.includes(OUTPOST_PATH)) {
        return { ok: true, text: answered };
    }

    // Behind forward auth nginx answers for the app without asking it: the app's upstreams are asked directly.
    for (const upstream of upstreamsOf(site)) {
        const direct = await checkHttp({ url: new URL(upstream), host: hostHeader, timeoutMs: 5000 });
        if (direct.statusCode === null || direct.statusCode >= 500) {
            return {
                ok: false,
                text: `sends visitors to sign in, but its upstream ${upstream} did not answer: ${direct.error ?? `status ${direct.statusCode}`}`,
            };
        }
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
