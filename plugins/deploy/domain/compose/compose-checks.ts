import Dgram from 'node:dgram';
import Net from 'node:net';

import type Docker from 'dockerode';

import { withTimeout } from '../../../../lib/timeout.ts';
import { dockerClient, isActiveHealthcheck } from '../host/docker-client.ts';
import type { Finding } from '../findings/finding.ts';
import { describePort, describeVolume, publishedPorts } from './compose-entries.ts';
import { interpolate, type InterpolationProblem } from './compose-interpolation.ts';
import { formatPath, type PathSegment } from './compose-path.ts';
import { plainFromModel } from './compose-read.ts';
import type { ComposeSpec } from './compose-types.ts';

export interface CheckOptions {
    secrets: Record<string, string>;
    checkHostPorts: boolean;
}

const DOCKER_TIMEOUT_MS = 2_000;
const IMAGE_TIMEOUT_MS = 15_000;

/** What stops a deploy beyond the schema: variables without a value, references to nothing, busy ports, unknown images. */
export async function checkConfiguration(spec: ComposeSpec, options: CheckOptions): Promise<Finding[]> {
    const findings = [...variableFindings(plainFromModel(spec), options.secrets), ...referenceFindings(spec)];
    if (options.checkHostPorts) {
        findings.push(...(await hostPortFindings(spec, options.secrets)));
    }

    findings.push(...(await imageFindings(spec, options.secrets)));
    return findings;
}

function errorAt(segments: PathSegment[], message: string, fix: string, variable?: string): Finding {
    const inService = segments[0] === 'services' && typeof segments[1] === 'string';
    return {
        path: formatPath(segments),
        level: 'error',
        message,
        ...(inService ? { service: segments[1] as string, field: String(segments[2] ?? '') } : {}),
        fix,
        ...(variable ? { variable } : {}),
    };
}

function* strings(value: unknown, path: PathSegment[]): Generator<{ text: string; path: PathSegment[] }> {
    if (typeof value === 'string') {
        yield { text: value, path };
    } else if (Array.isArray(value)) {
        for (const [index, item] of value.entries()) {
            yield* strings(item, [...path, index]);
        }
    } else if (typeof value === 'object' && value !== null) {
        for (const [key, item] of Object.entries(value)) {
            yield* strings(item, [...path, key]);
        }
    }
}

function variableFindings(plain: Record<string, unknown>, secrets: Record<string, string>): Finding[] {
    const findings: Finding[] = [];
    for (const { text, path } of strings(plain, [])) {
        const problems: InterpolationProblem[] = [];
        interpolate(text, secrets, problems);
        findings.push(...problems.map((problem) => variableFinding(problem, path)));
    }

    return findings;
}

function variableFinding(problem: InterpolationProblem, path: PathSegment[]): Finding {
    switch (problem.kind) {
        case 'undefined':
            return errorAt(
                path,
                `\${${problem.name}} has no value: it is not in the secrets file and has no default`,
                `add ${problem.name} to the secrets file, or give a default: \${${problem.name}:-value}`,
                problem.name,
            );
        case 'required':
            return errorAt(
                path,
                `\${${problem.name}} is required${problem.message ? `: ${problem.message}` : ''}`,
                `add ${problem.name} to the secrets file`,
                problem.name,
            );
        case 'syntax':
            return errorAt(
                path,
                `invalid interpolation at character ${problem.at + 1}`,
                'write $$ for a literal $, and ${NAME} or ${NAME:-default} for a variable',
            );
    }
}

function referenceFindings(spec: ComposeSpec): Finding[] {
    const findings: Finding[] = [];
    const volumes = new Set(Object.keys(spec.volumes ?? {}));
    const networks = new Set([...Object.keys(spec.networks ?? {}), 'default']);
    for (const [name, service] of Object.entries(spec.services)) {
        const at = (...segments: PathSegment[]) => ['services', name, ...segments];
        const dependencies = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
        dependencies
            .filter((dependency) => !(dependency in spec.services))
            .forEach((dependency) =>
                findings.push(
                    errorAt(
                        at('depends_on', dependency),
                        `${name} depends on ${dependency}, which is not a service of this file`,
                        `add a service ${dependency}, or remove it from depends_on`,
                    ),
                ),
            );
        (service.volumes ?? []).forEach((volume, index) => {
            const mount = describeVolume(volume);
            if (mount.type === 'volume' && mount.source !== undefined && !volumes.has(mount.source)) {
                findings.push(
                    errorAt(
                        at('volumes', index),
                        `${name} mounts the volume ${mount.source}, which is not declared under volumes`,
                        `declare it: volumes: {${mount.source}: {}}`,
                    ),
                );
            }
        });
        const serviceNetworks = Array.isArray(service.networks) ? service.networks : Object.keys(service.networks ?? {});
        serviceNetworks
            .filter((network) => !networks.has(network))
            .forEach((network) =>
                findings.push(
                    errorAt(
                        at('networks', network),
                        `${name} joins the network ${network}, which is not declared under networks`,
                        `declare it: networks: {${network}: {}}`,
                    ),
                ),
            );
    }

    return findings;
}

