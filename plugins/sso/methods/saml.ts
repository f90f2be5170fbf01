/**
 * SAML 2.0: a SAML provider `dp-<app>-saml` at the identity provider (signed assertions and responses, the username
 * as NameID, answers posted to the app's ACS), its application bound to the app's groups. The identity provider's
 * answer reaches the ACS by a cross-site POST, which carries no forward-auth cookie, so the ACS path alone (an exact
 * match) is served without the forward-auth check; the app checks the assertion's signature itself.
 */
import { APP_PATH_RULE, maybeOnOrigin, onOrigin } from '../../../lib/app-urls.ts';
import { ValidationError } from '../../../lib/errors.ts';
import { noProviderChanges, type SamlApp, type SamlChanges } from '../../idp/idp-types.ts';
import { providerWork } from '../provider-work.ts';
import {
    checkAcsPath,
    type LocationSpec,
    type MethodCheck,
    type MethodCheckContext,
    type MethodProviderContext,
    type MethodSettings,
    type SignInMethod,
    type SiteSpec,
} from '../method-types.ts';

const METADATA_TIMEOUT_MS = 10_000;

/** `dp-<app>-saml`: the SAML provider's name and its application's slug. */
export function samlObjectName(app: string): string {
    return `dp-${app}-saml`;
}

/**
 * The ACS must open that one path alone: never `/`, nor a path where the site mounts another part of the app (`/api`
 * beside a location `/api/`). Checked again here, where the site is made, whatever let the value in.
 */
function assertAcsAlone(acs: string, others: LocationSpec[]): void {
    const problem = checkAcsPath(acs);
    if (problem) {
        throw new ValidationError(`samlAcs: ${problem}`);
    }

    const opened = others.find((location) => location.path.startsWith(acs));
    if (opened) {
        throw new ValidationError(`samlAcs: ${acs} would open the site's location ${opened.path} without forward auth`);
    }
}

/**
 * The ACS location: that path alone (an exact match), open to anyone (the assertion is the credential), passed to
 * the app's own upstream as that path, so that the app gets the URI nginx matched and not a spelling of it.
 */
function withOpenAcs(spec: SiteSpec, settings: MethodSettings): SiteSpec {
    const acs = settings.samlAcs;
    const upstream = (spec.locations.find((location) => location.path === '/') ?? spec.locations[0])?.proxyPass;
    if (!acs || !upstream) {
        return spec;
    }

    const others = spec.locations.filter((candidate) => !(candidate.exact && candidate.path === acs));
    assertAcsAlone(acs, others);
    const location: LocationSpec = { path: acs, exact: true, proxyPass: `${upstream.replace(/\/+$/, '')}${acs}` };
    return { ...spec, locations: [...others, location] };
}

/** Where the provider posts its answers: the ACS path on the app's origin; an OffOriginError when it leads elsewhere. */
function acsUrlOf(settings: MethodSettings): string {
    return settings.samlAcs ? onOrigin(settings.samlAcs, settings.origin).href : settings.origin;
}

function samlAppOf(settings: MethodSettings, access: MethodProviderContext['access']): SamlApp {
    return {
        objectName: samlObjectName(settings.app),
        title: `${access.title} (SAML)`,
        launchUrl: `${settings.origin}/`,
        acsUrl: acsUrlOf(settings),
        audience: settings.samlAudience ?? '',
        authorizationFlow: access.authorizationFlow,
        invalidationFlow: access.invalidationFlow,
        signingKey: access.signingKey,
        groups: access.groups,
    };
}

/** The provider exists and its metadata downloads, naming its entity ID. */
async function checkMetadata({ settings, site, readSite }: MethodCheckContext): Promise<MethodCheck> {
    const endpoints = settings.saml?.endpoints;
    const fix = 'check that the identity provider answers at its URL and that the SAML provider dp-<app>-saml has its application';
    if (!endpoints) {
        return { ok: false, text: 'no identity provider is connected, so there is no SAML provider', fix: 'connect one at /api/admin/idp' };
    }

    const acs = readSite(site).locations.find((location) => location.path === settings.samlAcs && location.exact);
    if (!acs || acs.auth) {
        return { ok: false, text: `the site does not serve ${settings.samlAcs} alone without forward auth`, fix: 'apply the method again' };
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
    providerObjects: { name: samlObjectName, detail: 'SAML provider and its application' },
    atProvider: ({ provider, settings, access, log }) => {
        const app = samlAppOf(settings, access);
        const apply = async (changes: SamlChanges, recorded?: () => Promise<void>) => {
            await provider.ensureSamlProvider(app, changes, recorded);
            log(
                `Sign-in: SAML provider ${app.objectName} ${changes.providerCreated ? 'made' : 'updated'} (answers posted to ${app.acsUrl}, ` +
                    `signed, username as NameID), application ${app.objectName}; ${settings.samlAcs} is served without forward auth`,
            );
        };
        const changes = noProviderChanges();
        const undo = (done: SamlChanges) => provider.undoSamlProvider(app, done);
        return providerWork(app.objectName, changes, apply, undo, { kind: 'saml', app, changes });
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
            acsUrl: maybeOnOrigin(settings.samlAcs ?? '/', settings.origin) ? acsUrlOf(settings) : `refused: samlAcs ${APP_PATH_RULE}`,
            ...(settings.saml?.certificate ? { certificate: settings.saml.certificate } : {}),
        };
    },
    check: checkMetadata,
};

export default saml;
