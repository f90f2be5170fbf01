import Crypto from 'node:crypto';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import type { InspectAnswer } from '../../../../../plugins/deploy/domain/hub/hub-service.ts';
import type { Browser, BrowserResponse } from '../../../../helpers/browser.ts';
import { type DeployTestServer, deployTestServer } from '../../../../helpers/deploy-session.ts';
import { freePort } from '../../../../helpers/server.ts';
import { type DockerHubStandIn, startDockerHub } from '../../../../support/docker-hub.ts';
import { type FakeUpstream, json, startFakeUpstream } from '../../../../support/fake-upstream.ts';
import { type LocalRegistry, OCI, pushMultiPlatformImage, startLocalRegistry } from '../../../../support/local-registry.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

const SECRET = 'db_password=hunter2';
const sha256 = (bytes: Buffer) => `sha256:${Crypto.createHash('sha256').update(bytes).digest('hex')}`;
const query = (parameters: Record<string, string>) => new URLSearchParams(parameters).toString();
const tagsOf = (repo: string) => `/api/hub/tags?${query({ repo })}`;
const inspectOf = (ref: string) => `/api/hub/inspect?${query({ ref })}`;
const detectOf = (image: string) => `/api/sso/detect?${query({ image })}`;

/** An image whose config blob lives elsewhere than its manifest, as a registry with external storage serves one. */
const storedConfig = Buffer.from(
    JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Env: ['FROM=storage'] }, rootfs: { type: 'layers', diff_ids: [] } }),
);
const storedManifest = Buffer.from(
    JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI.manifest,
        config: { mediaType: OCI.config, digest: sha256(storedConfig), size: storedConfig.length },
        layers: [],
    }),
);

/** Answers manifests itself and sends blob requests to `storage`, as the distribution spec lets a registry do. */
function redirectBlobsTo(front: FakeUpstream, storage: FakeUpstream): void {
    front.answer((_request, response, url) => {
        if (url.pathname.includes('/manifests/')) {
            response.writeHead(200, { 'content-type': OCI.manifest, 'docker-content-digest': sha256(storedManifest) }).end(storedManifest);
        } else {
            response.writeHead(307, { location: `${storage.baseUrl}${url.pathname}` }).end();
        }
    });
    storage.answer((_request, response) => response.writeHead(200, { 'content-type': OCI.config }).end(storedConfig));
}

function expectNeutral(response: BrowserResponse, what: string): void {
    expect(response.status, response.text).to.equal(502);
    expect(response.body).to.equal({
        error: `${what} is unreachable (it does not answer, or HUB_ALLOWED_HOST_LIST does not allow it)`,
    });
}

describe('deploy manager: what image look-ups may reach', { timeout: 300_000 }, () => {
    let hub: DockerHubStandIn;
    /** A loopback listener nobody configured, which redirects to `secret`. */
    let probe: FakeUpstream;
    /** A service on another loopback port that must never be asked. */
    let secret: FakeUpstream;
    /** The registry the configuration names (HUB_REGISTRY_URL and REGISTRY_URL). */
    let front: FakeUpstream;
    let server: DeployTestServer;
    let viewer: Browser;
    let editor: Browser;

    before(async () => {
        hub = await startDockerHub();
        [probe, secret, front] = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()]);
        secret.answer((_request, response) => json(response, 200, { name: 'x/a', tags: [SECRET], token: SECRET }));
        probe.answer((_request, response) => response.writeHead(302, { location: `${secret.baseUrl}/v2/x/a/tags/list` }).end());
        // The default policy: external addresses and the configured URLs only.
        server = await deployTestServer({ HUB_URL: hub.url, HUB_REGISTRY_URL: front.baseUrl, REGISTRY_URL: front.host });
        viewer = await server.signInAs('viewer');
        editor = await server.signInAs('editor');
    });

    after(async () => {
        await server?.context.cleanup();
        await Promise.all([probe?.stop(), secret?.stop(), front?.stop(), hub?.stop()]);
    });

    const nothingAsked = () => {
        expect(probe.requests).to.equal([]);
        expect(secret.requests).to.equal([]);
    };

    it("refuses a viewer's tag list and inspection of a loopback listener nobody configured, without asking it", async () => {
        expectNeutral(await viewer.get(tagsOf(`${probe.host}/x/a`)), `the registry ${probe.host}`);
        expectNeutral(await viewer.get(inspectOf(`${probe.host}/x/a:1`)), `the registry ${probe.host}`);
        // A name, not an address: refused on the addresses it resolves to, as the connection is made.
        const named = probe.host.replace('127.0.0.1', 'localhost');
        expectNeutral(await viewer.get(inspectOf(`${named}/x/a:1`)), `the registry ${named}`);
        nothingAsked();
    });

    it("refuses an editor's detection the same way, and still answers the rest of the evidence", async () => {
        const answer = await editor.get(detectOf(`${probe.host}/x/a:1`));
        expect(answer.status, answer.text).to.equal(200);
        expect((answer.body as { inspection: unknown }).inspection).to.equal({
            ok: false,
            error: `the registry ${probe.host} is unreachable (it does not answer, or HUB_ALLOWED_HOST_LIST does not allow it)`,
        });
        nothingAsked();
    });

    it('answers the same for an open port and a closed one', async () => {
        const closed = `127.0.0.1:${await freePort()}`;
        for (const [path, viewerAsks] of [
            [(host: string) => tagsOf(`${host}/x/b`), true],
            [(host: string) => inspectOf(`${host}/x/b:1`), true],
            [(host: string) => detectOf(`${host}/x/b:1`), false],
        ] as const) {
            const asker = viewerAsks ? viewer : editor;
            const open = await asker.get(path(probe.host));
            const shut = await asker.get(path(closed));
            expect(open.status).to.equal(shut.status);
            expect(open.text.replaceAll(probe.host, 'HOST')).to.equal(shut.text.replaceAll(closed, 'HOST'));
        }

        nothingAsked();
    });

    it('follows no redirect of a configured registry to another port', async () => {
        front.answer((_request, response) => response.writeHead(302, { location: `${secret.baseUrl}/v2/x/a/tags/list` }).end());
        for (const path of [tagsOf(`${front.host}/x/a`), inspectOf(`${front.host}/x/a:1`), inspectOf('library/redirected:1')]) {
            const answer = await viewer.get(path);
            expect(answer.status, path).to.equal(502);
            expect(answer.text).to.not.contain(SECRET);
        }

        expect(front.requests.length).to.be.above(2);
        nothingAsked();
    });

    it("refuses a configured registry's token service and blob storage on a port nobody allowed", async () => {
        front.answer((_request, response) =>
            json(response, 401, { errors: [{ code: 'UNAUTHORIZED' }] }, { 'www-authenticate': `Bearer realm="${secret.baseUrl}/token"` }),
        );
        expectNeutral(await viewer.get(inspectOf(`${front.host}/x/token:1`)), `the token service of ${front.host}`);

        // Docker Hub's images come from the configured HUB_REGISTRY_URL, which has not asked for a token.
        redirectBlobsTo(front, secret);
        expectNeutral(await viewer.get(inspectOf('library/stored:1')), 'the registry docker.io');
        nothingAsked();
    });
});

