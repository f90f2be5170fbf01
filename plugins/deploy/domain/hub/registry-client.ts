/**
 * A client of the registry HTTP API v2 (OCI distribution) for public images: manifests, blobs and tag lists,
 * anonymously. A registry that answers 401 with a Bearer challenge gets its token from the realm it names, for
 * the repository's pull scope; tokens are kept until they expire, and what each registry asked for is remembered
 * so that later requests go with a token at once. Every request is counted in the caller's RoundTrips.
 */
import Crypto from 'node:crypto';

import { NotFoundError } from '../../../../lib/errors.ts';
import { BoundedCache } from './bounded-cache.ts';
import { DOCKER_HUB, familiarName, registryBaseUrl, TAG } from './image-reference.ts';
import {
    parseJsonObject,
    RateLimitMemory,
    registryErrorText,
    type Upstream,
    type UpstreamRequest,
    type UpstreamResponse,
    UpstreamFailure,
} from './upstream.ts';

export const MANIFEST_TYPES = {
    ociIndex: 'application/vnd.oci.image.index.v1+json',
    dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
    ociManifest: 'application/vnd.oci.image.manifest.v1+json',
    dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;

const ACCEPT_MANIFESTS = Object.values(MANIFEST_TYPES).join(', ');
/** distribution refuses manifests over 4 MiB; an image config with a long history stays well under 16. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
export const MAX_CONFIG_BYTES = 16 * 1024 * 1024;
const MAX_TOKEN_BYTES = 64 * 1024;
const MAX_TAG_LIST_BYTES = 4 * 1024 * 1024;
const TAG_PAGE_SIZE = 1000;
const MAX_TAG_PAGES = 10;
/** The token spec's default when the token server does not say. */
const DEFAULT_TOKEN_SECONDS = 60;
const CHALLENGE_MEMORY_MS = 3600_000;

export interface BearerChallenge {
    realm: string;
    service: string | undefined;
}

export interface RegistryEndpoint {
    /** `https://registry-1.docker.io`, `http://127.0.0.1:5000`. */
    baseUrl: string;
    /** A challenge known beforehand, which spares the first 401. */
    knownChallenge?: BearerChallenge;
    /** Manifest GETs count against a pull limit (Docker Hub): a HEAD tells the digest for free. */
    countsPulls: boolean;
}

/** Where a registry answers; Docker Hub's API lives at registry-1.docker.io and hands out tokens at auth.docker.io. */
export function defaultEndpoint(registry: string): RegistryEndpoint {
    if (registry === DOCKER_HUB) {
        return {
            baseUrl: registryBaseUrl(registry),
            knownChallenge: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io' },
            countsPulls: true,
        };
    }

    return { baseUrl: registryBaseUrl(registry), countsPulls: false };
}

/** Requests sent for one answer: to the registry itself, and to its token service. */
export class RoundTrips {
    registry = 0;
    token = 0;
}

export interface Repository {
    registry: string;
    repository: string;
}

export interface FetchedManifest {
    digest: string;
    mediaType: string;
    /** Length of the raw bytes, which the digest is over. */
    bytes: number;
    document: Record<string, unknown>;
}

type Access = { kind: 'open' } | { kind: 'bearer'; challenge: BearerChallenge };

export interface Challenge {
    scheme: string;
    params: Record<string, string>;
}

/** `Bearer realm="...",service="...",scope="..."`: the first challenge's scheme and its parameters. */
export function parseChallenge(header: string | null): Challenge | undefined {
    const match = header === null ? null : /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(header);
    if (!match?.[1]) {
        return undefined;
    }

    const params: Record<string, string> = {};
    for (const [, name = '', quoted, bare] of (match[2] ?? '').matchAll(/([A-Za-z][\w-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))/g)) {
        const key = name.toLowerCase();
        // A second challenge's parameters (`, Basic realm=...`) must not overwrite the first's.
        params[key] ??= quoted === undefined ? (bare ?? '') : quoted.replace(/\\(.)/g, '$1');
    }

    return { scheme: match[1].toLowerCase(), params };
}

export function sha256Digest(bytes: Buffer): string {
    return `sha256:${Crypto.createHash('sha256').update(bytes).digest('hex')}`;
}

function mediaTypeOf(document: Record<string, unknown>, response: UpstreamResponse): string {
    if (typeof document.mediaType === 'string' && document.mediaType !== '') {
        return document.mediaType;
    }

    return (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
}

/** The `rel="next"` URL of a Link header, resolved against the page it came with (registries send it relative). */
function nextLink(header: string | null, current: string): URL | undefined {
    const match = header === null ? null : /<([^>]+)>\s*;\s*rel="?next"?/i.exec(header);
    return match?.[1] ? new URL(match[1], current) : undefined;
}

export interface RegistryClientOptions {
    /** Where requests may go (Gatehouse's HUB_ALLOWED_HOST_LIST). */
    upstream: Upstream;
    endpointOf?: (registry: string) => RegistryEndpoint;
    now?: () => number;
}

export class RegistryClient {
    readonly #upstream: Upstream;
    readonly #endpointOf: (registry: string) => RegistryEndpoint;
    readonly #now: () => number;
    readonly #access: BoundedCache<Access>;
    readonly #tokens: BoundedCache<string>;
    readonly #rateLimits: RateLimitMemory;

    constructor(options: RegistryClientOptions) {
        this.#upstream = options.upstream;
        this.#endpointOf = options.endpointOf ?? defaultEndpoint;
        this.#now = options.now ?? Date.now;
        this.#access = new BoundedCache<Access>({ maxWeight: 1000, ttlMs: CHALLENGE_MEMORY_MS, now: this.#now });
        this.#tokens = new BoundedCache<string>({ maxWeight: 1000, now: this.#now });
        this.#rateLimits = new RateLimitMemory(this.#now);
    }

    endpointOf(registry: string): RegistryEndpoint {
        return this.#endpointOf(registry);
    }

    /** The manifest by tag or digest, its bytes checked against the digest asked for or announced. */
    async manifest(image: Repository, reference: string, trips: RoundTrips): Promise<FetchedManifest> {
        const what = `the registry ${image.registry}`;
        const response = await this.#send(image, this.#apiUrl(image, `/manifests/${reference}`), trips, {
            headers: { accept: ACCEPT_MANIFESTS },
            maxBytes: MAX_MANIFEST_BYTES,
        });
        this.#refuseMissing(image, reference, response);
        const digest = sha256Digest(response.body);
        const announced = response.headers.get('docker-content-digest');
        const expected = reference.startsWith('sha256:') ? reference : announced?.startsWith('sha256:') ? announced : undefined;
        if (expected !== undefined && expected !== digest) {
            throw new UpstreamFailure(`${what} answered a manifest whose bytes do not match ${expected}`);
        }

        const document = parseJsonObject(`${what}'s manifest of ${familiarName(image)}`, response.body);
        return { digest, mediaType: mediaTypeOf(document, response), bytes: response.body.length, document };
    }

    /** The digest a tag points at, from a HEAD (which no pull limit counts); undefined when the registry does not say. */
    async manifestDigest(image: Repository, tag: string, trips: RoundTrips): Promise<string | undefined> {
        const response = await this.#send(image, this.#apiUrl(image, `/manifests/${tag}`), trips, {
            method: 'HEAD',
            headers: { accept: ACCEPT_MANIFESTS },
            maxBytes: 0,
        });
        this.#refuseMissing(image, tag, response);
        const digest = response.headers.get('docker-content-digest') ?? '';
        return /^sha256:[a-f0-9]{64}$/.test(digest) ? digest : undefined;
    }

    /** A blob (an image config), checked against its digest. */
    async blob(image: Repository, digest: string, trips: RoundTrips, maxBytes = MAX_CONFIG_BYTES): Promise<Buffer> {
        // The one request a registry may answer from elsewhere: the spec lets it redirect a blob to its storage.
        const response = await this.#send(image, this.#apiUrl(image, `/blobs/${digest}`), trips, { maxBytes, crossOrigin: true });
        if (response.status !== 200) {
            const detail = registryErrorText(response.body);
            throw new UpstreamFailure(
                `the registry ${image.registry} answered ${response.status} for blob ${digest}${detail ? ` (${detail})` : ''}`,
            );
        }

        if (sha256Digest(response.body) !== digest) {
            throw new UpstreamFailure(`the registry ${image.registry} answered a blob whose bytes do not match ${digest}`);
        }

        return response.body;
    }

    /** Tag names in the registry's order, following `Link: <...>; rel="next"` for a few pages. */
    async tags(image: Repository, trips: RoundTrips): Promise<{ tags: string[]; complete: boolean }> {
        const tags: string[] = [];
        let url: string | undefined = this.#apiUrl(image, `/tags/list?n=${TAG_PAGE_SIZE}`);
        for (let page = 0; url !== undefined && page < MAX_TAG_PAGES; page += 1) {
            const response: UpstreamResponse = await this.#send(image, url, trips, { maxBytes: MAX_TAG_LIST_BYTES });
            this.#refuseMissing(image, undefined, response);
            tags.push(...tagsOf(image, parseJsonObject(`the registry ${image.registry}'s tag list`, response.body)));
            const next = nextLink(response.headers.get('link'), response.url);
            // The token goes only where the registry is: a next page elsewhere is not followed.
            if (next && next.origin !== new URL(response.url).origin) {
                return { tags, complete: false };
            }

            url = next?.toString();
        }

        return { tags, complete: url === undefined };
    }

    #apiUrl(image: Repository, path: string): string {
        return `${this.#endpointOf(image.registry).baseUrl}/v2/${image.repository}${path}`;
    }

    #refuseMissing(image: Repository, reference: string | undefined, response: UpstreamResponse): void {
        if (response.status === 200) {
            return;
        }

        const name = familiarName(image);
        const detail = registryErrorText(response.body);
        if (response.status === 404) {
            const what = reference === undefined ? name : `${name}${reference.startsWith('sha256:') ? '@' : ':'}${reference}`;
            throw new NotFoundError(`${what} is not in the registry ${image.registry}${detail ? ` (${detail})` : ''}`);
        }

        if (response.status === 401 || response.status === 403) {
            throw new NotFoundError(`the registry ${image.registry} shows ${name} to no anonymous client: it does not exist or is private`);
        }

        throw new UpstreamFailure(`the registry ${image.registry} answered ${response.status}${detail ? ` (${detail})` : ''}`);
    }

    /**
     * One request to the repository's API, with a token when the registry wants one; a 401 is answered once.
     * `url` holds only names, tags and digests checked by image-reference.ts, which need no escaping.
     */
    async #send(image: Repository, url: string, trips: RoundTrips, request: UpstreamRequest): Promise<UpstreamResponse> {
        const endpoint = this.#endpointOf(image.registry);
        const what = `the registry ${image.registry}`;
        this.#rateLimits.check(image.registry, what);
        const scope = `repository:${image.repository}:pull`;
        const known =
            this.#access.get(image.registry) ?? (endpoint.knownChallenge && { kind: 'bearer', challenge: endpoint.knownChallenge });
        const sentToken = known?.kind === 'bearer' ? await this.#token(image, known.challenge, scope, trips) : undefined;

        trips.registry += 1;
        let response = await this.#upstream.request(what, url, { ...request, headers: { ...request.headers, ...bearer(sentToken) } });
        if (response.status === 401) {
            const challenge = this.#bearerChallenge(image, response);
            if (challenge === undefined) {
                return response;
            }

            this.#access.set(image.registry, { kind: 'bearer', challenge });
            const token = await this.#token(image, challenge, scope, trips, sentToken);
            if (token === sentToken) {
                return response;
            }

            trips.registry += 1;
            response = await this.#upstream.request(what, url, { ...request, headers: { ...request.headers, ...bearer(token) } });
        } else if (sentToken === undefined && response.status < 500) {
            this.#access.set(image.registry, { kind: 'open' });
        }

        if (response.status === 429) {
            throw this.#rateLimits.limited(image.registry, what, response.headers);
        }

        if (response.status >= 500) {
            const detail = registryErrorText(response.body);
            throw new UpstreamFailure(`${what} answered ${response.status}${detail ? ` (${detail})` : ''}`);
        }

        return response;
    }

    /** The Bearer challenge of a 401, its realm checked; undefined when the registry wants a password instead. */
    #bearerChallenge(image: Repository, response: UpstreamResponse): BearerChallenge | undefined {
        const challenge = parseChallenge(response.headers.get('www-authenticate'));
        if (challenge?.scheme !== 'bearer') {
            return undefined;
        }

        const realm = challenge.params.realm ?? '';
        let realmUrl: URL;
        try {
            realmUrl = new URL(realm);
        } catch {
            throw new UpstreamFailure(`the registry ${image.registry} names a token service that is not a URL: ${realm.slice(0, 200)}`);
        }

        // Plain HTTP only beside a registry that is itself reached over plain HTTP (on this machine).
        const plainAllowed = this.#endpointOf(image.registry).baseUrl.startsWith('http:');
        if (realmUrl.protocol !== 'https:' && !(plainAllowed && realmUrl.protocol === 'http:')) {
            throw new UpstreamFailure(`the registry ${image.registry} names a token service that is not HTTPS: ${realmUrl.origin}`);
        }

        return { realm: realmUrl.toString(), service: challenge.params.service };
    }

    /** A pull token for the scope, kept until it expires; `stale` is one the registry just refused. */
    async #token(image: Repository, challenge: BearerChallenge, scope: string, trips: RoundTrips, stale?: string): Promise<string> {
        const key = `${challenge.realm}\n${challenge.service ?? ''}\n${scope}`;
        const cached = this.#tokens.get(key);
        if (cached !== undefined && cached !== stale) {
            return cached;
        }

        const url = new URL(challenge.realm);
        if (challenge.service !== undefined) {
            url.searchParams.set('service', challenge.service);
        }

        url.searchParams.append('scope', scope);
        const what = `the token service of ${image.registry}`;
        this.#rateLimits.check(url.origin, what);
        trips.token += 1;
        const response = await this.#upstream.request(what, url.toString(), { maxBytes: MAX_TOKEN_BYTES });
        if (response.status === 429) {
            throw this.#rateLimits.limited(url.origin, what, response.headers);
        }

        if (response.status === 401 || response.status === 403) {
            throw new NotFoundError(`the registry ${image.registry} gives anonymous clients no access to ${familiarName(image)}`);
        }

        if (response.status !== 200) {
            throw new UpstreamFailure(`${what} answered ${response.status}`);
        }

        const body = parseJsonObject(what, response.body);
        const token = typeof body.token === 'string' && body.token !== '' ? body.token : body.access_token;
        if (typeof token !== 'string' || token === '') {
            throw new UpstreamFailure(`${what} answered no token`);
        }

        const seconds = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : DEFAULT_TOKEN_SECONDS;
        // Given back a little early, so that it does not expire on its way to the registry.
        const lifetimeMs = seconds * 1000 - Math.min(10_000, (seconds * 1000) / 4);
        this.#tokens.set(key, token, { ttlMs: lifetimeMs });
        return token;
    }
}

/** The tags of a tag list: a registry's answer names the repository asked for and lists only tags. */
function tagsOf(image: Repository, body: Record<string, unknown>): string[] {
    const tags = body.tags ?? [];
    const named = body.name === undefined || body.name === image.repository;
    if (!named || !Array.isArray(tags) || !tags.every((tag) => typeof tag === 'string' && TAG.test(tag))) {
        throw new UpstreamFailure(`the registry ${image.registry} answered something that is not a tag list`);
    }

    return tags as string[];
}

function bearer(token: string | undefined): Record<string, string> {
    return token === undefined ? {} : { authorization: `Bearer ${token}` };
}
