import type { NginxStatus, SystemInfo } from './types.ts';

export type HealthLevel = 'ok' | 'off' | 'problem';

export interface HealthTile {
    id: string;
    name: string;
    level: HealthLevel;
    /** What the level means here, in words: colour is never the only sign. */
    status: string;
    detail: string;
}

const LEVEL_WORDS: Record<HealthLevel, string> = { ok: 'Working', off: 'Not set up', problem: 'Problem' };

export function levelWords(level: HealthLevel): string {
    return LEVEL_WORDS[level];
}

function checked(configured: boolean, reachable: boolean | null | undefined): HealthLevel {
    if (!configured) {
        return 'off';
    }

    return reachable === false ? 'problem' : 'ok';
}

/**
 * The managed nginx works when its configuration passes the test, includes the folder of the apps' sites (a
 * system nginx often does not), and an nginx runs with it.
 */
function nginxTile(nginx: NginxStatus): HealthTile {
    const tile = { id: 'nginx', name: 'nginx' };
    if (!nginx.configTest.ok) {
        return { ...tile, level: 'problem', status: 'Configuration test fails', detail: nginx.configTest.output.slice(0, 300) };
    }

    const configuration = nginx.confPath ?? "nginx's default configuration";
    if (!nginx.includesSites) {
        return {
            ...tile,
            level: 'problem',
            status: "Does not include the apps' sites",
            detail: `${configuration} does not include ${nginx.sitesDir}`,
        };
    }

    if (!nginx.running) {
        return { ...tile, level: 'problem', status: 'Not running', detail: `no nginx runs with ${configuration}` };
    }

    return { ...tile, level: 'ok', status: "Running with the apps' sites", detail: configuration };
}

/** One tile per integration the deploy manager drives, from GET /api/system. */
export function healthTiles(system: Pick<SystemInfo, 'integrations'>): HealthTile[] {
    const { docker, nginx, acme, registry, dns, identityProvider, oidcSignIn } = system.integrations;
    const idpLevel: HealthLevel = !identityProvider.configured ? 'off' : identityProvider.health.status === 'ok' ? 'ok' : 'problem';
    return [
        {
            id: 'docker',
            name: 'Docker engine',
            level: docker.reachable ? 'ok' : 'problem',
            status: docker.reachable ? `Version ${docker.version ?? 'unknown'}` : 'Not reachable',
            detail: docker.error ?? '',
        },
        nginxTile(nginx),
        {
            id: 'acme',
            name: 'Certificates (ACME)',
            level: checked(acme.configured === true, acme.reachable),
            status: !acme.configured ? 'Self-signed stand-ins' : acme.reachable === false ? 'Directory not reachable' : 'Directory answers',
            detail: acme.error ?? acme.directoryUrl ?? '',
        },
        {
            id: 'registry',
            name: 'Image registry',
            level: checked(registry.configured === true, registry.reachable),
            status: !registry.configured ? 'Not configured' : registry.reachable === false ? 'Not reachable' : 'Answers',
            detail: registry.error ?? registry.url ?? '',
        },
        {
            id: 'dns',
            name: 'DNS records',
            level: dns.configured ? 'ok' : 'off',
            status: dns.configured ? `Managed (${dns.provider ?? 'provider'})` : 'Not managed',
            detail: dns.server ?? '',
        },
        {
            id: 'idp',
            name: 'Identity provider',
            level: idpLevel,
            status: identityProvider.configured
                ? identityProvider.health.status === 'ok'
                    ? 'Connected'
                    : identityProvider.health.status
                : 'Not connected',
            detail: identityProvider.health.message,
        },
        {
            id: 'oidc',
            name: 'OIDC sign-in',
            level: oidcSignIn.configured ? 'ok' : 'off',
            status: oidcSignIn.configured ? 'On' : 'Off',
            detail: oidcSignIn.issuer ?? '',
        },
    ];
}
