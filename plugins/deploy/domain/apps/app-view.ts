/**
 * One app's page (GET /api/apps/{name}): its draft with the secrets as the caller may see them, its identity and its
 * access. Kept per app and per what the caller may see (secrets opened or masked), until a table it is read from is
 * written; an app whose page asks outside the database on every view is read again each time.
 */
import type { Server } from '@hapi/hapi';

import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { appAccess } from '../access/access-service.ts';
import { describeIdentity } from '../access/identity.ts';
import { apps } from './app-service.ts';

type AppView = Awaited<ReturnType<typeof loadView>>;

/**
 * The app's row, its runs' last sign-in check (runs and their events), its objects at the provider, the settings (the
 * provider's connection) and the saved recipes (the method and its options).
 */
const appViews = defineService<ReadCache<AppView>>('appViews', (owner) =>
    readCache(owner, ['dp_apps', 'dp_runs', 'dp_run_events', 'dp_app_resources', 'instance_settings', 'dp_recipes']),
);

async function loadView(server: Server, name: string, revealSecrets: boolean) {
    const service = apps(server);
    const app = await service.require(name);
    const [shown, identity, access] = await Promise.all([
        service.toApi(app, revealSecrets),
        describeIdentity(server, app, revealSecrets),
        appAccess(server).describe(app),
    ]);
    // The values of these methods ask outside the database (methodSettingsOf): the SAML provider's certificate at the
    // identity provider, a deployed app's network gateway at the Docker engine.
    const live = identity.method === 'saml' || (identity.method === 'header' && app.state !== 'draft');
    return { app: { ...shown, identity, access }, live };
}

/**
 * `revealSecrets`: the caller may see the app's secrets (editors and admins); viewers' pages are kept apart and never
 * hold an opened value. `asOf`: the request's snapshot of the write counters (its session look-up's).
 */
export async function appView(server: Server, name: string, revealSecrets: boolean, asOf?: VersionSnapshot): Promise<AppView['app']> {
    apps(server).checkName(name);
    // A live page loaded by this very call is fresh already: only a kept one is read again.
    let loaded: AppView | undefined;
    const kept = await appViews(server).get(
        JSON.stringify([name, revealSecrets]),
        async () => (loaded = await loadView(server, name, revealSecrets)),
        asOf,
    );
    return kept.live ? (loaded ?? (await loadView(server, name, revealSecrets))).app : kept.app;
}
