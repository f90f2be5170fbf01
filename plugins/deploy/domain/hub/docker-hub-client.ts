/**
 * Docker Hub's web API (not the registry): search, through v4 (what hub.docker.com itself uses) and else the
 * older v2 search, and the tags of a repository, which carry digests and platforms without spending pulls.
 * Neither is versioned for outsiders, so every field is read defensively and normalised: pull counts become
 * numbers, official images lose their `library/`.
 */
import { NotFoundError } from '../../../../lib/errors.ts';
import { parseJsonObject, RateLimitMemory, type Upstream, type UpstreamResponse, UpstreamFailure } from './upstream.ts';

export const SEARCH_PAGE_SIZE = 25;
export const TAGS_PAGE_SIZE = 100;
/** What of a README is kept (the evidence scan reads the first 200 KB). */
const MAX_README_CHARACTERS = 200_000;

export interface HubRepositoryText {
    description: string;
    readme: string;
}
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export type SearchSort = 'pull_count' | 'updated_at';

export interface SearchRequest {
    query: string;
    page: number;
    sort?: SearchSort;
    official: boolean;
}

export interface HubRepository {
    /** As `docker pull` takes it: `nginx`, `bitnami/nginx`. */
    name: string;
    namespace: string;
    repository: string;
    description: string;
    starCount: number;
    /** A number even where Hub answers `1B+` (then its lower bound: pullCountText keeps Hub's words). */
    pullCount: number;
    pullCountText: string | null;
    official: boolean;
    badge: 'official' | 'verified_publisher' | 'open_source' | null;
    publisher: string | null;
    updatedAt: string | null;
    architectures: string[];
}

export interface SearchPage {
    /** Which Hub API answered: `v4`, or `v2` when v4 failed. */
    source: 'v4' | 'v2';
    total: number;
    results: HubRepository[];
}

export interface TagPlatform {
    os: string;
    architecture: string;
    variant: string | null;
    digest: string | null;
    size: number | null;
}

export interface HubTag {
    name: string;
    /** The tag's top manifest (an index for multi-platform images): what a deploy pins. */
    digest: string | null;
    updatedAt: string | null;
    /** Compressed size of the layers. */
    size: number | null;
    platforms: TagPlatform[];
}

