import Fs from 'node:fs';

import type Docker from 'dockerode';

import { toRfc3339 } from '../../../../lib/database.ts';
import { defineService } from '../../../../lib/services.ts';
import { sendsToSignIn } from '../../../idp/forward-auth.ts';
import { apps } from '../apps/app-service.ts';
import { secretMask } from '../apps/secret-mask.ts';
import { type CertificateInfo, certificateInfo } from '../host/certificate-info.ts';
import { type AppContainer, appContainers, callDocker, DockerUnavailableError } from './app-containers.ts';
import { checkHttp, type HttpCheck, silentUpstream } from '../host/http-check.ts';
import { appPaths } from '../engine/run-context.ts';
import { loopbackUpstreams } from '../nginx/site-model.ts';
import { type LogLine, logLines } from '../host/docker-logs.ts';
import { Service } from '../../../../lib/service.ts';

export interface PublishedPort {
    hostIp: string;
    hostPort: number;
    containerPort: number;
    protocol: string;
}

export type ContainerHealth = 'healthy' | 'unhealthy' | 'starting' | null;

export interface ContainerStatus {
    service: string;
    name: string;
    id: string;
    state: string;
    /** Null when the image and the compose file define no health check. */
    health: ContainerHealth;
    restarts: number;
    exitCode: number | null;
    image: string;
    imageId: string;
    startedAt: string | null;
    ports: PublishedPort[];
}

export interface Probe extends HttpCheck {
    url: string;
    host: string;
    /**
     * The app serves: nginx answered below 500 and, when it sent the visitor to sign in (forward auth answers
     * without asking the app), the app's upstreams answered too.
     */
    ok: boolean;
}

export interface AppStatus {
    app: string;
    domain: string;
    state: string;
    containers: ContainerStatus[];
    probe: { http: Probe; https: Probe | null };
    certificate: CertificateInfo | null;
    /** Why a certificate file that exists could not be read. */
    certificateError: string | null;
}

export interface ContainerLogs {
    service: string;
    container: string;
    tty: boolean;
    lines: LogLine[];
    /** Why the engine gave no logs for this container (a logging driver that cannot be read, for one). */
    error: string | null;
}

export interface AppLogs {
    app: string;
    tail: number;
    services: ContainerLogs[];
}

const NEVER_STARTED = '0001-01-01T00:00:00Z';
const HEALTH_STATES = new Set(['healthy', 'unhealthy', 'starting']);

function publishedPorts(inspect: Docker.ContainerInspectInfo): PublishedPort[] {
    const seen = new Set<string>();
    const ports: PublishedPort[] = [];
    for (const [portAndProtocol, bindings] of Object.entries(inspect.NetworkSettings.Ports ?? {})) {
        const [containerPort = '', protocol = 'tcp'] = portAndProtocol.split('/');
        for (const binding of bindings ?? []) {
            const key = `${binding.HostIp}:${binding.HostPort}/${portAndProtocol}`;
            if (!seen.has(key)) {
                seen.add(key);
                ports.push({ hostIp: binding.HostIp, hostPort: Number(binding.HostPort), containerPort: Number(containerPort), protocol });
            }
        }
    }

    return ports;
}

function containerStatus({ service: serviceName, name, inspect }: AppContainer): ContainerStatus {
    const { State: state } = inspect;
    const health = state.Health?.Status ?? '';
    return {
        service: serviceName,
        name,
        id: inspect.Id.slice(0, 12),
        state: state.Status,
        health: HEALTH_STATES.has(health) ? (health as ContainerHealth) : null,
        restarts: inspect.RestartCount,
        exitCode: state.Running ? null : state.ExitCode,
        image: inspect.Config.Image,
        imageId: inspect.Image,
        startedAt: !state.StartedAt || state.StartedAt === NEVER_STARTED ? null : toRfc3339(Date.parse(state.StartedAt)),
        ports: publishedPorts(inspect),
    };
}

