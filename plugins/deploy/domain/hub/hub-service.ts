/**
 * Finding an image to deploy (`/api/hub/*`): Docker Hub's search and tag lists, and what an image brings (its
 * environment, ports, volumes, labels, user, healthcheck) read from any registry's manifest and config. Answers
 * are kept in memory: search and tag lists for a few minutes, which digest a tag points at likewise, manifests
 * and configs by digest for as long as room allows (a digest's content never changes).
 */
import type { Server } from '@hapi/hapi';

import { forField, NotFoundError, ValidationError } from '../../../../lib/errors.ts';
import { defineService } from '../../../../lib/services.ts';
import { BoundedCache } from './bounded-cache.ts';
import {
    DockerHubClient,
    type HubRepositoryText,
    type HubTag,
    type SearchPage,
    type SearchRequest,
    type SearchSort,
    SEARCH_PAGE_SIZE,
} from './docker-hub-client.ts';
import {
    annotationsOf,
    choosePlatform,
    DEFAULT_PLATFORM,
    type ImageConfigSummary,
    type ImageManifestParts,
    imageManifestParts,
    isImageManifest,
    isIndex,
    isIndexType,
    type Platform,
    type PlatformEntry,
    parsePlatform,
    platformEntries,
    platformText,
    summarizeConfig,
} from './image-manifest.ts';
import {
    canonicalReference,
    DOCKER_HUB,
    DOCKER_HUB_REGISTRY,
    familiarName,
    type ImageReference,
    parseImageReference,
    parseRepositoryName,
} from './image-reference.ts';
import {
    defaultEndpoint,
    type FetchedManifest,
    type RegistryEndpoint,
    type Repository,
    RegistryClient,
    type RegistryClientOptions,
    RoundTrips,
} from './registry-client.ts';
import { hubReachPolicy } from './reach.ts';
import { fetchSourceReadme, SOURCE_LABEL } from './source-readme.ts';
import { parseJsonObject, Upstream, UpstreamFailure } from './upstream.ts';

/** How long search answers, tag lists and tag → digest look-ups are kept. */
export const LIST_TTL_MS = 5 * 60_000;
const MAX_LIST_ENTRIES = 500;
const MAX_TAG_DIGESTS = 5000;
/** Raw manifest bytes kept, and summarised configs (as JSON characters). */
const MAX_MANIFEST_BYTES_KEPT = 16 * 1024 * 1024;
const MAX_CONFIG_CHARACTERS_KEPT = 16 * 1024 * 1024;
const MAX_QUERY_LENGTH = 100;

const IMAGE_CONFIG_TYPES = new Set(['application/vnd.oci.image.config.v1+json', 'application/vnd.docker.container.image.v1+json']);

export interface SearchAnswer extends SearchPage {
    query: string;
    page: number;
    pageSize: number;
    sort: SearchSort | null;
    official: boolean;
}

export interface TagsAnswer {
    /** As people write it: `nginx`, `ghcr.io/o/x`. */
    repository: string;
    registry: string;
    /** `hub`: Docker Hub's tag list (digests, platforms, dates, newest first); `registry`: the registry's (names only). */
    source: 'hub' | 'registry';
    total: number;
    /** False when more tags exist than were listed. */
    complete: boolean;
    tags: HubTag[];
}

export interface InspectAnswer {
    reference: string;
    name: string;
    registry: string;
    repository: string;
    tag: string | null;
    /** The top manifest's digest (the index of a multi-platform image): what a deploy pins. */
    digest: string;
    mediaType: string;
    multiPlatform: boolean;
    /** What the index offers; the one image of a single-platform image. */
    platforms: Array<Platform & { digest: string }>;
    platform: Platform;
    manifest: { digest: string; mediaType: string; layers: number; size: number };
    created: string | null;
    config: Omit<ImageConfigSummary, 'platform' | 'created'>;
    /** The index's and the manifest's annotations (the manifest's win). */
    annotations: Record<string, string>;
    /** Requests sent to the registry for this answer (0 when everything came from memory), and to its token service. */
    roundTrips: number;
    tokenRequests: number;
}