export interface TagsPage {
    total: number;
    tags: HubTag[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0);

const MULTIPLIERS: Record<string, number> = { '': 1, K: 1e3, M: 1e6, B: 1e9 };

/** `1B+`, `10M+`, `1.5K`, `12,345` or a number: the count it states, at least. */
export function parsePullCount(value: unknown): number {
    if (typeof value === 'number') {
        return count(value);
    }

    const match = typeof value === 'string' ? /^\s*([\d,]+(?:\.\d+)?)\s*([KMB]?)\+?\s*$/i.exec(value) : null;
    if (!match?.[1]) {
        return 0;
    }

    return Math.floor(Number(match[1].replace(/,/g, '')) * (MULTIPLIERS[(match[2] ?? '').toUpperCase()] ?? 1));
}

function splitName(fullName: string): { name: string; namespace: string; repository: string } {
    const name = fullName.replace(/^library\//, '');
    const slash = name.indexOf('/');
    return slash < 0
        ? { name, namespace: 'library', repository: name }
        : { name, namespace: name.slice(0, slash), repository: name.slice(slash + 1) };
}

const BADGES = new Set(['official', 'verified_publisher', 'open_source']);

function fromSearchV4(item: Record<string, unknown>): HubRepository | undefined {
    const fullName = text(item.name) ?? text(item.slug);
    if (!fullName) {
        return undefined;
    }

    const badge = typeof item.badge === 'string' && BADGES.has(item.badge) ? (item.badge as HubRepository['badge']) : null;
    const publisher = isRecord(item.publisher) ? text(item.publisher.name) : null;
    const architectures = Array.isArray(item.architectures)
        ? (item.architectures as unknown[]).map((entry) => (isRecord(entry) ? text(entry.name) : null)).filter((name) => name !== null)
        : [];
    return {
        ...splitName(fullName),
        description: text(item.short_description) ?? '',
        starCount: count(item.star_count),
        pullCount: parsePullCount(item.pull_count),
        pullCountText: typeof item.pull_count === 'string' ? item.pull_count : null,
        official: badge === 'official',
        badge,
        publisher,
        updatedAt: text(item.updated_at),
        architectures,
    };
}

function fromSearchV2(item: Record<string, unknown>): HubRepository | undefined {
    const fullName = text(item.repo_name) ?? text(item.name);
    if (!fullName) {
        return undefined;
    }

    const official = item.is_official === true;
    return {
        ...splitName(fullName),
        description: text(item.short_description) ?? text(item.description) ?? '',
        starCount: count(item.star_count),
        pullCount: parsePullCount(item.pull_count),
        pullCountText: typeof item.pull_count === 'string' ? item.pull_count : null,
        official,
        badge: official ? 'official' : null,
        publisher: text(item.repo_owner),
        updatedAt: null,
        architectures: [],
    };
}

function fromTag(item: Record<string, unknown>): HubTag | undefined {
    const name = text(item.name);
    if (!name) {
        return undefined;
    }

    const images = Array.isArray(item.images) ? (item.images as unknown[]).filter(isRecord) : [];
    const platforms = images
        .filter((image) => text(image.os) !== null && text(image.os) !== 'unknown' && text(image.architecture) !== 'unknown')
        .map((image) => ({
            os: text(image.os) ?? '',
            architecture: text(image.architecture) ?? '',
            variant: text(image.variant),
            digest: text(image.digest),
            size: typeof image.size === 'number' ? image.size : null,
        }));
    return {
        name,
        digest: text(item.digest),
        updatedAt: text(item.last_updated) ?? text(item.tag_last_pushed),
        size: typeof item.full_size === 'number' ? item.full_size : null,
        platforms,
    };
}

function resultsOf(what: string, body: Record<string, unknown>): Record<string, unknown>[] {
    if (!Array.isArray(body.results)) {
        throw new UpstreamFailure(`${what} answered without a list of results`);
    }

    return (body.results as unknown[]).filter(isRecord);
}

export class DockerHubClient {
    readonly #baseUrl: string;
    readonly #upstream: Upstream;
    readonly #rateLimits: RateLimitMemory;

    constructor(baseUrl: string, upstream: Upstream, now: () => number = Date.now) {
        this.#baseUrl = baseUrl.replace(/\/+$/, '');
        this.#upstream = upstream;
        this.#rateLimits = new RateLimitMemory(now);
    }

    /** Search v4; when it fails for any reason but a rate limit, the v2 search. */
    async search(request: SearchRequest): Promise<SearchPage> {
        let v4Failure: UpstreamFailure;
        try {
            return await this.#searchV4(request);
        } catch (error) {
            if (!(error instanceof UpstreamFailure)) {
                throw error;
            }

            v4Failure = error;
        }

        try {
            return await this.#searchV2(request);
        } catch (error) {
            if (error instanceof UpstreamFailure) {
                throw new UpstreamFailure(`Docker Hub's search failed: ${v4Failure.message}; then ${error.message}`);
            }

            throw error;
        }
    }

    async #searchV4(request: SearchRequest): Promise<SearchPage> {
        const url = new URL(`${this.#baseUrl}/api/search/v4`);
        url.searchParams.set('custom_boosted_results', 'true');
        url.searchParams.set('query', request.query);
        url.searchParams.set('from', String((request.page - 1) * SEARCH_PAGE_SIZE));
        url.searchParams.set('size', String(SEARCH_PAGE_SIZE));
        url.searchParams.set('type', 'image');
        if (request.sort) {
            url.searchParams.set('sort', request.sort);
            url.searchParams.set('order', 'desc');
        }

        if (request.official) {
            url.searchParams.set('badges', 'official');
        }

        const what = 'the search v4 of Docker Hub';
        const body = parseJsonObject(what, (await this.#get(what, url)).body);
        const results = resultsOf(what, body)
            .map(fromSearchV4)
            .filter((item) => item !== undefined);
        return { source: 'v4', total: typeof body.total === 'number' ? count(body.total) : results.length, results };
    }

    /** v2 has no documented sort or filter: both are applied to the page it answers. */
    async #searchV2(request: SearchRequest): Promise<SearchPage> {
        const url = new URL(`${this.#baseUrl}/v2/search/repositories/`);
        url.searchParams.set('query', request.query);
        url.searchParams.set('page', String(request.page));
        url.searchParams.set('page_size', String(SEARCH_PAGE_SIZE));
        if (request.official) {
            url.searchParams.set('is_official', 'true');
        }

        const what = 'the search v2 of Docker Hub';
        const body = parseJsonObject(what, (await this.#get(what, url)).body);
        let results = resultsOf(what, body)
            .map(fromSearchV2)
            .filter((item) => item !== undefined);
        if (request.official) {
            results = results.filter((item) => item.official);
        }

        if (request.sort === 'pull_count') {
            results.sort((a, b) => b.pullCount - a.pullCount);
        }

        return { source: 'v2', total: typeof body.count === 'number' ? count(body.count) : results.length, results };
    }

    /** A repository's short description and its README (Docker Hub's "full description", Markdown). */
    async repository(namespace: string, repository: string): Promise<HubRepositoryText> {
        const url = new URL(`${this.#baseUrl}/v2/repositories/${encodeURIComponent(namespace)}/${encodeURIComponent(repository)}/`);
        const what = "Docker Hub's repository page";
        const response = await this.#get(what, url, () => new NotFoundError(`no repository ${namespace}/${repository} on Docker Hub`));
        const body = parseJsonObject(what, response.body);
        const text = (value: unknown) => (typeof value === 'string' ? value.slice(0, MAX_README_CHARACTERS) : '');
        return { description: text(body.description), readme: text(body.full_description) };
    }

    /** The first page of tags, most recently pushed first. */
    async tags(namespace: string, repository: string): Promise<TagsPage> {
        const url = new URL(
            `${this.#baseUrl}/v2/namespaces/${encodeURIComponent(namespace)}/repositories/${encodeURIComponent(repository)}/tags`,
        );
        url.searchParams.set('page', '1');
        url.searchParams.set('page_size', String(TAGS_PAGE_SIZE));
        url.searchParams.set('ordering', 'last_updated');
        const what = "Docker Hub's tag list";
        const response = await this.#get(what, url, () => new NotFoundError(`no repository ${namespace}/${repository} on Docker Hub`));
        const body = parseJsonObject(what, response.body);
        const tags = resultsOf(what, body)
            .map(fromTag)
            .filter((tag) => tag !== undefined);
        return { total: typeof body.count === 'number' ? count(body.count) : tags.length, tags };
    }

    async #get(what: string, url: URL, notFound?: () => Error): Promise<UpstreamResponse> {
        this.#rateLimits.check('hub', 'Docker Hub');
        const response = await this.#upstream.request(what, url.toString(), {
            headers: { accept: 'application/json' },
            maxBytes: MAX_ANSWER_BYTES,
        });
        if (response.status === 429) {
            throw this.#rateLimits.limited('hub', 'Docker Hub', response.headers);
        }

        if (response.status === 404 && notFound) {
            throw notFound();
        }

        if (response.status !== 200) {
            throw new UpstreamFailure(`${what} answered ${response.status}`);
        }

        return response;
    }
}