describe('deploy manager: image look-ups where HUB_ALLOWED_HOST_LIST allows them', { timeout: 300_000 }, () => {
    let registry: LocalRegistry;
    let front: FakeUpstream;
    let storage: FakeUpstream;
    let server: DeployTestServer;
    let viewer: Browser;

    before(async () => {
        registry = await startLocalRegistry({ tokenAuth: true });
        [front, storage] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
        server = await deployTestServer({ HUB_URL: 'http://127.0.0.1:9', HUB_ALLOWED_HOST_LIST: 'loopback' });
        viewer = await server.signInAs('viewer');
    });

    after(async () => {
        await server?.context.cleanup();
        await Promise.all([front?.stop(), storage?.stop(), registry?.stop()]);
    });

    it("gets a real registry's token from the service its challenge names", async () => {
        const pushed = await pushMultiPlatformImage(registry, 'team/tokened', '1');
        const answer = await viewer.get(inspectOf(`${registry.host}/team/tokened:1`));
        expect(answer.status, answer.text).to.equal(200);
        expect(answer.body).to.include({ digest: pushed.index.digest, tokenRequests: 1 });
        expect(registry.token?.requests.map((request) => request.scopes)).to.include([['repository:team/tokened:pull']]);
    });

    it('follows a blob to its storage, without the credentials, and no manifest elsewhere', async () => {
        // What the storage was asked by other tests (tag lists) is not this test's.
        storage.requests.length = 0;
        redirectBlobsTo(front, storage);
        const answer = await viewer.get(inspectOf(`${front.host}/x/stored:1`));
        expect(answer.status, answer.text).to.equal(200);
        expect((answer.body as InspectAnswer).config.env).to.equal({ FROM: 'storage' });
        expect(storage.requests).to.equal([
            { method: 'GET', path: `/v2/x/stored/blobs/${sha256(storedConfig)}`, authorization: undefined },
        ]);

        front.answer((_request, response, url) => response.writeHead(307, { location: `${storage.baseUrl}${url.pathname}` }).end());
        const moved = await viewer.get(inspectOf(`${front.host}/x/moved:1`));
        expect(moved.status, moved.text).to.equal(502);
        expect(moved.body).to.equal({ error: `the registry ${front.host} redirected its answer somewhere Gatehouse does not follow` });
        expect(storage.requests.length).to.equal(1);
    });

    it('passes on no answer that is not a registry’s', async () => {
        storage.answer((_request, response) => json(response, 200, { name: 'x/a', tags: [SECRET] }));
        const listed = await viewer.get(tagsOf(`${storage.host}/x/a`));
        expect(listed.status, listed.text).to.equal(502);
        expect(listed.body).to.equal({ error: `the registry ${storage.host} answered something that is not a tag list` });

        storage.answer((_request, response) => json(response, 404, { errors: [{ code: SECRET, message: SECRET }] }));
        const missing = await viewer.get(tagsOf(`${storage.host}/x/b`));
        expect(missing.status, missing.text).to.equal(404);
        expect(missing.text).to.not.contain(SECRET);
    });
});
