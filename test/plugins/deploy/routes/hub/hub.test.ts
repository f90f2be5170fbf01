// needs: docker
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { InspectAnswer, SearchAnswer, TagsAnswer } from '../../../../../plugins/deploy/domain/hub/hub-service.ts';
import { Browser, type BrowserResponse } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { freePort } from '../../../../helpers/server.ts';
import { waitUntil } from '../../../../helpers/wait.ts';
import { type DockerHubStandIn, startDockerHub } from '../../../../support/docker-hub.ts';
import { buildTestImage, docker } from '../../../../support/images.ts';
import {
    type LocalRegistry,
    OCI,
    type PushedIndex,
    pushMultiPlatformImage,
    type RecordingProxy,
    startLocalRegistry,
    startRecordingProxy,
} from '../../../../support/local-registry.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const query = (parameters: Record<string, string>) => new URLSearchParams(parameters).toString();

describe('deploy manager: image search, tags and inspection', { timeout: 300_000 }, () => {
    let hub: DockerHubStandIn;
    let open: LocalRegistry;
    let guarded: LocalRegistry;
    /** Two hosts in front of the guarded registry: Gatehouse sees two registries, and meets each afresh. */
    let proxy: RecordingProxy;
    let tagsProxy: RecordingProxy;
    let server: DeployTestServer;
    let editor: Browser;
    let viewer: Browser;
    let multi: PushedIndex;
    /** The same image under a name of its own, which only the test of the memory inspects. */
    let remembered: PushedIndex;
    let guardedApp: PushedIndex;
    let busybox: { reference: string; digest: string };

    before(async () => {
        hub = await startDockerHub();
        open = await startLocalRegistry();
        guarded = await startLocalRegistry({ tokenAuth: true });
        proxy = await startRecordingProxy(guarded.baseUrl);
        tagsProxy = await startRecordingProxy(guarded.baseUrl);

        const tag = `${open.host}/gatehouse-test/busybox:1`;
        buildTestImage(
            tag,
            {
                lines: [
                    'ENV GREETING=hello',
                    'EXPOSE 80 53/udp',
                    'VOLUME /data',
                    'LABEL org.opencontainers.image.title=busybox-test',
                    'USER 1000:1000',
                    'HEALTHCHECK --interval=30s --timeout=5s --retries=3 CMD wget -q -O- http://127.0.0.1/ || exit 1',
                ],
            },
            true,
        );
        const repoDigest = docker('image', 'inspect', '--format', '{{index .RepoDigests 0}}', tag);
        docker('rmi', tag);
        busybox = { reference: tag, digest: repoDigest.slice(repoDigest.indexOf('@') + 1) };

        multi = await pushMultiPlatformImage(open, 'gatehouse-test/multi', '1');
        remembered = await pushMultiPlatformImage(open, 'gatehouse-test/remembered', '1');
        guardedApp = await pushMultiPlatformImage(guarded, 'team/app', '2');
        await pushMultiPlatformImage(guarded, 'team/other', '1');
        await pushMultiPlatformImage(guarded, 'team/listed', '3');
        await pushMultiPlatformImage(guarded, 'team/secret', '1');
        guarded.token?.hidden.add('team/secret');

        // The local registries stand for registries on the internet: loopback is allowed like the internet.
        server = await deployTestServer({ HUB_URL: hub.url, HUB_ALLOWED_HOST_LIST: 'loopback' });
        editor = await server.signInAs('editor');
        viewer = await server.signInAs('viewer');
    });

    after(async () => {
        await server?.context.cleanup();
        await proxy?.stop();
        await tagsProxy?.stop();
        await guarded?.stop();
        await open?.stop();
        await hub?.stop();
    });

    const search = async (parameters: Record<string, string>) => await editor.get(`/api/hub/search?${query(parameters)}`);
    const tags = async (repo: string) => await editor.get(`/api/hub/tags?${query({ repo })}`);
    const inspect = async (ref: string, platform?: string) =>
        await editor.get(`/api/hub/inspect?${query({ ref, ...(platform ? { platform } : {}) })}`);
    const inspected = async (ref: string, platform?: string) => {
        const response = await inspect(ref, platform);
        expect(response.status, response.text).to.equal(200);
        return response.body as InspectAnswer;
    };

    const hubRequestsDuring = async (work: () => Promise<BrowserResponse>) => {
        const before = hub.requests.length;
        const response = await work();
        return { response, requests: hub.requests.slice(before) };
    };

    describe('who may ask', () => {
        it('lets every signed-in role in (the seed lists the image routes for any role) and refuses strangers (401)', async () => {
            const stranger = new Browser(server.baseUrl);
            // Values no other test asks for, so that the answers cached here change nothing below.
            for (const path of [
                '/api/hub/search?q=viewer-probe',
                '/api/hub/tags?repo=viewer/probe',
                '/api/hub/inspect?ref=127.0.0.1:9/viewer/probe',
            ]) {
                expect([401, 403], path).to.not.include((await viewer.get(path)).status);
                expect((await stranger.get(path)).status, path).to.equal(401);
            }
        });
    });

    describe('search', () => {
        it('asks search v4 for images and answers numbers for pull counts, official images without library/', async () => {
            const { response, requests } = await hubRequestsDuring(() => search({ q: 'nginx' }));
            expect(response.status, response.text).to.equal(200);
            const body = response.body as SearchAnswer;
            expect(body).to.include({ query: 'nginx', page: 1, pageSize: 25, sort: null, official: false, source: 'v4', total: 3 });
            expect(body.results[0]).to.equal({
                name: 'nginx',
                namespace: 'library',
                repository: 'nginx',
                description: 'Official build of Nginx.',
                starCount: 20_000,
                pullCount: 1_000_000_000,
                pullCountText: '1B+',
                official: true,
                badge: 'official',
                publisher: 'Docker Official Images',
                updatedAt: '2026-08-28T16:00:00Z',
                architectures: ['amd64', 'arm64'],
            });
            expect(body.results.map((result) => [result.name, result.pullCount, result.badge])).to.equal([
                ['nginx', 1_000_000_000, 'official'],
                ['bitnami/nginx', 500_000_000, 'verified_publisher'],
                ['someone/nginx-proxy-thing', 10_000, null],
            ]);
            expect(requests.map((request) => request.path)).to.equal(['/api/search/v4']);
            expect(Object.fromEntries(requests[0]?.query ?? [])).to.equal({
                custom_boosted_results: 'true',
                query: 'nginx',
                from: '0',
                size: '25',
                type: 'image',
            });
        });

        it('passes sort, the official filter and the page on, and keeps answers a few minutes', async () => {
            const parameters = { q: 'nginx', sort: 'pull_count', official: 'true', page: '2' };
            const { response, requests } = await hubRequestsDuring(() => search(parameters));
            expect(response.status, response.text).to.equal(200);
            expect(response.body).to.include({ page: 2, sort: 'pull_count', official: true, total: 1, results: [] });
            expect(Object.fromEntries(requests[0]?.query ?? [])).to.include({
                from: '25',
                sort: 'pull_count',
                order: 'desc',
                badges: 'official',
            });

            const again = await hubRequestsDuring(() => search(parameters));
            expect(again.response.body).to.equal(response.body);
            expect(again.requests).to.equal([]);
        });

        it('falls back to search v2 when v4 fails or is gone', async () => {
            hub.failSearchV4('error');
            try {
                const { response, requests } = await hubRequestsDuring(() => search({ q: 'redis' }));
                expect(response.status, response.text).to.equal(200);
                const body = response.body as SearchAnswer;
                expect(body).to.include({ source: 'v2', total: 1 });
                expect(body.results).to.equal([
                    {
                        name: 'redis',
                        namespace: 'library',
                        repository: 'redis',
                        description: 'Redis is an open source key-value store',
                        starCount: 13_000,
                        pullCount: 987_654_321,
                        pullCountText: null,
                        official: true,
                        badge: 'official',
                        publisher: null,
                        updatedAt: null,
                        architectures: [],
                    },
                ]);
                expect(requests.map((request) => request.path)).to.equal(['/api/search/v4', '/v2/search/repositories/']);
                expect(Object.fromEntries(requests[1]?.query ?? [])).to.equal({ query: 'redis', page: '1', page_size: '25' });

                hub.failSearchV4('missing');
                const official = await search({ q: 'nginx', official: 'true', sort: 'pull_count' });
                expect(official.status, official.text).to.equal(200);
                expect((official.body as SearchAnswer).source).to.equal('v2');
                expect((official.body as SearchAnswer).results.map((result) => result.name)).to.equal(['nginx']);
            } finally {
                hub.restore();
            }
        });

        it('answers 429 with Retry-After when Hub limits, asks Hub nothing until the wait is over, then works again', async () => {
            hub.trouble('rate-limited', { retryAfterSeconds: 2 });
            try {
                const { response, requests } = await hubRequestsDuring(() => search({ q: 'limited-1' }));
                expect(response.status, response.text).to.equal(429);
                expect(Number(response.headers.get('retry-after'))).to.be.between(0, 3);
                expect((response.body as { error: string }).error).to.match(/^Docker Hub limits how often it is asked: try again in \d s$/);
                expect(requests.map((request) => request.path)).to.equal(['/api/search/v4']);

                const meanwhile = await hubRequestsDuring(() => search({ q: 'limited-2' }));
                expect(meanwhile.response.status).to.equal(429);
                expect(meanwhile.requests).to.equal([]);
                // A repository no other test lists, so that no kept answer stands in for Hub.
                const tagsMeanwhile = await hubRequestsDuring(() => tags('limited/probe'));
                expect(tagsMeanwhile.response.status).to.equal(429);
                expect(tagsMeanwhile.requests).to.equal([]);
            } finally {
                hub.restore();
            }

            await waitUntil(
                'the search answers again once Hub’s wait is over',
                async () => (await search({ q: 'limited-1' })).status === 200,
                {
                    timeoutMs: 10_000,
                    intervalMs: 250,
                },
            );
        });

        it('answers 502 with the reason when Hub fails, breaks off or answers nonsense, and keeps no failure', async () => {
            const cases: Array<['error' | 'reset' | 'not-json', RegExp]> = [
                [
                    'error',
                    /^Docker Hub's search failed: the search v4 of Docker Hub answered 500; then the search v2 of Docker Hub answered 500$/,
                ],
                ['reset', /search v4 of Docker Hub is unreachable \(.*\); then the search v2 of Docker Hub is unreachable/],
                ['not-json', /search v4 of Docker Hub answered something that is not JSON/],
            ];
            for (const [trouble, reason] of cases) {
                hub.trouble(trouble);
                try {
                    const response = await search({ q: `outage-${trouble}` });
                    expect(response.status, trouble).to.equal(502);
                    expect(Object.keys(response.body as object)).to.equal(['error']);
                    expect((response.body as { error: string }).error).to.match(reason);
                } finally {
                    hub.restore();
                }

                expect((await search({ q: `outage-${trouble}` })).status).to.equal(200);
            }
        });

        it('refuses bad parameters with 422, naming them', async () => {
            const cases: Array<[string, RegExp]> = [
                ['', /q is required/],
                ['q=', /q contains an invalid value/],
                ['q=%20%20', /^q: give 1 to 100 characters/],
                ['q=nginx&page=0', /page must be greater than or equal to 1/],
                ['q=nginx&page=x', /page must be a number/],
                ['q=nginx&sort=stars', /sort must be one of/],
                ['q=nginx&official=maybe', /official must be a boolean/],
            ];
            for (const [parameters, message] of cases) {
                const response = await editor.get(`/api/hub/search?${parameters}`);
                expect(response.status, parameters).to.equal(422);
                expect((response.body as { error: string }).error, parameters).to.match(message);
            }
        });
    });

    describe('tags', () => {
        it('lists a Docker Hub repository’s tags from Hub, newest first, with digests and platforms', async () => {
            const { response, requests } = await hubRequestsDuring(() => tags('nginx'));
            expect(response.status, response.text).to.equal(200);
            const body = response.body as TagsAnswer;
            expect(body).to.include({ repository: 'nginx', registry: 'docker.io', source: 'hub', total: 3, complete: true });
            expect(body.tags.map((tag) => tag.name)).to.equal(['latest', '1.27', '1.25-alpine']);
            expect(body.tags[1]).to.include({ name: '1.27', updatedAt: '2026-08-28T15:00:00Z', size: 70_000_001 });
            expect(body.tags[1]?.digest).to.match(/^sha256:[a-f0-9]{64}$/);
            expect(body.tags[1]?.platforms.map((platform) => [platform.os, platform.architecture, platform.variant])).to.equal([
                ['linux', 'amd64', null],
                ['linux', 'arm64', 'v8'],
            ]);
            expect(requests.map((request) => request.path)).to.equal(['/v2/namespaces/library/repositories/nginx/tags']);
            expect(Object.fromEntries(requests[0]?.query ?? [])).to.equal({ page: '1', page_size: '100', ordering: 'last_updated' });

            const bitnami = await tags('docker.io/bitnami/nginx');
            expect(bitnami.body).to.equal({
                repository: 'bitnami/nginx',
                registry: 'docker.io',
                source: 'hub',
                total: 0,
                complete: true,
                tags: [],
            });
        });

        it('says 404 for a repository Hub does not have', async () => {
            for (const repo of ['nobody/nothing', 'a/b/c']) {
                const response = await tags(repo);
                expect(response.status, repo).to.equal(404);
                expect((response.body as { error: string }).error, repo).to.contain('Docker Hub');
            }
        });

        it('lists another registry’s tags through its API, with a token where it wants one', async () => {
            const openTags = await tags(`${open.host}/gatehouse-test/multi`);
            expect(openTags.status, openTags.text).to.equal(200);
            expect(openTags.body).to.include({ repository: `${open.host}/gatehouse-test/multi`, registry: open.host, source: 'registry' });
            expect((openTags.body as TagsAnswer).tags.map((tag) => tag.name).sort()).to.equal([
                '1',
                'amd64-only',
                'arm64-only',
                'attestation',
            ]);
            expect((openTags.body as TagsAnswer).tags[0]).to.include({ digest: null, platforms: [] });

            const guardedTags = await tags(`${tagsProxy.host}/team/listed`);
            expect(guardedTags.status, guardedTags.text).to.equal(200);
            expect((guardedTags.body as TagsAnswer).tags.map((tag) => tag.name)).to.include('3');
            expect(tagsProxy.requests.map((request) => request.authorized)).to.equal([false, true]);

            expect((await tags(`${open.host}/gatehouse-test/none`)).status).to.equal(404);
        });

        it('refuses a repository with a tag, or no repository at all, with 422', async () => {
            for (const [repo, message] of [
                ['nginx:1.25', /^repo: give the repository without a tag or digest$/],
                ['NGINX', /^repo: repository names are lower case$/],
                ['ghcr.io/', /^repo: .* is not a repository name/],
            ] as const) {
                const response = await tags(repo);
                expect(response.status, repo).to.equal(422);
                expect((response.body as { error: string }).error, repo).to.match(message);
            }
        });
    });

    describe('inspect', () => {
        it('reads an image pushed by docker: environment, ports, volumes, labels, user and healthcheck', async () => {
            const answer = await inspected(busybox.reference);
            expect(answer).to.include({ registry: open.host, repository: 'gatehouse-test/busybox', tag: '1', digest: busybox.digest });
            expect(answer.config.env.GREETING).to.equal('hello');
            expect(answer.config.exposedPorts).to.equal([
                { port: 53, protocol: 'udp' },
                { port: 80, protocol: 'tcp' },
            ]);
            expect(answer.config.volumes).to.equal(['/data']);
            expect(answer.config.labels).to.include({ 'org.opencontainers.image.title': 'busybox-test' });
            expect(answer.config.user).to.equal('1000:1000');
            expect(answer.config.healthcheck).to.equal({
                type: 'cmd-shell',
                test: ['CMD-SHELL', 'wget -q -O- http://127.0.0.1/ || exit 1'],
                intervalSeconds: 30,
                timeoutSeconds: 5,
                startPeriodSeconds: null,
                startIntervalSeconds: null,
                retries: 3,
            });
            expect(answer.platform).to.include({ os: 'linux', architecture: 'amd64' });
            // One manifest and its config, on a registry that asks for nothing.
            expect(answer.multiPlatform ? answer.roundTrips <= 3 : answer.roundTrips === 2, String(answer.roundTrips)).to.be.true();
            expect(answer.tokenRequests).to.equal(0);
        });

        it('resolves a multi-platform index to linux/amd64, skipping attestations, in one request per level', async () => {
            const answer = await inspected(`${open.host}/gatehouse-test/multi:1`);
            expect(answer).to.equal({
                reference: `${open.host}/gatehouse-test/multi:1`,
                name: `${open.host}/gatehouse-test/multi`,
                registry: open.host,
                repository: 'gatehouse-test/multi',
                tag: '1',
                digest: multi.index.digest,
                mediaType: OCI.index,
                multiPlatform: true,
                platforms: [
                    { os: 'linux', architecture: 'arm64', variant: 'v8', digest: multi.arm64.digest },
                    { os: 'linux', architecture: 'amd64', variant: null, digest: multi.amd64.digest },
                ],
                platform: { os: 'linux', architecture: 'amd64', variant: null },
                manifest: {
                    digest: multi.amd64.digest,
                    mediaType: OCI.manifest,
                    layers: 1,
                    size: multi.configs.amd64.size + multi.layers.amd64.size,
                },
                created: '2026-01-02T03:04:05Z',
                config: {
                    env: { PATH: '/bin', PLATFORM: 'amd64', EMPTY: '', EQUALS: 'a=b' },
                    exposedPorts: [
                        { port: 53, protocol: 'udp' },
                        { port: 8080, protocol: 'tcp' },
                        { port: 9000, protocol: 'tcp' },
                    ],
                    volumes: ['/config', '/data'],
                    labels: { 'org.opencontainers.image.title': 'multi amd64', 'org.opencontainers.image.version': '1.0' },
                    user: '1000:1000',
                    healthcheck: {
                        type: 'cmd-shell',
                        test: ['CMD-SHELL', 'wget -q -O- http://127.0.0.1:8080/ || exit 1'],
                        intervalSeconds: 30,
                        timeoutSeconds: 5,
                        startPeriodSeconds: null,
                        startIntervalSeconds: null,
                        retries: 3,
                    },
                    entrypoint: ['/bin/app'],
                    cmd: ['--serve'],
                    workingDir: '/srv',
                    stopSignal: 'SIGQUIT',
                },
                annotations: {
                    'org.opencontainers.image.description': 'from the index',
                    'org.opencontainers.image.source': 'https://example.com/amd64',
                },
                roundTrips: 3,
                tokenRequests: 0,
            });
        });

        it('answers again from memory, by tag or by digest, and another platform when asked', async () => {
            // Its own repository, first read here: the test of the first reading finds gatehouse-test/multi unread.
            const name = `${open.host}/gatehouse-test/remembered`;
            expect(await inspected(`${name}:1`)).to.include({ roundTrips: 3, digest: remembered.index.digest });
            expect(await inspected(`${name}:1`)).to.include({ roundTrips: 0, digest: remembered.index.digest });
            const pinned = await inspected(`${name}@${remembered.index.digest}`);
            expect(pinned).to.include({
                roundTrips: 0,
                tag: null,
                digest: remembered.index.digest,
                reference: `${name}@${remembered.index.digest}`,
            });

            const arm = await inspected(`${name}:1`, 'linux/arm64');
            expect(arm.platform).to.equal({ os: 'linux', architecture: 'arm64', variant: 'v8' });
            expect(arm.config.env.PLATFORM).to.equal('arm64');
            expect(arm.manifest.digest).to.equal(remembered.arm64.digest);
            expect(arm.roundTrips).to.equal(2);

            const missing = await inspect(`${name}:1`, 'linux/s390x');
            expect(missing.status).to.equal(404);
            expect(missing.body).to.equal({
                error: `${name} has no linux/s390x image (it has: linux/arm64/v8, linux/amd64)`,
            });
        });

        it('follows a token challenge anonymously: at most 2 registry requests for the first level, 1 for each after', async () => {
            const token = guarded.token;
            expect(token).to.exist();
            token?.requests.splice(0);
            const answer = await inspected(`${proxy.host}/team/app:2`);
            expect(answer).to.include({ digest: guardedApp.index.digest, roundTrips: 4, tokenRequests: 1 });
            expect(answer.config.env.PLATFORM).to.equal('amd64');
            expect(proxy.requests.map(({ method, path, authorized }) => `${method} ${path}${authorized ? ' (token)' : ''}`)).to.equal([
                'GET /v2/team/app/manifests/2',
                'GET /v2/team/app/manifests/2 (token)',
                `GET /v2/team/app/manifests/${guardedApp.amd64.digest} (token)`,
                `GET /v2/team/app/blobs/${guardedApp.configs.amd64.digest} (token)`,
            ]);
            expect(token?.requests).to.equal([
                { service: 'gatehouse-test-registry', scopes: ['repository:team/app:pull'], authorization: undefined },
            ]);

            // The challenge is remembered: another repository there gets its token before the first request.
            proxy.requests.length = 0;
            const other = await inspected(`${proxy.host}/team/other:1`);
            expect(other).to.include({ roundTrips: 3, tokenRequests: 1 });
            expect(proxy.requests.every((request) => request.authorized)).to.be.true();
        });

        it('says 404 for a tag, repository or private image the registry does not show', async () => {
            // A host of its own in front of the guarded registry, and repositories the token test does not read: that
            // test meets the proxy's host afresh and gets its token for team/app itself.
            const own = await startRecordingProxy(guarded.baseUrl);
            try {
                const cases: Array<[string, RegExp]> = [
                    [`${own.host}/team/listed:nope`, /team\/listed:nope is not in the registry .* \(MANIFEST_UNKNOWN/],
                    [`${open.host}/gatehouse-test/none:1`, /gatehouse-test\/none:1 is not in the registry/],
                    [
                        `${own.host}/team/secret:1`,
                        /shows 127\.0\.0\.1:\d+\/team\/secret to no anonymous client: it does not exist or is private$/,
                    ],
                ];
                for (const [ref, message] of cases) {
                    const response = await inspect(ref);
                    expect(response.status, ref).to.equal(404);
                    expect((response.body as { error: string }).error, ref).to.match(message);
                }
            } finally {
                await own.stop();
            }
        });

        it('answers 502 when the registry cannot be reached, with words that do not tell a closed port from a refused one', async () => {
            const closed = await freePort();
            const response = await inspect(`127.0.0.1:${closed}/x:1`);
            expect(response.status).to.equal(502);
            expect(response.body).to.equal({
                error: `the registry 127.0.0.1:${closed} is unreachable (it does not answer, or HUB_ALLOWED_HOST_LIST does not allow it)`,
            });
        });

        it('refuses bad references and platforms with 422, naming the field', async () => {
            const cases: Array<[Record<string, string>, RegExp]> = [
                [{ ref: 'NGINX' }, /^ref: repository names are lower case$/],
                [{ ref: 'nginx@sha256:zz' }, /^ref: the digest "sha256:zz" is not valid/],
                [{ ref: 'nginx:' }, /^ref: the tag "" is not valid/],
                [{ ref: 'nginx', platform: 'linux' }, /platform/],
                [{}, /ref is required/],
            ];
            for (const [parameters, message] of cases) {
                const response = await editor.get(`/api/hub/inspect?${query(parameters)}`);
                expect(response.status, JSON.stringify(parameters)).to.equal(422);
                expect((response.body as { error: string }).error, JSON.stringify(parameters)).to.match(message);
            }
        });
    });
});
