import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { NotFoundError, TooManyRequestsError } from '../../../../../lib/errors.ts';
import { BoundedCache } from '../../../../../plugins/deploy/domain/hub/bounded-cache.ts';
import { parsePullCount } from '../../../../../plugins/deploy/domain/hub/docker-hub-client.ts';
import { HubService, LIST_TTL_MS } from '../../../../../plugins/deploy/domain/hub/hub-service.ts';
import { choosePlatform, type PlatformEntry, summarizeConfig } from '../../../../../plugins/deploy/domain/hub/image-manifest.ts';
import { parseChallenge, RegistryClient, RoundTrips, sha256Digest } from '../../../../../plugins/deploy/domain/hub/registry-client.ts';
import { retryAfterSeconds, Upstream, UpstreamFailure } from '../../../../../plugins/deploy/domain/hub/upstream.ts';
import { type FakeUpstream, json, startFakeUpstream } from '../../../../support/fake-upstream.ts';
import {
    type LocalRegistry,
    pushMultiPlatformImage,
    type PushedIndex,
    type RecordingProxy,
    startLocalRegistry,
    startRecordingProxy,
} from '../../../../support/local-registry.ts';

export const lab = Lab.script();
const { describe, it, before, after, beforeEach } = lab;
const { expect } = Code;

/** These tests are about what the client does with answers, not about where it may go. */
const anywhere = new Upstream(() => true);

