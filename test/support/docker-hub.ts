/**
 * A Docker Hub stand-in on 127.0.0.1 for HUB_URL: search v4 (`/api/search/v4`), the older search v2
 * (`/v2/search/repositories/`) and tag lists (`/v2/namespaces/{ns}/repositories/{repo}/tags`), in Hub's JSON
 * shapes (v4's pull_count is a string such as `1B+`, v2's a number; v2 names official images without
 * `library/`). Switches make it answer 429 with Hub's rate-limit headers, fail, break connections, or drop v4.
 * Every request is recorded.
 */
import Http from 'node:http';
import type Net from 'node:net';

export type HubTrouble = 'none' | 'rate-limited' | 'error' | 'reset' | 'not-json';

export interface HubRequest {
    path: string;
    query: URLSearchParams;
}

export interface DockerHubStandIn {
    url: string;
    requests: HubRequest[];
    /** Every endpoint answers this way until `restore`. */
    trouble(kind: HubTrouble, options?: { retryAfterSeconds?: number }): void;
    /** Search v4 answers 500 (or 404 when `missing`); v2 still works. */
    failSearchV4(how?: 'error' | 'missing'): void;
    restore(): void;
    stop(): Promise<void>;
}

interface Repository {
    namespace: string;
    name: string;
    description: string;
    stars: number;
    pulls: number;
    official: boolean;
    badge: 'official' | 'verified_publisher' | 'open_source' | null;
    publisher: string;
    updatedAt: string;
    architectures: string[];
    /** The README Docker Hub shows ("full description", Markdown). */
    readme?: string;
}

export const HUB_REPOSITORIES: Repository[] = [
    {
        namespace: 'library',
        name: 'nginx',
        description: 'Official build of Nginx.',
        readme: [
            '# What is nginx?',
            '',
            'Nginx is a web server and reverse proxy.',
            '',
            '## Restricting access',
            '',
            'Protect a location with HTTP Basic authentication (`auth_basic`), or hand the decision to an',
            'authentication server with `auth_request` (forward auth).',
        ].join('\n'),
        stars: 20_000,
        pulls: 1_234_567_890,
        official: true,
        badge: 'official',
        publisher: 'Docker Official Images',
        updatedAt: '2026-08-28T16:00:00Z',
        architectures: ['amd64', 'arm64'],
    },
    {
        namespace: 'bitnami',
        name: 'nginx',
        description: 'Bitnami container image for NGINX',
        stars: 200,
        pulls: 512_000_000,
        official: false,
        badge: 'verified_publisher',
        publisher: 'VMware',
        updatedAt: '2026-09-01T08:00:00Z',
        architectures: ['amd64'],
    },
    {
        namespace: 'someone',
        name: 'nginx-proxy-thing',
        description: 'A community nginx proxy',
        stars: 3,
        pulls: 12_345,
        official: false,
        badge: null,
        publisher: 'someone',
        updatedAt: '2025-01-01T00:00:00Z',
        architectures: ['amd64'],
    },
    {
        namespace: 'library',
        name: 'redis',
        description: 'Redis is an open source key-value store',
        stars: 13_000,
        pulls: 987_654_321,
        official: true,
        badge: 'official',
        publisher: 'Docker Official Images',
        updatedAt: '2026-07-01T00:00:00Z',
        architectures: ['amd64', 'arm64'],
    },
];

const digestOf = (seed: string) => `sha256:${Buffer.from(seed).toString('hex').padEnd(64, '0').slice(0, 64)}`;

/** `library/nginx` has 3 tags, the newest first; others have none. */
export const HUB_TAGS: Record<string, Array<{ name: string; updated: string }>> = {
    'library/nginx': [
        { name: 'latest', updated: '2026-08-28T16:00:00Z' },
        { name: '1.27', updated: '2026-08-28T15:00:00Z' },
        { name: '1.25-alpine', updated: '2024-01-01T00:00:00Z' },
    ],
};

