import type { Server } from '@hapi/hapi';

import { toRfc3339 } from '../../../../lib/database.ts';
import { defineService } from '../../../../lib/services.ts';
import { settings } from '../accounts/settings-service.ts';
import { deployUsers } from '../accounts/user-service.ts';
import { apps } from '../apps/app-service.ts';
import { hostToolVersions } from './host-tools.ts';
import { acmeIntegration, dnsIntegration, dockerEngineIntegration, nginxIntegration, registryIntegration } from './integrations.ts';

const RECENT_RUNS = 10;

export interface RecentRun {
    id: number;
    app: string;
    kind: string;
    state: string;
    startedAt: string;
    endedAt: string | null;
}

function toRecentRun(row: Record<string, unknown>): RecentRun {
    return {
        id: Number(row.id),
        app: String(row.app_name),
        kind: String(row.kind),
        state: String(row.state),
        startedAt: toRfc3339(Number(row.started_at)),
        endedAt: row.ended_at === null ? null : toRfc3339(Number(row.ended_at)),
    };
}

/** The first page a signed-in person sees, and what the host offers the deploy manager. */
export class OverviewService {
    readonly #server: Server;

    constructor(server: Server) {
        this.#server = server;
    }

    async dashboard() {
        const [appList, users, recentRuns, inProgress] = await Promise.all([
            apps(this.#server).list(),
            deployUsers(this.#server).list(),
            this.#server.app.knex('dp_runs').orderBy('id', 'desc').limit(RECENT_RUNS),
            this.#server.app.knex('dp_runs').where({ state: 'running' }).count({ count: '*' }).first(),
        ]);
        const byState: Record<string, number> = {};
        for (const app of appList) {
            byState[app.state] = (byState[app.state] ?? 0) + 1;
        }

        return {
            apps: { total: appList.length, byState },
            users: { total: users.length, disabled: users.filter((user) => user.disabled).length },
            recentRuns: recentRuns.map(toRecentRun),
            runsInProgress: Number(inProgress?.count ?? 0),
        };
    }

    async system() {
        const { config } = this.#server.app;
        const { host } = config;
        const [tools, docker, nginx, acme, registry, oidc] = await Promise.all([
            hostToolVersions(host),
            dockerEngineIntegration(),
            nginxIntegration(host),
            acmeIntegration(host),
            registryIntegration(host),
            settings(this.#server).get<{ enabled?: boolean; issuer?: string }>('deploy.oidc'),
        ]);
        return {
            tools: { dockerEngine: { found: docker.reachable, version: docker.version }, ...tools },
            integrations: {
                docker,
                nginx,
                acme,
                registry,
                dns: dnsIntegration(host),
                identityProvider: { configured: false },
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

export const overview = defineService<OverviewService>('overview', (owner) => new OverviewService(owner));
