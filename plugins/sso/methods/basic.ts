/**
 * HTTP Basic: nginx sends one shared account of the app as `Authorization: Basic` on every request that passed
 * forward auth. The credentials live only in the site file, which is root's alone; the API never shows the password.
 */
import type { MethodSettings, SignInMethod, SiteSpec } from '../method-types.ts';

export function basicCredentials(settings: MethodSettings): string {
    return `Basic ${Buffer.from(`${settings.sharedUser ?? ''}:${settings.sharedPassword ?? ''}`).toString('base64')}`;
}

function withCredentials(spec: SiteSpec, settings: MethodSettings): SiteSpec {
    const authorization = basicCredentials(settings);
    return {
        ...spec,
        locations: spec.locations.map((location) => ({ ...location, headers: { ...location.headers, Authorization: authorization } })),
    };
}

const basic: SignInMethod = {
    title: 'HTTP Basic with one shared account',
    singleSignOn: true,
    needs: ['sharedUser', 'sharedPassword'],
    site: withCredentials,
    values: (settings) => ({ sharedUser: settings.sharedUser ?? '' }),
    // The app is asked directly, as nginx asks it, with and without the account: it must accept the account.
    check: async ({ settings, site, siteUpstreams, checkHttp }) => {
        for (const upstream of siteUpstreams(site)) {
            const url = new URL(upstream);
            const answered = await checkHttp({ url, host: settings.domain, headers: { authorization: basicCredentials(settings) } });
            if (answered.statusCode === null || answered.statusCode === 401 || answered.statusCode === 403 || answered.statusCode >= 500) {
                return {
                    ok: false,
                    text: `the app at ${upstream} did not accept the shared account ${settings.sharedUser} (${answered.error ?? `status ${answered.statusCode}`})`,
                    fix: "check the shared user and password on the app's Sign-in tab, and that the app's Basic authentication knows them",
                };
            }
        }

        return { ok: true, text: `the app accepts the shared account ${settings.sharedUser} sent as HTTP Basic`, fix: null };
    },
};

export default basic;
