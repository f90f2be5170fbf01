/**
 * Username from the proxy: nginx passes the provider's answer to the app as Remote-User, Remote-Email, Remote-Name
 * and X-idp-username, X-idp-email, X-idp-name. Anything a visitor sends under those names is replaced, and the app
 * must trust them only from its network's gateway, the address nginx's requests come from.
 */
import { forwardAuthContract } from '../../idp/forward-auth.ts';
import type { ForwardAuthSpec, SignInMethod, SiteSpec } from '../method-types.ts';

/** The names the app reads, each with the answer header of the site's identity-provider kind that carries it. */
function headerMap(forwardAuth: Pick<ForwardAuthSpec, 'kind'>): Record<string, string> {
    const { username, email, name } = forwardAuthContract(forwardAuth).identity;
    return {
        'Remote-User': username,
        'Remote-Email': email,
        'Remote-Name': name,
        'X-idp-username': username,
        'X-idp-email': email,
        'X-idp-name': name,
    };
}

/** The map behind the default kind (authentik): `Remote-User` from `X-authentik-username`, and so on. */
export const HEADER_MAP: Record<string, string> = headerMap({});

function withHeaders(spec: SiteSpec): SiteSpec {
    if (!spec.forwardAuth) {
        return spec;
    }

    const identityHeaders = { ...spec.forwardAuth.identityHeaders, ...headerMap(spec.forwardAuth) };
    return { ...spec, forwardAuth: { ...spec.forwardAuth, identityHeaders } };
}

const header: SignInMethod = {
    title: 'Username from the proxy',
    singleSignOn: true,
    needs: [],
    site: withHeaders,
    values: (settings) => ({
        headers: Object.keys(HEADER_MAP).join(', '),
        trustedAddress: settings.gateway
            ? `${settings.gateway} (the gateway of the app's network, where nginx's requests come from)`
            : "the gateway of the app's network, known once the app is deployed",
    }),
    check: async ({ site, readSite }) => {
        const forwardAuth = readSite(site).forwardAuth;
        const passed = forwardAuth?.identityHeaders ?? {};
        const missing = Object.entries(headerMap(forwardAuth ?? {})).filter(([name, answer]) => passed[name] !== answer);
        return missing.length === 0
            ? { ok: true, text: `the site passes ${Object.keys(HEADER_MAP).join(', ')} from the provider's answer`, fix: null }
            : {
                  ok: false,
                  text: `the site does not pass ${missing.map(([name]) => name).join(', ')} from the provider's answer`,
                  fix: "apply the sign-in method again on the app's Sign-in tab; a hand edit of the site may have removed them",
              };
    },
};

export default header;
