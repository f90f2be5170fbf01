import type { Server } from '@hapi/hapi';

import { readCache, type ReadCache, type VersionSnapshot } from '../../../../lib/read-cache.ts';
import { defineService } from '../../../../lib/services.ts';
import { settings } from '../../../../lib/settings.ts';
import { idpConnection } from '../../../idp/connection-service.ts';
import { deployUsers } from '../accounts/user-service.ts';
import { apps } from '../apps/app-service.ts';
import { runs, type RunSummary } from '../runs/run-service.ts';
import { hostToolVersions } from './host-tools.ts';
import { acmeIntegration, dnsIntegration, dockerEngineIntegration, nginxIntegration, registryIntegration } from './integrations.ts';
import { Service } from '../../../../lib/service.ts';

const RECENT_RUNS = 10;

export interface Dashboard {
    apps: { total: number; byState: Record<string, number> };
    users: { total: number; disabled: number };
    recentRuns: RunSummary[];
    runsInProgress: number;
}

/** The first page a signed-in person sees, and what the host offers the deploy manager. */
export class OverviewService extends Service {
    // The same for every signed-in person, asked for on every page of the web UI: kept until an app, user or run is written.
    readonly #dashboard: ReadCache<Dashboard>;

    constructor(server: Server) {
        super(server);
        this.#dashboard = readCache(server, ['dp_apps', 'dp_users', 'dp_runs']);
    }

    /** `asOf`: the request's snapshot of the write counters (its session look-up's). */
    async dashboard(asOf?: VersionSnapshot): Promise<Dashboard> {
        return await this.#dashboard.get('dashboard', async () => await this.#countAll(), asOf);
    }

    /** Counts and the recent runs' summaries, each from one query: no app or user is read whole. */
    async #countAll(): Promise<Dashboard> {
        const [byState, users, recentRuns, inProgress] = await Promise.all([
            apps(this.server).countByState(),
            deployUsers(this.server).counts(),
            runs(this.server).latest(RECENT_RUNS),
            runs(this.server).countInProgress(),
        ]);
        const total = Object.values(byState).reduce((sum, count) => sum + count, 0);
        return { apps: { total, byState }, users, recentRuns, runsInProgress: inProgress };
    }

    async system() {
        const { config } = this.server.app;
        const { host } = config;
        const [tools, docker, nginx, acme, registry, oidc] = await Promise.all([
            hostToolVersions(host),
            dockerEngineIntegration(),
            nginxIntegration(host, config.apps.nginxSitesDir),
            acmeIntegration(host),
            registryIntegration(host),
            settings(this.server).get<{ enabled?: boolean; issuer?: string }>('deploy.oidc'),
        ]);
        return {
            tools: { dockerEngine: { found: docker.reachable, version: docker.version }, ...tools },
            integrations: {
                docker,
                nginx,
                acme,
                registry,
                dns: dnsIntegration(host),
                identityProvider: await identityProviderIntegration(this.server),
                oidcSignIn: { configured: oidc?.enabled === true, issuer: oidc?.issuer ?? null },
            },
            conventions: {
                baseDomain: config.apps.baseDomain,
                appsDir: config.apps.appsDir,
                nginxSitesDir: config.apps.nginxSitesDir,
                certificatesDir: config.apps.certificatesDir,
                acmeWebroot: host.acmeWebroot,
                httpPort: host.nginxHttpPort,
                httpsPort: host.nginxHttpsPort,
                firstHostPort: config.apps.firstHostPort,
                publicUrl: config.publicUrl,
                dataDir: config.dataDir,
                services: config.services,
            },
        };
    }
}

async function identityProviderIntegration(server: Server) {
    const connection = idpConnection(server);
    const stored = await connection.stored();
    return { configured: Boolean(stored), kind: stored?.kind ?? null, url: stored?.url ?? null, health: await connection.health() };
}

export const overview = defineService<OverviewService>('overview', (owner) => new OverviewService(owner));