/** What a person asks first about an app: are its containers up and healthy, does nginx answer, is the certificate good. */
export class StatusService extends Service {
    get #config() {
        return this.server.app.config;
    }

    async status(name: string): Promise<AppStatus> {
        const app = await apps(this.server).require(name);
        const [containers, certificate] = await Promise.all([appContainers(app.name), this.#certificate(app.domain)]);
        const upstreams = loopbackUpstreams(this.#deployedSite(app.name));
        const [http, https] = await Promise.all([
            this.#probe('http', this.#config.host.nginxHttpPort, app.domain, upstreams),
            certificate.info ? this.#probe('https', this.#config.host.nginxHttpsPort, app.domain, upstreams) : null,
        ]);
        return {
            app: app.name,
            domain: app.domain,
            state: app.state,
            containers: containers.map(containerStatus),
            probe: { http, https },
            certificate: certificate.info,
            certificateError: certificate.error,
        };
    }

    async #certificate(domain: string): Promise<{ info: CertificateInfo | null; error: string | null }> {
        try {
            return { info: certificateInfo(this.#config.apps.certificatesDir, domain), error: null };
        } catch (error) {
            return { info: null, error: (error as Error).message };
        }
    }

    /**
     * Through the managed nginx on loopback, as a visitor would arrive. The HTTPS probe does not verify the chain:
     * the certificate is reported on its own, and an ACME test CA's issuing root is not one we can trust here.
     */
    async #probe(scheme: 'http' | 'https', port: number, domain: string, upstreams: string[]): Promise<Probe> {
        const url = new URL(`${scheme}://127.0.0.1:${port}/`);
        // With its port when not the default, as a browser sends it (an identity provider's outpost matches it).
        const hostHeader = port === (scheme === 'https' ? 443 : 80) ? domain : `${domain}:${port}`;
        const check = await checkHttp({ url, host: hostHeader, skipVerification: true });
        const probe = { url: url.toString(), host: domain, ...check, ok: check.statusCode !== null && check.statusCode < 500 };
        if (!probe.ok || !sendsToSignIn(check.location)) {
            return probe;
        }

        const silent = await silentUpstream(upstreams, hostHeader);
        return silent ? { ...probe, ok: false, error: `nginx sends visitors to sign in, but ${silent}` } : probe;
    }

    /** The site nginx has for the app now (none before its first deploy). */
    #deployedSite(name: string): string | undefined {
        const { siteFile } = appPaths(this.#config, name);
        return Fs.existsSync(siteFile) ? Fs.readFileSync(siteFile, 'utf8') : undefined;
    }

    /**
     * The last `tail` lines of each container of the app, stdout and stderr apart, with the engine's timestamps; the
     * app's secret values masked unless the caller may see them.
     */
    async logs(name: string, tail: number, revealSecrets: boolean): Promise<AppLogs> {
        const app = await apps(this.server).require(name);
        const containers = await appContainers(app.name);
        const mask = revealSecrets ? (text: string) => text : secretMask(await apps(this.server).knownSecretValues(app.name));
        const services = await Promise.all(containers.map((container) => this.#containerLogs(container, tail, mask)));
        return { app: app.name, tail, services };
    }

    async #containerLogs(
        { service: serviceName, name, inspect, handle }: AppContainer,
        tail: number,
        mask: (text: string) => string,
    ): Promise<ContainerLogs> {
        const tty = inspect.Config.Tty;
        const answer = { service: serviceName, container: name, tty };
        try {
            const buffer = await callDocker(() => handle.logs({ stdout: true, stderr: true, timestamps: true, tail, follow: false }));
            const lines = logLines(buffer, tty)
                .slice(-tail)
                .map((line) => ({ ...line, text: mask(line.text) }));
            return { ...answer, lines, error: null };
        } catch (error) {
            if (error instanceof DockerUnavailableError) {
                throw error;
            }

            return { ...answer, lines: [], error: (error as Error).message };
        }
    }
}

export const appStatus = defineService<StatusService>('appStatus', (owner) => new StatusService(owner));