export interface HubServiceOptions {
    hubUrl: string;
    /** Where look-ups may go. */
    upstream: Upstream;
    registry?: Omit<RegistryClientOptions, 'upstream'>;
    now?: () => number;
}

const keyOf = (image: Repository, suffix: string) => `${image.registry}/${image.repository}${suffix}`;

interface InspectedParts {
    top: FetchedManifest;
    platforms: PlatformEntry[];
    chosen: FetchedManifest;
    parts: ImageManifestParts;
    summary: ImageConfigSummary;
}

function toInspectAnswer(reference: ImageReference, inspected: InspectedParts, trips: RoundTrips): InspectAnswer {
    const { top, platforms, chosen, parts, summary } = inspected;
    const { platform, created, ...config } = summary;
    const multiPlatform = isIndex(top);
    return {
        reference: canonicalReference(reference),
        name: familiarName(reference),
        registry: reference.registry,
        repository: reference.repository,
        tag: reference.tag,
        digest: top.digest,
        mediaType: top.mediaType,
        multiPlatform,
        platforms: multiPlatform
            ? platforms.map(({ os, architecture, variant, digest }) => ({ os, architecture, variant, digest }))
            : [{ ...platform, digest: top.digest }],
        platform,
        manifest: {
            digest: chosen.digest,
            mediaType: chosen.mediaType,
            layers: parts.layerSizes.length,
            size: parts.layerSizes.reduce((sum, size) => sum + size, parts.configSize),
        },
        created,
        config,
        annotations: { ...(multiPlatform ? annotationsOf(top) : {}), ...parts.annotations },
        roundTrips: trips.registry,
        tokenRequests: trips.token,
    };
}

export class HubService {
    readonly #hub: DockerHubClient;
    readonly #registry: RegistryClient;
    readonly #searches: BoundedCache<SearchPage>;
    readonly #repositoryTexts: BoundedCache<HubRepositoryText>;
    readonly #tagLists: BoundedCache<TagsAnswer>;
    readonly #tagDigests: BoundedCache<string>;
    readonly #manifests: BoundedCache<FetchedManifest>;
    readonly #configs: BoundedCache<ImageConfigSummary>;
    readonly #upstream: Upstream;
    readonly #sourceReadmes: BoundedCache<{ text: string | null }>;

    constructor(options: HubServiceOptions) {
        const now = options.now ?? Date.now;
        this.#hub = new DockerHubClient(options.hubUrl, options.upstream, now);
        this.#registry = new RegistryClient({ now, ...options.registry, upstream: options.upstream });
        this.#searches = new BoundedCache({ maxWeight: MAX_LIST_ENTRIES, ttlMs: LIST_TTL_MS, now });
        this.#repositoryTexts = new BoundedCache({ maxWeight: MAX_LIST_ENTRIES, ttlMs: LIST_TTL_MS, now });
        this.#tagLists = new BoundedCache({ maxWeight: MAX_LIST_ENTRIES, ttlMs: LIST_TTL_MS, now });
        this.#tagDigests = new BoundedCache({ maxWeight: MAX_TAG_DIGESTS, ttlMs: LIST_TTL_MS, now });
        this.#manifests = new BoundedCache({ maxWeight: MAX_MANIFEST_BYTES_KEPT, now });
        this.#configs = new BoundedCache({ maxWeight: MAX_CONFIG_CHARACTERS_KEPT, now });
        this.#upstream = options.upstream;
        this.#sourceReadmes = new BoundedCache({ maxWeight: MAX_LIST_ENTRIES, ttlMs: LIST_TTL_MS, now });
    }