describe('hub: small parts', () => {
    it('reads WWW-Authenticate challenges', () => {
        expect(
            parseChallenge(
                'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"',
            ),
        ).to.equal({
            scheme: 'bearer',
            params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/nginx:pull' },
        });
        expect(parseChallenge('Bearer realm="a\\"b", error=insufficient_scope, Basic realm="other"')?.params).to.equal({
            realm: 'a"b',
            error: 'insufficient_scope',
        });
        expect(parseChallenge('Basic realm="test-realm"')?.scheme).to.equal('basic');
        expect(parseChallenge(null)).to.be.undefined();
    });

    it('reads when to come back from Retry-After, else Hub’s Unix times, else a minute', () => {
        const now = Date.parse('2026-01-01T00:00:00Z');
        expect(retryAfterSeconds(new Headers({ 'retry-after': '7' }), now)).to.equal(7);
        expect(retryAfterSeconds(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).to.equal(30);
        expect(retryAfterSeconds(new Headers({ 'x-retry-after': String(now / 1000 + 42) }), now)).to.equal(42);
        expect(retryAfterSeconds(new Headers({ 'x-ratelimit-reset': String(now / 1000 - 5) }), now)).to.equal(1);
        expect(retryAfterSeconds(new Headers(), now)).to.equal(60);
    });

    it('turns Hub’s pull counts into numbers', () => {
        const cases: Array<[unknown, number]> = [
            ['1B+', 1_000_000_000],
            ['500M+', 500_000_000],
            ['10K+', 10_000],
            ['1.5k', 1500],
            ['12,345', 12_345],
            ['987', 987],
            [1234, 1234],
            [-3, 0],
            ['many', 0],
            [null, 0],
        ];
        for (const [given, expected] of cases) {
            expect(parsePullCount(given), String(given)).to.equal(expected);
        }
    });

    it('keeps a cache within its weight, least recently used out first, and entries within their time', () => {
        let clock = 0;
        const cache = new BoundedCache<string>({ maxWeight: 10, ttlMs: 100, now: () => clock });
        cache.set('a', 'A', { weight: 4 });
        cache.set('b', 'B', { weight: 4 });
        expect(cache.get('a')).to.equal('A');
        cache.set('c', 'C', { weight: 4 });
        expect(cache.get('b')).to.be.undefined();
        expect(cache.get('a')).to.equal('A');
        expect(cache.weight).to.equal(8);
        cache.set('huge', 'H', { weight: 11 });
        expect(cache.get('huge')).to.be.undefined();
        clock = 100;
        expect(cache.get('a')).to.be.undefined();
        expect(cache.size).to.equal(1);
    });

    it('loads a key once for callers that wait together, and keeps no failure', async () => {
        const cache = new BoundedCache<number>({ maxWeight: 10 });
        let loads = 0;
        const load = async () => {
            loads += 1;
            await Promise.resolve();
            return loads;
        };
        expect(await Promise.all([cache.load('k', load), cache.load('k', load)])).to.equal([1, 1]);
        expect(loads).to.equal(1);
        await expect(cache.load('bad', () => Promise.reject(new Error('down')))).to.reject('down');
        expect(await cache.load('bad', load)).to.equal(2);
    });

    it('chooses a platform as the engine would, skipping none it should take', () => {
        const entry = (architecture: string, variant: string | null, os = 'linux'): PlatformEntry => ({
            os,
            architecture,
            variant,
            digest: `${architecture}${variant ?? ''}`,
            mediaType: '',
            size: null,
        });
        const entries = [entry('amd64', 'v3'), entry('arm64', null), entry('amd64', null), entry('arm', 'v6'), entry('arm', 'v7')];
        const pick = (architecture: string, variant: string | null = null) =>
            choosePlatform(entries, { os: 'linux', architecture, variant })?.digest;
        expect(pick('amd64')).to.equal('amd64');
        expect(pick('amd64', 'v3')).to.equal('amd64v3');
        expect(pick('arm64')).to.equal('arm64');
        expect(pick('arm64', 'v8')).to.equal('arm64');
        expect(pick('arm', 'v7')).to.equal('armv7');
        expect(pick('arm', 'v5')).to.be.undefined();
        expect(pick('s390x')).to.be.undefined();
        expect(choosePlatform(entries, { os: 'windows', architecture: 'amd64', variant: null })).to.be.undefined();
    });

    it('summarises a config, leaving out what it cannot read', () => {
        const summary = summarizeConfig({
            architecture: 'amd64',
            os: 'linux',
            config: {
                Env: ['A=1', 'B', 7],
                ExposedPorts: { '80/TCP': {}, 'http/tcp': {}, '70000/tcp': {}, '53/udp': {} },
                Healthcheck: { Test: ['NONE'] },
                Labels: { good: 'yes', bad: 3 },
                User: '',
            },
            container_config: { Env: ['IGNORED=1'] },
        });
        expect(summary.env).to.equal({ A: '1', B: '' });
        expect(summary.exposedPorts).to.equal([
            { port: 53, protocol: 'udp' },
            { port: 80, protocol: 'tcp' },
        ]);
        expect(summary.healthcheck?.type).to.equal('none');
        expect(summary.labels).to.equal({ good: 'yes' });
        expect(summary.user).to.equal('');
        expect(summary.volumes).to.equal([]);
        expect(summary.cmd).to.be.null();
        expect(summarizeConfig({}).platform).to.equal({ os: 'unknown', architecture: 'unknown', variant: null });
    });
});

describe('hub: the registry client against a registry that misbehaves', () => {
    let fake: FakeUpstream;
    let client: RegistryClient;

    before(async () => {
        fake = await startFakeUpstream();
    });

    after(async () => {
        await fake?.stop();
    });

    beforeEach(() => {
        client = new RegistryClient({ upstream: anywhere });
    });

    it('follows relative Link headers for tag pages, and no Link to another host', async () => {
        fake.answer((_request, response, url) => {
            const last = url.searchParams.get('last');
            if (last === null) {
                json(response, 200, { name: 'x', tags: ['a', 'b'] }, { link: '</v2/x/tags/list?last=b&n=2>; rel="next"' });
            } else if (last === 'b') {
                json(response, 200, { name: 'x', tags: ['c'] }, { link: `<http://127.0.0.2:1/v2/x/tags/list?last=c>; rel="next"` });
            }
        });
        expect(await client.tags(fake.image('x'), new RoundTrips())).to.equal({ tags: ['a', 'b', 'c'], complete: false });

        fake.answer((_request, response) => json(response, 200, { name: 'x', tags: null }));
        expect(await client.tags(fake.image('x'), new RoundTrips())).to.equal({ tags: [], complete: true });
    });

    it('answers a 429 with the registry’s wait, then refuses at once until it is over', async () => {
        fake.answer((_request, response) =>
            json(response, 429, { errors: [{ code: 'TOOMANYREQUESTS', message: 'slow down' }] }, { 'retry-after': '7' }),
        );
        const error = await expect(client.manifest(fake.image('x'), 'latest', new RoundTrips())).to.reject(TooManyRequestsError);
        expect(error.retryAfterSeconds).to.equal(7);
        const asked = fake.requests.length;
        await expect(client.manifest(fake.image('y'), 'latest', new RoundTrips())).to.reject(TooManyRequestsError);
        expect(fake.requests.length).to.equal(asked);
    });

    it('calls an outage, a broken answer and bytes that do not match their digest upstream failures', async () => {
        fake.answer((_request, response) => json(response, 503, { errors: [{ code: 'UNAVAILABLE', message: 'maintenance' }] }));
        await expect(client.manifest(fake.image('x'), 'latest', new RoundTrips())).to.reject(
            UpstreamFailure,
            /503 \(UNAVAILABLE: maintenance\)/,
        );

        fake.answer((_request, response) =>
            response.writeHead(200, { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }).end('<html>'),
        );
        await expect(client.manifest(fake.image('x'), 'latest', new RoundTrips())).to.reject(UpstreamFailure, /not JSON/);

        const body = Buffer.from('{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json"}');
        const other = sha256Digest(Buffer.from('other'));
        fake.answer((_request, response) => response.writeHead(200, { 'docker-content-digest': other }).end(body));
        await expect(client.manifest(fake.image('x'), 'latest', new RoundTrips())).to.reject(UpstreamFailure, /do not match/);
        await expect(client.manifest(fake.image('x'), other, new RoundTrips())).to.reject(UpstreamFailure, /do not match/);
        const fetched = await client.manifest(fake.image('x'), sha256Digest(body), new RoundTrips());
        expect(fetched.mediaType).to.equal('application/vnd.oci.image.manifest.v1+json');

        fake.answer((request) => request.socket.destroy());
        await expect(client.manifest(fake.image('x'), 'latest', new RoundTrips())).to.reject(UpstreamFailure, /unreachable/);
    });

    it('gets a token where the challenge says, keeps it, and takes `token` as well as `access_token`', async () => {
        const tokenRequests: string[] = [];
        fake.answer((request, response, url) => {
            if (url.pathname === '/token') {
                tokenRequests.push(url.search);
                json(response, 200, { token: 'tok-1' });
            } else if (request.headers.authorization === 'Bearer tok-1') {
                json(response, 200, { name: 'team/app', tags: ['1'] });
            } else {
                json(
                    response,
                    401,
                    { errors: [{ code: 'UNAUTHORIZED' }] },
                    {
                        'www-authenticate': `Bearer realm="http://${fake.host}/token",service="fake",scope="repository:team/app:pull"`,
                    },
                );
            }
        });
        const trips = new RoundTrips();
        expect((await client.tags(fake.image('team/app'), trips)).tags).to.equal(['1']);
        expect(trips).to.include({ registry: 2, token: 1 });
        expect(tokenRequests).to.equal(['?service=fake&scope=repository%3Ateam%2Fapp%3Apull']);

        const again = new RoundTrips();
        await client.tags(fake.image('team/app'), again);
        expect(again).to.include({ registry: 1, token: 0 });
    });

    it('says an image is not there when the registry wants a password or the token service refuses', async () => {
        fake.answer((_request, response) => json(response, 401, { errors: [] }, { 'www-authenticate': 'Basic realm="private"' }));
        await expect(client.manifest(fake.image('x'), 'latest', new RoundTrips())).to.reject(NotFoundError, /no anonymous client/);

        fake.answer((_request, response, url) =>
            url.pathname === '/token'
                ? json(response, 401, { details: 'no' })
                : json(response, 401, {}, { 'www-authenticate': `Bearer realm="http://${fake.host}/token"` }),
        );
        await expect(client.manifest(fake.image('y'), 'latest', new RoundTrips())).to.reject(NotFoundError, /no access/);

        fake.answer((_request, response) => json(response, 401, {}, { 'www-authenticate': 'Bearer realm="ftp://elsewhere/token"' }));
        await expect(new RegistryClient({ upstream: anywhere }).manifest(fake.image('z'), 'latest', new RoundTrips())).to.reject(
            UpstreamFailure,
            /not HTTPS/,
        );
    });
});

describe('hub: Docker Hub’s registry flow, against a local registry standing in for registry-1.docker.io', { timeout: 120_000 }, () => {
    let registry: LocalRegistry;
    let proxy: RecordingProxy;
    let pushed: PushedIndex;
    let clock = Date.now();
    /** A service of its own for each test: its memory (tokens, manifests) starts empty. */
    let newService: () => HubService;

    before(async () => {
        registry = await startLocalRegistry({ tokenAuth: true });
        pushed = await pushMultiPlatformImage(registry, 'library/multi', '1');
        proxy = await startRecordingProxy(registry.baseUrl);
        const realm = registry.token?.realm ?? '';
        newService = () =>
            new HubService({
                hubUrl: 'http://127.0.0.1:1',
                upstream: anywhere,
                now: () => clock,
                registry: {
                    // As for docker.io: the challenge is known beforehand and manifest GETs count as pulls.
                    endpointOf: () => ({
                        baseUrl: `http://${proxy.host}`,
                        knownChallenge: { realm, service: 'gatehouse-test-registry' },
                        countsPulls: true,
                    }),
                },
            });
    });

    after(async () => {
        await proxy?.stop();
        await registry?.stop();
    });

    it('asks for the token first, and for the digest with a HEAD, which costs no pull', async () => {
        const service = newService();
        proxy.requests.length = 0;
        const answer = await service.inspect('multi:1');
        expect(answer.digest).to.equal(pushed.index.digest);
        expect(answer.manifest.digest).to.equal(pushed.amd64.digest);
        expect(answer.config.env.PLATFORM).to.equal('amd64');
        expect(proxy.requests.map(({ method, path }) => `${method} ${path}`)).to.equal([
            'HEAD /v2/library/multi/manifests/1',
            `GET /v2/library/multi/manifests/${pushed.index.digest}`,
            `GET /v2/library/multi/manifests/${pushed.amd64.digest}`,
            `GET /v2/library/multi/blobs/${pushed.configs.amd64.digest}`,
        ]);
        expect(proxy.requests.every((request) => request.authorized)).to.be.true();
        expect(answer).to.include({ roundTrips: 4, tokenRequests: 1 });
    });

    it('answers from memory while the tag is fresh, and with one HEAD once it is not', async () => {
        const service = newService();
        expect(await service.inspect('multi:1')).to.include({ roundTrips: 4, tokenRequests: 1 });
        proxy.requests.length = 0;
        expect(await service.inspect('docker.io/library/multi:1')).to.include({ roundTrips: 0, tokenRequests: 0 });
        expect(proxy.requests).to.equal([]);

        clock += LIST_TTL_MS + 1;
        const later = await service.inspect('multi:1');
        expect(later).to.include({ roundTrips: 1, tokenRequests: 1, digest: pushed.index.digest });
        expect(proxy.requests.map(({ method }) => method)).to.equal(['HEAD']);
    });
});
