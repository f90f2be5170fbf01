/**
 * Reading what a registry answers: an index (OCI) or manifest list (Docker) names one manifest per platform; an
 * image manifest names the config blob and the layers; the config carries the image's defaults
 * (opencontainers/image-spec config.md, with Docker's Healthcheck).
 */
import { ValidationError } from '../../../../lib/errors.ts';
import { DIGEST } from './image-reference.ts';
import { type FetchedManifest, MANIFEST_TYPES } from './registry-client.ts';
import { UpstreamFailure } from './upstream.ts';

export interface Platform {
    os: string;
    architecture: string;
    variant: string | null;
}

export interface PlatformEntry extends Platform {
    digest: string;
    mediaType: string;
    size: number | null;
}

export interface ImageManifestParts {
    configDigest: string;
    configMediaType: string;
    configSize: number;
    /** Compressed sizes: what a pull downloads. */
    layerSizes: number[];
    annotations: Record<string, string>;
}

export interface ExposedPort {
    port: number;
    protocol: string;
}

export interface Healthcheck {
    /** `none` turns off an inherited check; `inherit` keeps the base image's. */
    type: 'none' | 'inherit' | 'cmd' | 'cmd-shell';
    test: string[];
    intervalSeconds: number | null;
    timeoutSeconds: number | null;
    startPeriodSeconds: number | null;
    startIntervalSeconds: number | null;
    retries: number | null;
}

export interface ImageConfigSummary {
    platform: Platform;
    created: string | null;
    env: Record<string, string>;
    exposedPorts: ExposedPort[];
    volumes: string[];
    labels: Record<string, string>;
    /** Empty: root. */
    user: string;
    healthcheck: Healthcheck | null;
    entrypoint: string[] | null;
    cmd: string[] | null;
    workingDir: string | null;
    stopSignal: string | null;
}

export const DEFAULT_PLATFORM: Platform = { os: 'linux', architecture: 'amd64', variant: null };

const PLATFORM_TEXT = /^([a-z0-9]+)\/([a-z0-9_]+)(?:\/([a-z0-9]+))?$/;

/** `linux/amd64`, `linux/arm64/v8`, `linux/arm/v7`. */
export function parsePlatform(text: string): Platform {
    const match = PLATFORM_TEXT.exec(text.trim());
    if (!match?.[1] || !match[2]) {
        throw new ValidationError('a platform is os/architecture[/variant], such as linux/amd64 or linux/arm/v7');
    }

    return { os: match[1], architecture: match[2], variant: match[3] ?? null };
}

export function platformText(platform: Platform): string {
    return [platform.os, platform.architecture, platform.variant].filter((part) => part !== null && part !== '').join('/');
}

export function isIndexType(mediaType: string): boolean {
    return mediaType === MANIFEST_TYPES.ociIndex || mediaType === MANIFEST_TYPES.dockerList;
}

export function isIndex(manifest: FetchedManifest): boolean {
    return isIndexType(manifest.mediaType);
}