    /**
     * The README of the repository an image's labels name as its source (`org.opencontainers.image.source`), kept as
     * long as Docker Hub's texts; null when no label names one or the forge does not answer it.
     */
    async sourceReadme(labels: Record<string, string>): Promise<string | null> {
        const source = labels[SOURCE_LABEL];
        if (!source) {
            return null;
        }

        const kept = await this.#sourceReadmes.load(source, async () => ({
            text: (await fetchSourceReadme(this.#upstream, source)) ?? null,
        }));
        return kept.text;
    }

    async search(request: { q: string; page: number; sort?: SearchSort; official: boolean }): Promise<SearchAnswer> {
        const query = request.q.trim();
        if (query === '' || query.length > MAX_QUERY_LENGTH) {
            throw new ValidationError(`q: give 1 to ${MAX_QUERY_LENGTH} characters to search for`);
        }

        const search: SearchRequest = { query, page: request.page, sort: request.sort, official: request.official };
        const page = await this.#searches.load(JSON.stringify(search), () => this.#hub.search(search));
        return { query, page: request.page, pageSize: SEARCH_PAGE_SIZE, sort: request.sort ?? null, official: request.official, ...page };
    }

    /** What Docker Hub says of an image's repository (description and README); null for other registries, which keep none. */
    async repositoryText(ref: string): Promise<HubRepositoryText | null> {
        const reference = forField('image', () => parseImageReference(ref));
        const [namespace = '', name = ''] = reference.repository.split('/');
        if (reference.registry !== DOCKER_HUB || !name) {
            return null;
        }

        return await this.#repositoryTexts.load(keyOf(reference, ''), () => this.#hub.repository(namespace, name));
    }

    async tags(repo: string): Promise<TagsAnswer> {
        const reference = forField('repo', () => parseRepositoryName(repo));
        return await this.#tagLists.load(keyOf(reference, ''), () => this.#listTags(reference));
    }

    async #listTags(reference: ImageReference): Promise<TagsAnswer> {
        const described = { repository: familiarName(reference), registry: reference.registry };
        if (reference.registry === DOCKER_HUB) {
            const parts = reference.repository.split('/');
            if (parts.length !== 2) {
                throw new NotFoundError(`Docker Hub has no repository ${reference.repository}: its names are namespace/name`);
            }

            const [namespace = '', name = ''] = parts;
            const page = await this.#hub.tags(namespace, name);
            return { ...described, source: 'hub', total: page.total, complete: page.tags.length >= page.total, tags: page.tags };
        }

        const { tags, complete } = await this.#registry.tags(reference, new RoundTrips());
        const listed = tags.map((name) => ({ name, digest: null, updatedAt: null, size: null, platforms: [] }));
        return { ...described, source: 'registry', total: listed.length, complete, tags: listed };
    }

    /**
     * The digest the tag names at its registry now, asked rather than remembered (the update check's question);
     * the look-ups remember the answer.
     */
    async currentDigest(ref: string): Promise<string> {
        const reference = forField('ref', () => parseImageReference(ref));
        if (reference.digest !== null) {
            return reference.digest;
        }

        const tag = reference.tag ?? 'latest';
        const trips = new RoundTrips();
        const digest =
            (await this.#registry.manifestDigest(reference, tag, trips)) ?? (await this.#registry.manifest(reference, tag, trips)).digest;
        this.#tagDigests.set(keyOf(reference, `:${tag}`), digest);
        return digest;
    }

    async inspect(ref: string, platform?: string): Promise<InspectAnswer> {
        const reference = forField('ref', () => parseImageReference(ref));
        const wanted = platform === undefined ? DEFAULT_PLATFORM : forField('platform', () => parsePlatform(platform));
        const trips = new RoundTrips();
        const top = await this.#topManifest(reference, trips);
        const platforms = isIndex(top) ? this.#platformsOf(top) : [];
        const chosen = isIndex(top) ? await this.#platformManifest(reference, platforms, wanted, trips) : top;
        if (!isImageManifest(chosen)) {
            const type = chosen.mediaType || 'untyped';
            throw new UpstreamFailure(`the registry ${reference.registry} answered a ${type} manifest, not an image's`);
        }

        const parts = imageManifestParts(chosen);
        if (!IMAGE_CONFIG_TYPES.has(parts.configMediaType)) {
            throw new ValidationError(`ref: ${familiarName(reference)} is not a container image (its config is ${parts.configMediaType})`);
        }

        const summary = await this.#config(reference, parts.configDigest, trips);
        return toInspectAnswer(reference, { top, platforms, chosen, parts, summary }, trips);
    }

    async #platformManifest(
        reference: ImageReference,
        platforms: PlatformEntry[],
        wanted: Platform,
        trips: RoundTrips,
    ): Promise<FetchedManifest> {
        const entry = choosePlatform(platforms, wanted);
        if (!entry) {
            const offered = platforms.map(platformText).join(', ') || 'none';
            throw new NotFoundError(`${familiarName(reference)} has no ${platformText(wanted)} image (it has: ${offered})`);
        }

        return await this.#manifestByDigest(reference, entry.digest, trips);
    }

    #platformsOf(index: FetchedManifest): PlatformEntry[] {
        const platforms = platformEntries(index);
        if (platforms.some((entry) => entry.mediaType !== '' && isIndexType(entry.mediaType))) {
            throw new UpstreamFailure(`the index ${index.digest} nests indexes, which Gatehouse does not follow`);
        }

        return platforms;
    }

    /**
     * The manifest a tag or digest names. A tag's digest is remembered for a while; on a registry that counts
     * pulls, a HEAD asks for it first, so that a manifest already kept costs no pull.
     */
    async #topManifest(reference: ImageReference, trips: RoundTrips): Promise<FetchedManifest> {
        if (reference.digest !== null) {
            return await this.#manifestByDigest(reference, reference.digest, trips);
        }

        const tag = reference.tag ?? 'latest';
        const tagKey = keyOf(reference, `:${tag}`);
        const known = this.#tagDigests.get(tagKey);
        if (known !== undefined) {
            return await this.#manifestByDigest(reference, known, trips);
        }

        if (this.#registry.endpointOf(reference.registry).countsPulls) {
            const digest = await this.#registry.manifestDigest(reference, tag, trips);
            if (digest !== undefined) {
                this.#tagDigests.set(tagKey, digest);
                return await this.#manifestByDigest(reference, digest, trips);
            }
        }

        const manifest = await this.#registry.manifest(reference, tag, trips);
        this.#manifests.set(keyOf(reference, `@${manifest.digest}`), manifest, { weight: manifest.bytes });
        this.#tagDigests.set(tagKey, manifest.digest);
        return manifest;
    }

    async #manifestByDigest(image: Repository, digest: string, trips: RoundTrips): Promise<FetchedManifest> {
        return await this.#manifests.load(
            keyOf(image, `@${digest}`),
            () => this.#registry.manifest(image, digest, trips),
            (manifest) => manifest.bytes,
        );
    }

    async #config(image: Repository, digest: string, trips: RoundTrips): Promise<ImageConfigSummary> {
        return await this.#configs.load(
            keyOf(image, `@${digest}`),
            async () =>
                summarizeConfig(parseJsonObject(`the config of ${familiarName(image)}`, await this.#registry.blob(image, digest, trips))),
            (summary) => JSON.stringify(summary).length,
        );
    }
}

/** Docker Hub's images from its own registry, or from the mirror HUB_REGISTRY_URL names (which hands out its own tokens, if any). */
function endpointsFor(hubRegistryUrl: string): (registry: string) => RegistryEndpoint {
    return (registry) =>
        registry === DOCKER_HUB && hubRegistryUrl !== DOCKER_HUB_REGISTRY
            ? { baseUrl: hubRegistryUrl, countsPulls: false }
            : defaultEndpoint(registry);
}

export const hub = defineService<HubService>('hub', (owner: Server) => {
    const host = owner.app.config.host;
    return new HubService({
        hubUrl: host.hubUrl,
        upstream: new Upstream(hubReachPolicy(host)),
        registry: { endpointOf: endpointsFor(host.hubRegistryUrl) },
    });
});
