/**
 * Auto-login with one shared account: after the provider's sign-in, the browser asks `/__svc/autologin` on the app's
 * domain (behind forward auth like every other path); nginx hands it to Gatehouse's `GET /api/autologin/{name}` with
 * the app's token, which only the root-only site file holds; Gatehouse signs in to the app server side with the
 * shared account (an adapter of plugins/sso/autologin/adapters/) and gives the browser the app's session.
 */
import { APP_PATH_RULE, isAppPath, pathOnOrigin } from '../../../lib/app-urls.ts';
import { autoLoginAdapters } from '../autologin/adapters.ts';
import type { AutoLoginOutcome } from '../autologin/adapter-types.ts';
import { type LocationSpec, type MethodSettings, SERVICE_PATH_PREFIX, type SignInMethod, type SiteSpec } from '../method-types.ts';

export const AUTOLOGIN_PATH = `${SERVICE_PATH_PREFIX}autologin`;
export const AUTOLOGIN_TOKEN_HEADER = 'X-Gatehouse-Autologin-Token';
export const DEFAULT_ADAPTER = 'form';
const SIGN_IN_TIMEOUT_MS = 15_000;

function withAutologin(spec: SiteSpec, settings: MethodSettings): SiteSpec {
    const token = settings.autologin?.token;
    if (!token || !settings.autologin) {
        return spec;
    }

    const location: LocationSpec = {
        path: AUTOLOGIN_PATH,
        proxyPass: `${settings.autologin.gatehouseUrl}/api/autologin/${settings.app}`,
        headers: { [AUTOLOGIN_TOKEN_HEADER]: token },
        auth: true,
    };
    return { ...spec, locations: [...spec.locations.filter((candidate) => candidate.path !== AUTOLOGIN_PATH), location] };
}

/** Where the app itself answers in the site: the upstream of `/` (else the first location's), never the auto-login's own. */
export function appUpstream(site: SiteSpec): string | undefined {
    const locations = site.locations.filter((location) => location.path !== AUTOLOGIN_PATH);
    return (locations.find((location) => location.path === '/') ?? locations[0])?.proxyPass;
}

/** Signs in to the app at `upstream` with the shared account, through the app's adapter. */
export async function signInServerSide(
    settings: MethodSettings,
    upstream: string,
    visitorHeaders: Record<string, string> = {},
): Promise<AutoLoginOutcome> {
    const name = settings.login?.adapter ?? DEFAULT_ADAPTER;
    const adapter = await autoLoginAdapters(settings.autologin?.adapterDirs).load(name);
    if (!adapter) {
        return { ok: false, reason: `there is no auto-login adapter ${name}` };
    }

    const loginPath = settings.login?.path;
    if (loginPath && !isAppPath(loginPath)) {
        return { ok: false, reason: `refused: the login path ${JSON.stringify(loginPath)} ${APP_PATH_RULE}` };
    }

    const outcome = await adapter.signIn({
        upstream,
        origin: settings.origin,
        ...(loginPath ? { loginPath } : {}),
        username: settings.sharedUser ?? '',
        password: settings.sharedPassword ?? '',
        visitorHeaders,
        timeoutMs: SIGN_IN_TIMEOUT_MS,
    });
    // The landing is where the visitor is sent: a path that leads anywhere but the app's origin goes to its start.
    return outcome.ok ? { ...outcome, landing: pathOnOrigin(new URL(outcome.landing, settings.origin), settings.origin) ?? '/' } : outcome;
}

const autologin: SignInMethod = {
    title: 'Auto-login with one shared account',
    singleSignOn: true,
    lastResort: true,
    needs: ['sharedUser', 'sharedPassword'],
    site: withAutologin,
    values: (settings) => ({
        sharedUser: settings.sharedUser ?? '',
        adapter: settings.login?.adapter ?? DEFAULT_ADAPTER,
        loginPath: settings.login?.path ?? 'found by the adapter',
        autologinUrl: `${settings.origin}${AUTOLOGIN_PATH}`,
    }),
    check: async ({ settings, site, readSite }) => {
        const upstream = appUpstream(readSite(site));
        const fix = "check the shared user and password, and the path of the app's login page, on the app's Sign-in tab";
        if (!upstream) {
            return { ok: false, text: 'the site has no location that reaches the app', fix };
        }

        const outcome = await signInServerSide(settings, upstream);
        return outcome.ok
            ? { ok: true, text: `the auto-login signs in to the app as ${settings.sharedUser}`, fix: null }
            : { ok: false, text: `the auto-login did not sign in as ${settings.sharedUser}: ${outcome.reason}`, fix };
    },
};

export default autologin;
