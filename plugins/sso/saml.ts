/**
 * SAML 2.0: a SAML provider `dp-<app>-saml` at the identity provider (signed assertions and responses, the username
 * as NameID, answers posted to the app's ACS), its application bound to the app's groups. The identity provider's
 * answer reaches the ACS by a cross-site POST, which carries no forward-auth cookie, so the ACS path is served
 * without the forward-auth check; the app checks the assertion's signature itself.
 */
import { readSite } from '../deploy/domain/nginx/site-model.ts';
import type { LocationSpec, SiteSpec } from '../deploy/domain/nginx/site-types.ts';
import type { SamlApp } from '../idp/idp-types.ts';
import { providerWork } from './provider-work.ts';
import type { MethodCheck, MethodProviderContext, MethodSettings, SignInMethod } from './method-types.ts';

const METADATA_TIMEOUT_MS = 10_000;

/** `dp-<app>-saml`: the SAML provider's name and its application's slug. */
export function samlObjectName(app: string): string {
    return `dp-${app}-saml`;
}

/** The ACS location: the app's own upstream, open to anyone (the assertion is the credential). */
function withOpenAcs(spec: SiteSpec, settings: MethodSettings): SiteSpec {
    const acs = settings.samlAcs;
    const upstream = (spec.locations.find((location) => location.path === '/') ?? spec.locations[0])?.proxyPass;
    if (!acs || !upstream) {
        return spec;
    }

    const location: LocationSpec = { path: acs, proxyPass: upstream, auth: false };
    return { ...spec, locations: [...spec.locations.filter((candidate) => candidate.path !== acs), location] };
}

function samlAppOf(settings: MethodSettings, access: MethodProviderContext['access']): SamlApp {
    return {
        objectName: samlObjectName(settings.app),
        title: `${access.title} (SAML)`,
        launchUrl: `${settings.origin}/`,
        acsUrl: `${settings.origin}${settings.samlAcs ?? ''}`,
        audience: settings.samlAudience ?? '',
        authorizationFlow: access.authorizationFlow,
        invalidationFlow: access.invalidationFlow,
        signingKey: access.signingKey,
        groups: access.groups,
    };
}

/** The provider exists and its metadata downloads, naming its entity ID. */
async function checkMetadata(settings: MethodSettings, site: string): Promise<MethodCheck> {
    const endpoints = settings.saml?.endpoints;
    const fix = 'check that the identity provider answers at its URL and that the SAML provider dp-<app>-saml has its application';
    if (!endpoints) {
        return { ok: false, text: 'no identity provider is connected, so there is no SAML provider', fix: 'connect one at /api/admin/idp' };
    }

    const acs = readSite(site).spec.locations.find((location) => location.path === settings.samlAcs);
    if (!acs || acs.auth) {
        return { ok: false, text: `the site does not serve ${settings.samlAcs} without forward auth`, fix: 'apply the method again' };
    }

    try {
        // authentik answers the metadata URL with a redirect to the download.
        const response = await fetch(endpoints.metadataUrl, { signal: AbortSignal.timeout(METADATA_TIMEOUT_MS) });
        const metadata = response.ok ? await response.text() : '';
        if (!metadata.includes(`entityID="${endpoints.entityId}"`)) {
            return { ok: false, text: `the metadata ${endpoints.metadataUrl} answered ${response.status} without the entity ID`, fix };
        }

        return { ok: true, text: `the SAML provider publishes its metadata for ${endpoints.entityId}`, fix: null };
    } catch (error) {
        return { ok: false, text: `the metadata ${endpoints.metadataUrl} could not be read (${(error as Error).message})`, fix };
    }
}

const saml: SignInMethod = {
    title: 'SAML 2.0',
    singleSignOn: true,
    needs: ['samlAcs'],
    site: withOpenAcs,
    atProvider: async ({ provider, settings, access, log }) => {
        const app = samlAppOf(settings, access);
        const changes = await provider.ensureSamlProvider(app);
        log(
            `Sign-in: SAML provider ${app.objectName} ${changes.providerCreated ? 'made' : 'updated'} (answers posted to ${app.acsUrl}, ` +
                `signed, username as NameID), application ${app.objectName}; ${settings.samlAcs} is served without forward auth`,
        );
        return providerWork(app.objectName, changes.providerCreated, () => provider.undoSamlProvider(app, changes));
    },
    values: (settings) => {
        const endpoints = settings.saml?.endpoints;
        if (!endpoints) {
            return {};
        }

        return {
            entityId: endpoints.entityId,
            ssoUrl: endpoints.ssoRedirectUrl,
            ssoPostUrl: endpoints.ssoPostUrl,
            sloUrl: endpoints.sloRedirectUrl,
            metadataUrl: endpoints.metadataUrl,
            acsUrl: `${settings.origin}${settings.samlAcs ?? ''}`,
            ...(settings.saml?.certificate ? { certificate: settings.saml.certificate } : {}),
        };
    },
    check: async ({ settings, site }) => await checkMetadata(settings, site),
};

export default saml;