export function isImageManifest(manifest: FetchedManifest): boolean {
    return manifest.mediaType === MANIFEST_TYPES.ociManifest || manifest.mediaType === MANIFEST_TYPES.dockerManifest;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

function stringMap(value: unknown): Record<string, string> {
    if (!isRecord(value)) {
        return {};
    }

    return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function stringList(value: unknown): string[] | null {
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : null;
}

export function annotationsOf(manifest: FetchedManifest): Record<string, string> {
    return stringMap(manifest.document.annotations);
}

/** The platforms an index offers, without BuildKit's attestations (platform unknown/unknown). */
export function platformEntries(index: FetchedManifest): PlatformEntry[] {
    const manifests = index.document.manifests;
    if (!Array.isArray(manifests)) {
        throw new UpstreamFailure(`the index ${index.digest} has no list of manifests`);
    }

    const entries: PlatformEntry[] = [];
    for (const item of manifests as unknown[]) {
        if (!isRecord(item) || typeof item.digest !== 'string' || !DIGEST.test(item.digest) || !isRecord(item.platform)) {
            continue;
        }

        const os = text(item.platform.os);
        const architecture = text(item.platform.architecture);
        if (!os || !architecture || os === 'unknown' || architecture === 'unknown') {
            continue;
        }

        const size = typeof item.size === 'number' ? item.size : null;
        const mediaType = text(item.mediaType) ?? '';
        entries.push({ os, architecture, variant: text(item.platform.variant), digest: item.digest, mediaType, size });
    }

    return entries;
}

/** arm64 without a variant is v8, as the Docker engine reads it. */
function variantOf(platform: Platform): string | null {
    return platform.variant ?? (platform.architecture === 'arm64' ? 'v8' : null);
}

/** The entry for the platform: an exact variant match first; with no variant asked, the plainest entry. */
export function choosePlatform(entries: PlatformEntry[], wanted: Platform): PlatformEntry | undefined {
    const sameArchitecture = entries.filter((entry) => entry.os === wanted.os && entry.architecture === wanted.architecture);
    const wantedVariant = variantOf(wanted);
    if (wanted.variant !== null || wantedVariant !== null) {
        const exact = sameArchitecture.find((entry) => variantOf(entry) === wantedVariant);
        if (exact || wanted.variant !== null) {
            return exact;
        }
    }

    return sameArchitecture.find((entry) => entry.variant === null) ?? sameArchitecture[0];
}

export function imageManifestParts(manifest: FetchedManifest): ImageManifestParts {
    const config = manifest.document.config;
    if (!isRecord(config) || typeof config.digest !== 'string' || !DIGEST.test(config.digest)) {
        throw new UpstreamFailure(`the manifest ${manifest.digest} names no sha256 config blob`);
    }

    const layers = Array.isArray(manifest.document.layers) ? (manifest.document.layers as unknown[]) : [];
    const layerSizes = layers.map((layer) => (isRecord(layer) && typeof layer.size === 'number' ? layer.size : 0));
    return {
        configDigest: config.digest,
        configMediaType: text(config.mediaType) ?? '',
        configSize: typeof config.size === 'number' ? config.size : 0,
        layerSizes,
        annotations: annotationsOf(manifest),
    };
}

function exposedPorts(value: unknown): ExposedPort[] {
    const ports: ExposedPort[] = [];
    for (const key of Object.keys(isRecord(value) ? value : {})) {
        const match = /^(\d{1,5})(?:\/(tcp|udp|sctp))?$/i.exec(key);
        const port = Number(match?.[1]);
        if (match && port >= 1 && port <= 65535) {
            ports.push({ port, protocol: (match[2] ?? 'tcp').toLowerCase() });
        }
    }

    return ports.sort((a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol));
}

function environment(value: unknown): Record<string, string> {
    const env: Record<string, string> = {};
    for (const item of stringList(value) ?? []) {
        const equals = item.indexOf('=');
        env[equals < 0 ? item : item.slice(0, equals)] = equals < 0 ? '' : item.slice(equals + 1);
    }

    return env;
}

/** Docker keeps durations in nanoseconds; 0 means the default. */
const seconds = (value: unknown): number | null => (typeof value === 'number' && value > 0 ? value / 1e9 : null);

function healthcheck(value: unknown): Healthcheck | null {
    if (!isRecord(value)) {
        return null;
    }

    const test = stringList(value.Test) ?? [];
    const kinds: Record<string, Healthcheck['type']> = { NONE: 'none', CMD: 'cmd', 'CMD-SHELL': 'cmd-shell' };
    return {
        type: kinds[test[0] ?? ''] ?? 'inherit',
        test,
        intervalSeconds: seconds(value.Interval),
        timeoutSeconds: seconds(value.Timeout),
        startPeriodSeconds: seconds(value.StartPeriod),
        startIntervalSeconds: seconds(value.StartInterval),
        retries: typeof value.Retries === 'number' && value.Retries > 0 ? value.Retries : null,
    };
}

/** What an image brings to a deploy, from its config blob's `config` (the deprecated `container_config` is not read). */
export function summarizeConfig(document: Record<string, unknown>): ImageConfigSummary {
    const config = isRecord(document.config) ? document.config : {};
    return {
        platform: {
            os: text(document.os) ?? 'unknown',
            architecture: text(document.architecture) ?? 'unknown',
            variant: text(document.variant),
        },
        created: text(document.created),
        env: environment(config.Env),
        exposedPorts: exposedPorts(config.ExposedPorts),
        volumes: Object.keys(isRecord(config.Volumes) ? config.Volumes : {}).sort(),
        labels: stringMap(config.Labels),
        user: typeof config.User === 'string' ? config.User : '',
        healthcheck: healthcheck(config.Healthcheck),
        entrypoint: stringList(config.Entrypoint),
        cmd: stringList(config.Cmd),
        workingDir: text(config.WorkingDir),
        stopSignal: text(config.StopSignal),
    };
}
