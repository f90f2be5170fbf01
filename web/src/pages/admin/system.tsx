import { type ComponentChildren, Fragment } from 'preact';

import { useApi } from '../../api.ts';
import { Badge, type BadgeTone } from '../../components/Badge.tsx';
import { Card } from '../../components/Card.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { healthTone } from './identity-provider.tsx';
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

interface Health {
    tone: BadgeTone;
    state: string;
}

const OFF: Health = { tone: 'neutral', state: 'not configured' };

function reachability(configured: boolean, reachable: boolean | null): Health {
    if (!configured) {
        return OFF;
    }

    return reachable ? { tone: 'good', state: 'reachable' } : { tone: 'bad', state: 'unreachable' };
}

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

function Integrations(props: { report: SystemReport }) {
    const { docker, nginx, acme, registry, dns, identityProvider, oidcSignIn } = props.report.integrations;
    return (
        <Card title="Integrations">
            <ul class="integration-grid">
                <Integration
                    name="Docker engine"
                    health={docker.reachable ? { tone: 'good', state: 'reachable' } : { tone: 'bad', state: 'unreachable' }}
                >
                    {docker.reachable ? `version ${docker.version ?? '?'} (API ${docker.apiVersion ?? '?'})` : docker.error}
                </Integration>
                <Integration
                    name="nginx"
                    health={
                        nginx.configTest.ok ? { tone: 'good', state: 'configuration ok' } : { tone: 'bad', state: 'configuration fails' }
                    }
                >
                    <code>{nginx.binary}</code>
                    {nginx.configTest.ok ? null : <pre class="integration-output">{nginx.configTest.output}</pre>}
                </Integration>
                <Integration name="Certificates (ACME)" health={reachability(acme.configured, acme.reachable)}>
                    {acme.configured ? <code>{acme.directoryUrl}</code> : 'apps keep self-signed stand-ins'}
                    {acme.error ? <span class="integration-error">{acme.error}</span> : null}
                </Integration>
                <Integration name="Image registry" health={reachability(registry.configured, registry.reachable)}>
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
                <Integration name="DNS" health={dns.configured ? { tone: 'good', state: 'configured' } : OFF}>
                    {dns.configured
                        ? `${dns.provider ?? ''} at ${dns.server ?? '?'}, zone ${dns.zone ?? '?'}, key ${dns.tsigSecretSet ? 'set' : 'not set'}`
                        : 'records are not managed'}
                </Integration>
                <Integration
                    name="Identity provider"
                    health={{ tone: healthTone(identityProvider.health.status), state: identityProvider.health.status }}
                >
                    {identityProvider.health.message}
                </Integration>
                <Integration
                    name="OIDC sign-in"
                    health={oidcSignIn.configured ? { tone: 'good', state: 'on' } : { tone: 'neutral', state: 'off' }}
                >
                    {oidcSignIn.issuer ? <code>{oidcSignIn.issuer}</code> : 'password sign-in only'}
                </Integration>
            </ul>
        </Card>
    );
}

function Integration(props: { name: string; health: Health; children?: ComponentChildren }) {
    return (
        <li class={`integration integration-${props.health.tone}`}>
            <h3 class="integration-name">
                <span class="integration-dot" aria-hidden="true" />
                {props.name}
            </h3>
            <Badge tone={props.health.tone}>{props.health.state}</Badge>
            <div class="integration-detail">{props.children}</div>
        </li>
    );
}