/** v4 shows rounded counts: `1B+`, `500M+`, `10K+`; small ones as digits. */
function roundedCount(pulls: number): string {
    for (const [size, suffix] of [
        [1e9, 'B'],
        [1e6, 'M'],
        [1e3, 'K'],
    ] as const) {
        if (pulls >= size) {
            const leading = Number(String(Math.floor(pulls / size))[0]) * 10 ** (String(Math.floor(pulls / size)).length - 1);
            return `${leading}${suffix}+`;
        }
    }

    return String(pulls);
}

const fullName = (repository: Repository) => `${repository.namespace}/${repository.name}`;

function matching(query: URLSearchParams, term: string | null, officialOnly: boolean): Repository[] {
    const text = (term ?? '').toLowerCase();
    const found = HUB_REPOSITORIES.filter(
        (repository) => fullName(repository).includes(text) || repository.description.toLowerCase().includes(text),
    ).filter((repository) => !officialOnly || repository.official);
    if (query.get('sort') === 'pull_count') {
        found.sort((a, b) => b.pulls - a.pulls);
    } else if (query.get('sort') === 'updated_at') {
        found.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
    }

    return found;
}

function searchV4(query: URLSearchParams) {
    const found = matching(query, query.get('query'), (query.get('badges') ?? '').split(',').includes('official'));
    const from = Number(query.get('from') ?? 0);
    const size = Number(query.get('size') ?? 25);
    return {
        total: found.length,
        results: found.slice(from, from + size).map((repository) => ({
            id: fullName(repository),
            name: repository.official ? repository.name : fullName(repository),
            slug: repository.official ? repository.name : fullName(repository),
            type: 'image',
            publisher: { id: repository.namespace, name: repository.publisher },
            created_at: '2014-06-05T12:00:00Z',
            updated_at: repository.updatedAt,
            short_description: repository.description,
            badge: repository.badge ?? 'none',
            star_count: repository.stars,
            pull_count: roundedCount(repository.pulls),
            operating_systems: [{ name: 'linux', label: 'Linux' }],
            architectures: repository.architectures.map((name) => ({ name, label: name.toUpperCase() })),
            logo_url: { large: '', small: '' },
            categories: [],
            extension_reviewed: false,
            archived: false,
        })),
    };
}

function searchV2(query: URLSearchParams, base: string) {
    const found = matching(query, query.get('query'), false);
    const page = Number(query.get('page') ?? 1);
    const size = Number(query.get('page_size') ?? 25);
    const next = page * size < found.length ? `${base}/v2/search/repositories/?query=${query.get('query')}&page=${page + 1}` : null;
    return {
        count: found.length,
        next,
        previous: null,
        results: found.slice((page - 1) * size, page * size).map((repository) => ({
            // Official images come back without library/.
            repo_name: repository.official ? repository.name : fullName(repository),
            short_description: repository.description,
            star_count: repository.stars,
            pull_count: repository.pulls,
            repo_owner: '',
            is_automated: false,
            is_official: repository.official,
        })),
    };
}

function tagList(repository: string, query: URLSearchParams, base: string) {
    const tags = HUB_TAGS[repository] ?? [];
    const page = Number(query.get('page') ?? 1);
    const size = Number(query.get('page_size') ?? 10);
    const next = page * size < tags.length ? `${base}/v2/namespaces/${repository}/tags?page=${page + 1}&page_size=${size}` : null;
    return {
        count: tags.length,
        next,
        previous: null,
        results: tags.slice((page - 1) * size, page * size).map((tag, index) => ({
            id: index + 1,
            name: tag.name,
            creator: 1,
            last_updater: 1,
            last_updater_username: 'doijanky',
            last_updated: tag.updated,
            tag_last_pulled: tag.updated,
            tag_last_pushed: tag.updated,
            repository: 1,
            full_size: 70_000_000 + index,
            v2: true,
            tag_status: 'active',
            media_type: 'application/vnd.oci.image.index.v1+json',
            content_type: 'image',
            digest: digestOf(`${repository}:${tag.name}`),
            images: [
                { architecture: 'amd64', os: 'linux', variant: null, digest: digestOf(`${tag.name}-amd64`), size: 70_000_000 },
                { architecture: 'arm64', os: 'linux', variant: 'v8', digest: digestOf(`${tag.name}-arm64`), size: 68_000_000 },
                { architecture: 'unknown', os: 'unknown', variant: null, digest: digestOf(`${tag.name}-att`), size: 800 },
            ],
        })),
    };
}