async function hostPortFindings(spec: ComposeSpec, secrets: Record<string, string>): Promise<Finding[]> {
    const findings: Finding[] = [];
    for (const [name, service] of Object.entries(spec.services)) {
        for (const [index, port] of (service.ports ?? []).entries()) {
            const description = describePort(port, secrets);
            const udp = description.protocol === 'udp';
            for (const hostPort of publishedPorts(description)) {
                if (!(await isPortFree(hostPort, udp))) {
                    findings.push(
                        errorAt(
                            ['services', name, 'ports', index],
                            `host port ${hostPort}${udp ? '/udp' : ''} is already in use`,
                            'publish another host port, or stop what listens on it',
                        ),
                    );
                }
            }
        }
    }

    return findings;
}

/** Binding 127.0.0.1 fails when anything holds the port on loopback or on every interface. */
async function isPortFree(port: number, udp: boolean): Promise<boolean> {
    return await new Promise((resolve) => {
        if (udp) {
            const socket = Dgram.createSocket('udp4');
            socket.once('error', () => resolve(false));
            socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
            return;
        }

        const server = Net.createServer();
        server.once('error', () => resolve(false));
        server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
}

/**
 * The services' images (as the deploy substitutes them) that the engine has and that declare their own HEALTHCHECK;
 * an image the engine does not have yet, or an engine that does not answer, counts as declaring none.
 */
export async function imagesWithHealthcheck(spec: ComposeSpec, secrets: Record<string, string>): Promise<Set<string>> {
    const references = new Set(
        Object.values(spec.services).flatMap((service) => (service.image ? [interpolate(service.image, secrets)] : [])),
    );
    const docker = references.size > 0 ? await reachableDocker() : undefined;
    const found = new Set<string>();
    for (const reference of docker ? references : []) {
        if (docker && (await declaresHealthcheck(docker, reference))) {
            found.add(reference);
        }
    }

    return found;
}

async function declaresHealthcheck(docker: Docker, reference: string): Promise<boolean> {
    try {
        const inspect = await withTimeout(docker.getImage(reference).inspect(), IMAGE_TIMEOUT_MS, 'the image inspection');
        return isActiveHealthcheck(inspect.Config?.Healthcheck);
    } catch {
        // Not in the engine: nothing is known of its health check.
        return false;
    }
}

async function reachableDocker(): Promise<Docker | undefined> {
    const docker = dockerClient();
    try {
        await withTimeout(docker.ping(), DOCKER_TIMEOUT_MS, 'the Docker engine');
        return docker;
    } catch {
        return undefined;
    }
}

/** An image resolves when the engine has it, or its registry knows it; without an engine the check is skipped. */
async function imageFindings(spec: ComposeSpec, secrets: Record<string, string>): Promise<Finding[]> {
    const images = Object.entries(spec.services).filter(([, service]) => service.image !== undefined);
    const docker = images.length > 0 ? await reachableDocker() : undefined;
    if (!docker) {
        return [];
    }

    const findings: Finding[] = [];
    for (const [name, service] of images) {
        const reference = interpolate(service.image ?? '', secrets);
        if (!(await imageResolves(docker, reference))) {
            findings.push(
                errorAt(
                    ['services', name, 'image'],
                    `the image ${reference} does not resolve: neither the engine nor its registry has it`,
                    'check the name and the tag',
                ),
            );
        }
    }

    return findings;
}

async function imageResolves(docker: Docker, reference: string): Promise<boolean> {
    const image = docker.getImage(reference);
    try {
        await withTimeout(image.inspect(), IMAGE_TIMEOUT_MS, 'the image inspection');
        return true;
    } catch {
        try {
            await withTimeout(image.distribution(), IMAGE_TIMEOUT_MS, 'the registry');
            return true;
        } catch (error) {
            return !isUnknownImage(error);
        }
    }
}

/** Only the registry saying no counts: an engine that cannot reach its registry proves nothing. */
function isUnknownImage(error: unknown): boolean {
    const { statusCode, message } = error as { statusCode?: number; message?: string };
    return (
        statusCode === 401 ||
        statusCode === 403 ||
        statusCode === 404 ||
        /manifest unknown|not found|does not exist|denied/i.test(message ?? '')
    );
}
