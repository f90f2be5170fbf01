/**
 * Registries on 127.0.0.1 for the hub tests: Debian's docker-registry (distribution 2.8) on a free port with its
 * storage in a temporary folder, open or with real token auth. The token server is a node:http server here: it
 * signs ES256 JWTs with a self-signed certificate (in the JWT's x5c header) that the registry trusts through its
 * `rootcertbundle`, and records what it is asked. Also: pushing a multi-platform OCI index by hand through the
 * API, and a proxy that records the requests a registry gets.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Http from 'node:http';
import type Net from 'node:net';
import Path from 'node:path';
import Zlib from 'node:zlib';

import { freePort, temporaryDirectory } from '../helpers/server.ts';
import { waitUntil } from '../helpers/wait.ts';

const REGISTRY_BIN = '/usr/bin/docker-registry';
const SERVICE = 'gatehouse-test-registry';
const ISSUER = 'gatehouse-test-issuer';

export const OCI = {
    index: 'application/vnd.oci.image.index.v1+json',
    manifest: 'application/vnd.oci.image.manifest.v1+json',
    config: 'application/vnd.oci.image.config.v1+json',
    layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
};

export interface TokenRequest {
    service: string | null;
    scopes: string[];
    authorization: string | undefined;
}

export interface TokenServer {
    realm: string;
    requests: TokenRequest[];
    /** Repositories anonymous callers get no access to (the token is granted, without the pull). */
    hidden: Set<string>;
    mint(repository: string, actions: string[]): string;
    stop(): Promise<void>;
}

export interface LocalRegistry {
    /** `127.0.0.1:<port>`, as an image reference names it. */
    host: string;
    baseUrl: string;
    token: TokenServer | undefined;
    /** Headers that let the test itself push to `repository`. */
    pushHeaders(repository: string): Record<string, string>;
    stop(): Promise<void>;
}

/** Waits for the Debian package, which may still be installing when the tests start. */
export async function waitForRegistryBinary(): Promise<void> {
    await waitUntil(`${REGISTRY_BIN} is installed`, () => Fs.existsSync(REGISTRY_BIN), { timeoutMs: 300_000, intervalMs: 1000 });
}

function run(command: string, args: string[]): void {
    const result = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) {
        throw new Error(`${command} ${args.join(' ')}: ${result.stderr}`);
    }
}

async function listen(server: Http.Server): Promise<{ port: number; close(): Promise<void> }> {
    const sockets = new Set<Net.Socket>();
    server.on('connection', (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as Net.AddressInfo).port,
        async close() {
            for (const socket of sockets) {
                socket.destroy();
            }

            await new Promise((resolve) => server.close(resolve));
        },
    };
}

async function startTokenServer(state: string): Promise<TokenServer> {
    const keyFile = Path.join(state, 'token.key');
    const certificateFile = Path.join(state, 'token.crt');
    run(
        'openssl',
        ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'].concat([
            '-subj',
            '/CN=gatehouse-test-token',
            '-keyout',
            keyFile,
            '-out',
            certificateFile,
        ]),
    );
    const key = Crypto.createPrivateKey(Fs.readFileSync(keyFile));
    const chain = [new Crypto.X509Certificate(Fs.readFileSync(certificateFile)).raw.toString('base64')];
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const mint = (access: Array<{ type: string; name: string; actions: string[] }>) => {
        const now = Math.floor(Date.now() / 1000);
        const claims = { iss: ISSUER, sub: '', aud: SERVICE, exp: now + 300, nbf: now - 10, iat: now, jti: Crypto.randomUUID(), access };
        const input = `${encode({ typ: 'JWT', alg: 'ES256', x5c: chain })}.${encode(claims)}`;
        const signature = Crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
        return `${input}.${signature.toString('base64url')}`;
    };

    const requests: TokenRequest[] = [];
    const hidden = new Set<string>();
    const server = Http.createServer((request, response) => {
        const url = new URL(request.url ?? '/', 'http://127.0.0.1');
        const scopes = url.searchParams.getAll('scope');
        requests.push({ service: url.searchParams.get('service'), scopes, authorization: request.headers.authorization });
        const access = scopes.flatMap((scope) => {
            const [type = '', name = '', actions = ''] = scope.split(':');
            const granted = actions.split(',').filter((action) => action === 'pull');
            return type === 'repository' && !hidden.has(name) && granted.length > 0 ? [{ type, name, actions: granted }] : [];
        });
        const token = mint(access);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ access_token: token, expires_in: 300, issued_at: new Date().toISOString() }));
    });
    const listening = await listen(server);
    return {
        realm: `http://127.0.0.1:${listening.port}/token`,
        requests,
        hidden,
        mint: (repository, actions) => mint([{ type: 'repository', name: repository, actions }]),
        stop: () => listening.close(),
    };
}