export async function startDockerHub(): Promise<DockerHubStandIn> {
    const requests: HubRequest[] = [];
    let trouble: HubTrouble = 'none';
    let retryAfterSeconds = 60;
    let v4: 'ok' | 'error' | 'missing' = 'ok';
    let base = '';

    const send = (response: Http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
        response.writeHead(status, { 'content-type': 'application/json', ...headers });
        response.end(JSON.stringify(body));
    };

    const server = Http.createServer((request, response) => {
        const url = new URL(request.url ?? '/', base);
        requests.push({ path: url.pathname, query: url.searchParams });
        if (trouble === 'reset') {
            request.socket.destroy();
            return;
        }

        if (trouble === 'rate-limited') {
            const reset = String(Math.floor(Date.now() / 1000) + retryAfterSeconds);
            send(
                response,
                429,
                { message: 'Too Many Requests' },
                {
                    'x-ratelimit-limit': '180',
                    'x-ratelimit-remaining': '0',
                    'x-ratelimit-reset': reset,
                    'x-retry-after': reset,
                },
            );
            return;
        }

        if (trouble === 'error') {
            response.writeHead(500, { 'content-type': 'text/html' }).end('<html><body>Internal Server Error</body></html>');
            return;
        }

        if (trouble === 'not-json') {
            response.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Maintenance</body></html>');
            return;
        }

        const tags = /^\/v2\/namespaces\/([^/]+)\/repositories\/([^/]+)\/tags\/?$/.exec(url.pathname);
        const page = /^\/v2\/repositories\/([^/]+)\/([^/]+)\/?$/.exec(url.pathname);
        if (url.pathname === '/api/search/v4') {
            if (v4 !== 'ok') {
                send(response, v4 === 'missing' ? 404 : 500, { message: v4 });
                return;
            }

            send(response, 200, searchV4(url.searchParams));
        } else if (url.pathname === '/v2/search/repositories/') {
            send(response, 200, searchV2(url.searchParams, base));
        } else if (page?.[1] && page[2]) {
            const found = HUB_REPOSITORIES.find((candidate) => fullName(candidate) === `${page[1]}/${page[2]}`);
            send(
                response,
                found ? 200 : 404,
                found
                    ? { name: found.name, namespace: found.namespace, description: found.description, full_description: found.readme ?? '' }
                    : { message: 'object not found' },
            );
        } else if (tags?.[1] && tags[2]) {
            const repository = `${decodeURIComponent(tags[1])}/${decodeURIComponent(tags[2])}`;
            if (!HUB_REPOSITORIES.some((candidate) => fullName(candidate) === repository)) {
                send(response, 404, { message: 'object not found', errinfo: {} });
                return;
            }

            send(response, 200, tagList(repository, url.searchParams, base));
        } else {
            send(response, 404, { message: 'not found' });
        }
    });
    const sockets = new Set<Net.Socket>();
    server.on('connection', (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`;

    return {
        url: base,
        requests,
        trouble(kind, options = {}) {
            trouble = kind;
            retryAfterSeconds = options.retryAfterSeconds ?? 60;
        },
        failSearchV4(how = 'error') {
            v4 = how;
        },
        restore() {
            trouble = 'none';
            v4 = 'ok';
        },
        async stop() {
            for (const socket of sockets) {
                socket.destroy();
            }

            await new Promise((resolve) => server.close(resolve));
        },
    };
}
