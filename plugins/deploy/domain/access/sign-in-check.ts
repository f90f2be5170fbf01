/**
 * "Checking the sign-in": a visitor without a session, arriving at nginx with the app's name (and port) as Host,
 * must be sent to the provider's sign-in. Two hops are followed: nginx's redirect to the outpost's start, then the
 * outpost's redirect away to the provider, which it gives only when it knows the app's host.
 */
import type { HostConfig } from '../../../../lib/config.ts';
import { onOrigin } from '../../../../lib/app-urls.ts';
import { checkHttp } from '../host/http-check.ts';
import { signInPageOf } from '../../../idp/forward-auth.ts';

export interface SignInCheck {
    ok: boolean;
    /** What was seen, as a sentence. */
    text: string;
    /** What to do about a failure. */
    fix: string | null;
}

export interface SignInTarget {
    host: HostConfig;
    domain: string;
    https: boolean;
}

export function siteAddress(target: SignInTarget): { origin: string; hostHeader: string; local: string } {
    const port = target.https ? target.host.nginxHttpsPort : target.host.nginxHttpPort;
    const defaultPort = target.https ? 443 : 80;
    const hostHeader = port === defaultPort ? target.domain : `${target.domain}:${port}`;
    const scheme = target.https ? 'https' : 'http';
    return { origin: `${scheme}://${hostHeader}`, hostHeader, local: `${scheme}://127.0.0.1:${port}` };
}

/** Where a visitor opens the app: its HTTPS address, with nginx's port when that is not 443. */
export function appUrl(host: HostConfig, domain: string): string {
    return `${siteAddress({ host, domain, https: true }).origin}/`;
}

async function get(target: SignInTarget, path: string) {
    const address = siteAddress(target);
    // The outpost's answer names the next hop: it is asked only on the site's own address.
    return await checkHttp({ url: onOrigin(path, address.local), host: address.hostHeader, timeoutMs: 5000, skipVerification: true });
}

function pathOf(location: string, origin: string): string {
    try {
        const url = new URL(location, origin);
        return url.origin === new URL(origin).origin ? `${url.pathname}${url.search}` : url.href;
    } catch {
        return location;
    }
}

export async function checkSignIn(target: SignInTarget): Promise<SignInCheck> {
    const { origin } = siteAddress(target);
    const first = await get(target, '/');
    const firstLocation = first.location ? pathOf(first.location, origin) : '';
    const signInPage = signInPageOf(firstLocation);
    if (first.statusCode === null || first.statusCode < 300 || first.statusCode >= 400 || !signInPage) {
        const seen =
            first.statusCode === null
                ? (first.error ?? 'no answer')
                : `status ${first.statusCode}${firstLocation ? ` to ${firstLocation}` : ''}`;
        const outpostFault = first.statusCode === 500 || first.statusCode === 502 || first.statusCode === 400;
        return {
            ok: false,
            text: `an anonymous request to ${origin}/ was not sent to the sign-in (${seen})`,
            fix: outpostFault
                ? "nginx could not ask the outpost: check the identity provider's outpost URL (Admin, Identity provider) and that the outpost serves this app's provider"
                : 'the site does not check the visitor with the provider: deploy the app again, or restore the forward-auth block in its nginx site',
        };
    }

    const second = await get(target, firstLocation);
    const away = second.location ? pathOf(second.location, origin) : '';
    if (second.statusCode === null || second.statusCode < 300 || second.statusCode >= 400 || away.startsWith('/')) {
        const seen = second.statusCode === null ? (second.error ?? 'no answer') : `status ${second.statusCode}`;
        return {
            ok: false,
            text: `the outpost did not start a sign-in for ${origin} (${seen})`,
            fix: "the outpost does not know this app's host: check that the app's provider is on the outpost and that its external host is the app's URL with its port",
        };
    }

    return { ok: true, text: `an anonymous request to ${origin}/ is sent to the sign-in (${signInPage}, then the provider)`, fix: null };
}
