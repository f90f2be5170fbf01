/**
 * OpenID Connect: a confidential OAuth2/OpenID client `dp-<app>-sso` at the provider, its application bound to the
 * app's groups. The app is given the client through the `{{OIDC_*}}` placeholders of its compose file; the client's
 * id and secret live in the app's secrets file, so the secret reaches the containers only as `${OIDC_CLIENT_SECRET}`.
 */
import Crypto from 'node:crypto';

import { noProviderChanges, type OidcClient, type OidcClientChanges } from '../../idp/idp-types.ts';
import { providerWork } from '../provider-work.ts';
import { CLIENT_ID_VARIABLE, CLIENT_SECRET_VARIABLE, type MethodCheck, type MethodSettings, type SignInMethod } from '../method-types.ts';

const DISCOVERY_TIMEOUT_MS = 10_000;

/** `dp-<app>-sso`: the OpenID provider's name and its application's slug. */
export function oidcObjectName(app: string): string {
    return `dp-${app}-sso`;
}

/** Any path of the app's origin, and nothing else: the host is escaped and must be followed by a slash. */
export function redirectPattern(origin: string): string {
    return `${origin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/.*`;
}

function clientOf(settings: MethodSettings, access: Parameters<NonNullable<SignInMethod['atProvider']>>[0]['access']): OidcClient {
    const oidc = settings.oidc;
    if (!oidc?.clientSecret) {
        throw new Error(`the OpenID client of ${settings.app} has no id and secret in the app's secrets`);
    }

    return {
        objectName: oidcObjectName(settings.app),
        title: `${access.title} (OpenID Connect)`,
        launchUrl: `${settings.origin}/`,
        clientId: oidc.clientId,
        clientSecret: oidc.clientSecret,
        redirectPattern: redirectPattern(settings.origin),
        authorizationFlow: access.authorizationFlow,
        invalidationFlow: access.invalidationFlow,
        signingKey: access.signingKey,
        groups: access.groups,
        ...(settings.adminUser ? { adminClaimFor: settings.adminUser } : {}),
    };
}

/** The issuer's discovery document must be published and name the issuer. */
async function checkDiscovery(settings: MethodSettings): Promise<MethodCheck> {
    const endpoints = settings.oidc?.endpoints;
    const fix = 'check that the identity provider answers at its URL and that the OpenID provider dp-<app>-sso has its application';
    if (!endpoints) {
        return { ok: false, text: 'no identity provider is connected, so there is no issuer', fix: 'connect one at /api/admin/idp' };
    }

    try {
        const response = await fetch(endpoints.configUrl, { signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS), redirect: 'manual' });
        const document = response.ok ? ((await response.json()) as { issuer?: unknown }) : undefined;
        if (!document) {
            return { ok: false, text: `the discovery document ${endpoints.configUrl} answered ${response.status}`, fix };
        }

        return document.issuer === endpoints.issuer
            ? { ok: true, text: `the issuer ${endpoints.issuer} publishes its discovery document`, fix: null }
            : { ok: false, text: `the discovery document names the issuer ${String(document.issuer)}, not ${endpoints.issuer}`, fix };
    } catch (error) {
        return { ok: false, text: `the discovery document ${endpoints.configUrl} could not be read (${(error as Error).message})`, fix };
    }
}

const oidc: SignInMethod = {
    title: 'OpenID Connect',
    singleSignOn: true,
    needs: [],
    secrets: (existing) => ({
        [CLIENT_ID_VARIABLE]: existing[CLIENT_ID_VARIABLE] || Crypto.randomBytes(20).toString('hex'),
        [CLIENT_SECRET_VARIABLE]: existing[CLIENT_SECRET_VARIABLE] || Crypto.randomBytes(32).toString('hex'),
    }),
    providerObjects: { name: oidcObjectName, detail: 'OpenID Connect client and its application' },
    atProvider: ({ provider, settings, access, log }) => {
        const client = clientOf(settings, access);
        const apply = async (changes: OidcClientChanges, recorded?: () => Promise<void>) => {
            await provider.ensureOidcClient(client, changes, recorded);
            const claim = client.adminClaimFor ? `, svc_groups = [admin] for ${client.adminClaimFor} and [user] for everyone else` : '';
            log(
                `Sign-in: OpenID provider ${client.objectName} ${changes.providerCreated ? 'made' : 'updated'} ` +
                    `(redirect URIs ${client.redirectPattern}, scopes openid, email, profile${claim}), application ${client.objectName}`,
            );
        };
        const changes = noProviderChanges();
        const undo = (done: OidcClientChanges) => provider.undoOidcClient(client, done);
        return providerWork(client.objectName, changes, apply, undo, { kind: 'oidc', client, changes });
    },
    values: (settings) => {
        const oidc = settings.oidc;
        if (!oidc) {
            return {};
        }

        return {
            issuer: oidc.endpoints.issuer,
            discoveryUrl: oidc.endpoints.configUrl,
            logoutUrl: oidc.endpoints.logoutUrl,
            clientId: oidc.clientId,
            ...(oidc.clientSecret ? { clientSecret: oidc.clientSecret } : {}),
            redirectUri: `any path of ${settings.origin}/ (regular expression ${redirectPattern(settings.origin)})`,
        };
    },
    check: async ({ settings }) => await checkDiscovery(settings),
};

export default oidc;