export async function startLocalRegistry(options: { tokenAuth?: boolean } = {}): Promise<LocalRegistry> {
    await waitForRegistryBinary();
    const state = temporaryDirectory('gatehouse-hub-registry-');
    const token = options.tokenAuth ? await startTokenServer(state) : undefined;
    const host = `127.0.0.1:${await freePort()}`;
    const lines = [
        'version: 0.1',
        'log: { level: error, accesslog: { disabled: true } }',
        'storage:',
        `  filesystem: { rootdirectory: ${Path.join(state, 'data')} }`,
        '  delete: { enabled: true }',
        `http: { addr: ${host} }`,
    ];
    if (token) {
        lines.push('auth:', '  token:', `    realm: ${token.realm}`, `    service: ${SERVICE}`, `    issuer: ${ISSUER}`);
        lines.push(`    rootcertbundle: ${Path.join(state, 'token.crt')}`);
    }

    Fs.writeFileSync(Path.join(state, 'config.yml'), `${lines.join('\n')}\n`);
    const registry: ChildProcess = spawn(REGISTRY_BIN, ['serve', Path.join(state, 'config.yml')], { stdio: 'ignore' });
    const exited = new Promise((resolve) => registry.once('exit', resolve));
    const stop = async () => {
        if (registry.exitCode === null && registry.signalCode === null) {
            registry.kill('SIGTERM');
            await exited;
        }

        await token?.stop();
        Fs.rmSync(state, { recursive: true, force: true });
    };
    const baseUrl = `http://${host}`;
    const answers = () =>
        fetch(`${baseUrl}/v2/`).then(
            (response) => response.status === 200 || response.status === 401,
            () => false, // not listening yet
        );
    try {
        await waitUntil(`the registry at ${host} answers /v2/`, answers, { timeoutMs: 20_000, intervalMs: 100 });
    } catch (error) {
        await stop();
        throw error;
    }

    const pushHeaders = (repository: string): Record<string, string> =>
        token ? { authorization: `Bearer ${token.mint(repository, ['pull', 'push'])}` } : {};
    return { host, baseUrl, token, pushHeaders, stop };
}

const sha256 = (bytes: Buffer) => `sha256:${Crypto.createHash('sha256').update(bytes).digest('hex')}`;

export interface Descriptor {
    mediaType: string;
    digest: string;
    size: number;
}

export async function pushBlob(registry: LocalRegistry, repository: string, bytes: Buffer): Promise<Descriptor> {
    const headers = registry.pushHeaders(repository);
    const started = await fetch(`${registry.baseUrl}/v2/${repository}/blobs/uploads/`, { method: 'POST', headers });
    const location = started.headers.get('location');
    if (started.status !== 202 || !location) {
        throw new Error(`starting an upload to ${repository} answered ${started.status}: ${await started.text()}`);
    }

    const target = new URL(location, registry.baseUrl);
    target.searchParams.set('digest', sha256(bytes));
    const put = await fetch(target, {
        method: 'PUT',
        headers: { ...headers, 'content-type': 'application/octet-stream' },
        body: new Uint8Array(bytes),
    });
    if (put.status !== 201) {
        throw new Error(`uploading a blob to ${repository} answered ${put.status}: ${await put.text()}`);
    }

    return { mediaType: 'application/octet-stream', digest: sha256(bytes), size: bytes.length };
}

export async function pushManifest(
    registry: LocalRegistry,
    repository: string,
    reference: string,
    manifest: { mediaType: string } & Record<string, unknown>,
): Promise<Descriptor> {
    const bytes = Buffer.from(JSON.stringify(manifest));
    const response = await fetch(`${registry.baseUrl}/v2/${repository}/manifests/${reference}`, {
        method: 'PUT',
        headers: { ...registry.pushHeaders(repository), 'content-type': manifest.mediaType },
        body: new Uint8Array(bytes),
    });
    if (response.status !== 201) {
        throw new Error(`putting manifest ${repository}:${reference} answered ${response.status}: ${await response.text()}`);
    }

    return { mediaType: manifest.mediaType, digest: sha256(bytes), size: bytes.length };
}

export interface PushedIndex {
    index: Descriptor;
    amd64: Descriptor;
    arm64: Descriptor;
    attestation: Descriptor;
    /** The config and layer blobs of the two platforms. */
    configs: { amd64: Descriptor; arm64: Descriptor };
    layers: { amd64: Descriptor; arm64: Descriptor };
}

/** The config of one platform: what inspect should report for it. */
export function platformConfig(architecture: 'amd64' | 'arm64') {
    return {
        architecture,
        os: 'linux',
        ...(architecture === 'arm64' ? { variant: 'v8' } : {}),
        created: '2026-01-02T03:04:05Z',
        config: {
            User: '1000:1000',
            Env: ['PATH=/bin', `PLATFORM=${architecture}`, 'EMPTY=', 'EQUALS=a=b'],
            ExposedPorts: { '8080/tcp': {}, '53/udp': {}, '9000': {} },
            Volumes: { '/data': {}, '/config': {} },
            Labels: { 'org.opencontainers.image.title': `multi ${architecture}`, 'org.opencontainers.image.version': '1.0' },
            Entrypoint: ['/bin/app'],
            Cmd: ['--serve'],
            WorkingDir: '/srv',
            StopSignal: 'SIGQUIT',
            Healthcheck: { Test: ['CMD-SHELL', 'wget -q -O- http://127.0.0.1:8080/ || exit 1'], Interval: 30e9, Timeout: 5e9, Retries: 3 },
        },
        rootfs: { type: 'layers', diff_ids: [sha256(Buffer.from(architecture))] },
        history: [{ created: '2026-01-02T03:04:05Z', created_by: 'test' }],
    };
}

