/**
 * The nginx site a run writes: the draft's, put behind the connected identity provider's forward auth (its kind's
 * contract) with what the app's sign-in method adds, when the app goes behind the provider. A run and the preview
 * of a deploy both take it from here, so that the preview shows the site the deploy would write.
 */
import type { Server } from '@hapi/hapi';

import { forField } from '../../../../lib/errors.ts';
import { loadMethod } from '../../../sso/methods.ts';
import type { AppRecord } from '../apps/app-service.ts';
import { apps } from '../apps/app-service.ts';
import type { AppRunData, AppRunKind } from '../engine/run-context.ts';
import { protectSite, type SiteSpec, sitePlaces } from '../nginx/site-model.ts';
import { appAccess } from './access-service.ts';
import { appliedMethod, methodSettingsOf } from './identity.ts';

/** The app's sign-in method with what it needs, the shared password opened: for the run only. */
export async function signInForRun(server: Server, app: AppRecord): Promise<AppRunData['signIn']> {
    const { method } = await appliedMethod(server, app);
    if (method === '' || !(await loadMethod(method))) {
        return undefined;
    }

    const sharedPassword = await apps(server).sharedPasswordOf(app.name);
    const autologinToken = method === 'autologin' ? await apps(server).autologinTokenOf(app.name) : undefined;
    const settings = await methodSettingsOf(server, app, {
        ...(sharedPassword ? { sharedPassword } : {}),
        ...(autologinToken ? { autologinToken } : {}),
        clientSecret: true,
    });
    return { method, settings };
}

/**
 * The identity provider for a run of `kind`, and the site with its forward-auth check (and what the app's sign-in
 * method adds to it) when the app goes behind it. The site may hold the shared account's credentials: never shown
 * unmasked (maskSiteCredentials).
 */
export async function accessForRun(
    server: Server,
    app: AppRecord,
    kind: AppRunKind,
): Promise<Pick<AppRunData, 'access' | 'signIn'> & { site: string }> {
    const access = await appAccess(server).forRun(app);
    const behind = kind !== 'nginx' || (await appAccess(server).isBehindProvider(app.name));
    if (!access || !behind) {
        return { site: app.draft.nginx };
    }

    const places = sitePlaces(server.app.config, { name: app.name, domain: app.domain });
    const signIn = await signInForRun(server, app);
    if ((await appliedMethod(server, app)).recipe?.ownDoor) {
        return { access: { ...access, ownDoor: true }, ...(signIn ? { signIn } : {}), site: app.draft.nginx };
    }

    const method = signIn ? await loadMethod(signIn.method) : undefined;
    const addMethod = (spec: SiteSpec) => (method?.site && signIn ? method.site(spec, signIn.settings) : spec);
    const site = forField('nginx', () => protectSite(app.draft.nginx, access.connection, places, addMethod));
    return { access: { ...access, openLocations: site.unprotected }, ...(signIn ? { signIn } : {}), site: site.text };
}
