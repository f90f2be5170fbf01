import { type ComponentChildren, Fragment } from 'preact';

import { useApi } from '../../api.ts';
import { Badge, type BadgeTone } from '../../components/Badge.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { type HealthLevel, type HealthTile, healthTiles, levelWords } from '../dashboard/health.ts';
import type { SystemReport } from './types.ts';

const TOOL_NAMES: Record<string, string> = {
    dockerEngine: 'Docker engine',
    docker: 'docker CLI',
    dockerCompose: 'docker-compose',
    dockerComposePlugin: 'docker compose (plugin)',
    nginx: 'nginx',
    git: 'git',
    openssl: 'OpenSSL',
};

const CONVENTION_NAMES: Record<string, string> = {
    baseDomain: 'Base domain',
    appsDir: 'Apps folder',
    nginxSitesDir: 'nginx sites folder',
    certificatesDir: 'Certificates folder',
    acmeWebroot: 'ACME webroot',
    httpPort: 'HTTP port',
    httpsPort: 'HTTPS port',
    firstHostPort: 'First host port',
    publicUrl: 'Public URL',
    dataDir: 'Data folder',
    services: 'Services',
};

const LEVEL_TONES: Record<HealthLevel, BadgeTone> = { ok: 'good', off: 'neutral', problem: 'bad' };

/** Tool versions found on the host, each integration's health at a glance, and the conventions apps are deployed with. */
export function SystemSection() {
    const { data, error, loading } = useApi<SystemReport>('/api/system');
    if (loading && !data) {
        return <Spinner label="Looking at the host…" />;
    }

    if (!data) {
        return <ErrorText error={error} />;
    }

    return (
        <>
            <Integrations report={data} />
            <Card title="Tools on the host">
                <ul class="tool-list">
                    {Object.entries(data.tools).map(([name, tool]) => (
                        <li key={name}>
                            <span class="tool-name">{TOOL_NAMES[name] ?? name}</span>{' '}
                            {tool.found ? <Badge tone="good">{tool.version ?? 'found'}</Badge> : <Badge tone="warning">not found</Badge>}
                        </li>
                    ))}
                </ul>
            </Card>
            <Card title="Conventions">
                <dl class="facts">
                    {Object.entries(data.conventions).map(([name, value]) => (
                        <Fragment key={name}>
                            <dt>{CONVENTION_NAMES[name] ?? name}</dt>
                            <dd>
                                <code>{Array.isArray(value) ? value.join(', ') : String(value ?? '—')}</code>
                            </dd>
                        </Fragment>
                    ))}
                </dl>
            </Card>
        </>
    );
}

/** Each integration's level and status in the dashboard's words (one wording for both pages), then its details. */
function Integrations(props: { report: SystemReport }) {
    const { docker, nginx, acme, registry, dns, identityProvider, oidcSignIn } = props.report.integrations;
    const tiles = new Map(healthTiles(props.report).map((tile) => [tile.id, tile]));
    const tile = (id: string) => tiles.get(id) ?? { id, name: id, level: 'off' as const, status: '', detail: '' };
    return (
        <Card title="Integrations">
            <ul class="integration-grid">
                <Integration name="Docker engine" tile={tile('docker')}>
                    {docker.reachable ? `version ${docker.version ?? '?'} (API ${docker.apiVersion ?? '?'})` : docker.error}
                </Integration>
                <Integration name="nginx" tile={tile('nginx')}>
                    <code>{nginx.binary}</code> with <code>{nginx.confPath ?? "nginx's default configuration"}</code>, sites in{' '}
                    <code>{nginx.sitesDir}</code>
                    {nginx.configTest.ok ? null : <pre class="integration-output">{nginx.configTest.output}</pre>}
                </Integration>
                <Integration name="Certificates (ACME)" tile={tile('acme')}>
                    {acme.configured ? <code>{acme.directoryUrl}</code> : 'apps keep self-signed stand-ins'}
                    {acme.error ? <span class="integration-error">{acme.error}</span> : null}
                </Integration>
                <Integration name="Image registry" tile={tile('registry')}>
                    {registry.configured ? (
                        <>
                            <code>{registry.url}</code>
                            {registry.username ? ` as ${registry.username}` : ''}, password {registry.passwordSet ? 'set' : 'not set'}
                        </>
                    ) : (
                        'pulls are anonymous'
                    )}
                    {registry.error ? <span class="integration-error">{registry.error}</span> : null}
                </Integration>
                <Integration name="DNS" tile={tile('dns')}>
                    {dns.configured
                        ? `${dns.provider ?? ''} at ${dns.server ?? '?'}, zone ${dns.zone ?? '?'}, key ${dns.tsigSecretSet ? 'set' : 'not set'}`
                        : 'records are not managed'}
                </Integration>
                <Integration name="Identity provider" tile={tile('idp')}>
                    {identityProvider.health.message}
                </Integration>
                <Integration name="OIDC sign-in" tile={tile('oidc')}>
                    {oidcSignIn.issuer ? <code>{oidcSignIn.issuer}</code> : 'password sign-in only'}
                </Integration>
            </ul>
        </Card>
    );
}

function Integration(props: { name: string; tile: HealthTile; children?: ComponentChildren }) {
    const tone = LEVEL_TONES[props.tile.level];
    return (
        <li class={`integration integration-${tone}`}>
            <h3 class="integration-name">
                <span class="integration-dot" aria-hidden="true" />
                {props.name}
            </h3>
            <p class="integration-state">
                <Badge tone={tone}>{levelWords(props.tile.level)}</Badge> {props.tile.status}
            </p>
            <div class="integration-detail">{props.children}</div>
        </li>
    );
}