async function pushPlatformManifest(
    registry: LocalRegistry,
    repository: string,
    architecture: 'amd64' | 'arm64',
): Promise<{ manifest: Descriptor; config: Descriptor; layer: Descriptor }> {
    return await pushImage(registry, repository, `${architecture}-only`, platformConfig(architecture));
}

/** One image (an OCI manifest, one layer) with the given config, tagged `reference`. */
export async function pushImage(
    registry: LocalRegistry,
    repository: string,
    reference: string,
    imageConfig: object,
): Promise<{ manifest: Descriptor; config: Descriptor; layer: Descriptor }> {
    const config = await pushBlob(registry, repository, Buffer.from(JSON.stringify(imageConfig)));
    const layer = await pushBlob(registry, repository, Zlib.gzipSync(Buffer.from(`a layer for ${reference}`)));
    const architecture = (imageConfig as { architecture?: string }).architecture ?? 'amd64';
    const manifest = await pushManifest(registry, repository, reference, {
        mediaType: OCI.manifest,
        schemaVersion: 2,
        config: { ...config, mediaType: OCI.config },
        layers: [{ ...layer, mediaType: OCI.layer }],
        annotations: { 'org.opencontainers.image.source': `https://example.com/${architecture}` },
    });
    return { manifest, config, layer };
}

/**
 * A multi-platform image as BuildKit pushes one: an OCI index listing linux/arm64/v8 first, then linux/amd64,
 * then an attestation manifest with platform unknown/unknown.
 */
export async function pushMultiPlatformImage(registry: LocalRegistry, repository: string, tag: string): Promise<PushedIndex> {
    const { manifest: arm64, config: arm64Config, layer: arm64Layer } = await pushPlatformManifest(registry, repository, 'arm64');
    const { manifest: amd64, config: amd64Config, layer: amd64Layer } = await pushPlatformManifest(registry, repository, 'amd64');
    const statementConfig = await pushBlob(registry, repository, Buffer.from('{"architecture":"unknown","os":"unknown"}'));
    const statement = await pushBlob(registry, repository, Buffer.from('{"_type":"https://in-toto.io/Statement/v0.1"}'));
    const attestation = await pushManifest(registry, repository, 'attestation', {
        mediaType: OCI.manifest,
        schemaVersion: 2,
        config: { ...statementConfig, mediaType: OCI.config },
        layers: [{ ...statement, mediaType: 'application/vnd.in-toto+json' }],
    });
    const index = await pushManifest(registry, repository, tag, {
        mediaType: OCI.index,
        schemaVersion: 2,
        manifests: [
            { ...arm64, platform: { os: 'linux', architecture: 'arm64', variant: 'v8' } },
            { ...amd64, platform: { os: 'linux', architecture: 'amd64' } },
            {
                ...attestation,
                platform: { os: 'unknown', architecture: 'unknown' },
                annotations: { 'vnd.docker.reference.type': 'attestation-manifest', 'vnd.docker.reference.digest': amd64.digest },
            },
        ],
        annotations: { 'org.opencontainers.image.description': 'from the index', 'org.opencontainers.image.source': 'index' },
    });
    return {
        index,
        amd64,
        arm64,
        attestation,
        configs: { amd64: amd64Config, arm64: arm64Config },
        layers: { amd64: amd64Layer, arm64: arm64Layer },
    };
}

export interface RecordedRequest {
    method: string;
    path: string;
    authorized: boolean;
}

export interface RecordingProxy {
    /** `127.0.0.1:<port>`: a registry host that forwards to the real one. */
    host: string;
    requests: RecordedRequest[];
    stop(): Promise<void>;
}

/** Forwards every request to `target` as it is, and records method, path and whether it carried credentials. */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
    const requests: RecordedRequest[] = [];
    const server = Http.createServer((request, response) => {
        requests.push({ method: request.method ?? '', path: request.url ?? '', authorized: request.headers.authorization !== undefined });
        const upstream = Http.request(
            `${target}${request.url ?? '/'}`,
            { method: request.method, headers: { ...request.headers, host: new URL(target).host } },
            (answer) => {
                response.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.pipe(response);
            },
        );
        upstream.on('error', () => response.destroy());
        request.pipe(upstream);
    });
    const listening = await listen(server);
    return { host: `127.0.0.1:${listening.port}`, requests, stop: () => listening.close() };
}
